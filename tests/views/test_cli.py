"""``perun-core show PROFILE VIEW`` as a user runs it (subprocesses)."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli, write_pending

from .profiles import complexity_profile, empty_profile, memory_profile, sampling_profile, time_profile
from .test_golden import GOLDEN

ESCAPE = re.compile(r"\x1b\[")


@pytest.fixture
def profiles(tmp_path):
    """Profiles of every kind as plain files in a directory outside any perun repository."""
    for name, make in (("time", time_profile), ("complexity", complexity_profile), ("memory", memory_profile),
                       ("sampling", sampling_profile), ("empty", empty_profile)):
        (tmp_path / f"{name}.perf").write_text(json.dumps(make()))
    return tmp_path


def show(where: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_cli("show", *args, cwd=where, env=env)


def run_on_terminal(where: Path, *args: str, env: dict | None = None) -> str:
    """Output of perun-core with its stdout on a pseudo-terminal of 100 x 30."""
    import fcntl
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    full_env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    full_env.update(env or {})
    process = subprocess.Popen([sys.executable, "-m", "perun_core.cli.main", *args], cwd=where, env=full_env,
                               stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=60)
    os.close(master)
    assert process.returncode == 0, process.stderr.read()
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


@pytest.mark.parametrize(("args", "golden"), [
    (("time.perf", "tableof"), "tableof_time"),
    (("memory.perf", "bars", "--by", "subtype", "--width", "70", "--height", "18"), "bars_memory_stacked_by_subtype"),
    (("memory.perf", "bars", "-b", "subtype", "-g", "--width", "70", "--height", "18"),
     "bars_memory_grouped_by_subtype"),
    (("complexity.perf", "bars", "max", "-p", "uid", "-xl", "function", "-gt", "Slowest call", "--width", "70",
      "--height", "16"), "bars_complexity_max_per_uid"),
    (("memory.perf", "flow", "-b", "subtype", "--accumulate", "-s", "--width", "70", "--height", "18"),
     "flow_memory_accumulated_stacked"),
    (("complexity.perf", "scatter", "--width", "76", "--height", "22"), "scatter_complexity"),
    (("complexity.perf", "scatter", "-u", "SLList_search(SLList*, int)", "--model", "quadratic", "--model",
      "regressogram", "--width", "76", "--height", "22"), "scatter_complexity_search_filtered"),
    (("memory.perf", "flamegraph", "--width", "80", "--height", "12"), "flamegraph_memory_icicle"),
    (("memory.perf", "flamegraph", "--format", "folded"), "flamegraph_memory_folded"),
    (("memory.perf", "heapmap", "--width", "72", "--height", "10"), "heapmap_memory"),
    (("memory.perf", "heapmap", "--mode", "heat", "--width", "72", "--height", "10"), "heapmap_memory_heat"),
    (("complexity.perf", "tableof", "--format", "csv", "-n", "5"), "tableof_complexity_csv"),
])
def test_cli_prints_what_the_core_renders(profiles, args, golden):
    result = show(profiles, *args, env={"COLUMNS": "80", "LINES": "24"})
    assert result.returncode == 0, result.stderr
    assert result.stdout == (GOLDEN / f"{golden}.txt").read_text(encoding="utf-8")
    assert result.stderr == ""


def test_terminal_size_is_the_default_size(profiles):
    result = show(profiles, "time.perf", "bars", "-p", "subtype", env={"COLUMNS": "50", "LINES": "15"})
    lines = result.stdout.splitlines()
    assert len(lines) == 14 and max(map(len, lines)) <= 50


def test_colour_on_a_terminal_unless_no_color(profiles):
    coloured = run_on_terminal(profiles, "show", "memory.perf", "bars", "-b", "subtype")
    assert "\x1b[38;2;" in coloured
    assert len(coloured.splitlines()) == 29  # the terminal's 30 rows, one left for the prompt
    plain = run_on_terminal(profiles, "show", "memory.perf", "bars", "-b", "subtype", env={"NO_COLOR": "1"})
    assert not ESCAPE.search(plain)
    assert "sum of amount per snapshots by subtype" in plain


def test_raw_is_highlighted_on_a_terminal_only(profiles):
    coloured = run_on_terminal(profiles, "show", "time.perf", "raw")
    assert ESCAPE.search(coloured)
    assert json.loads(re.sub(r"\x1b\[[0-9;]*m", "", coloured)) == time_profile()
    assert not ESCAPE.search(run_on_terminal(profiles, "show", "time.perf", "raw", env={"NO_COLOR": "1"}))
    piped = show(profiles, "time.perf", "raw")
    assert json.loads(piped.stdout) == time_profile() and not ESCAPE.search(piped.stdout)


def test_files_by_suffix(profiles):
    for name in ("out.txt", "out.html", "flame.svg", "flame.speedscope.json", "flame.folded", "table.md"):
        assert not (profiles / name).exists()
    assert show(profiles, "memory.perf", "bars", "-b", "subtype", "-f", "out.txt", "--width", "70",
                "--height", "18").returncode == 0
    text = (profiles / "out.txt").read_text()
    assert text == (GOLDEN / "bars_memory_stacked_by_subtype.txt").read_text()
    result = show(profiles, "memory.perf", "bars", "-f", "out.html", "--width", "70", "--height", "18")
    assert result.stdout == "Wrote bars of memory.perf to out.html\n"
    html = (profiles / "out.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "<title>bars: memory.perf</title>" in html
    assert "color: #" in html and "\x1b" not in html
    assert show(profiles, "memory.perf", "flamegraph", "-f", "flame.svg").returncode == 0
    assert (profiles / "flame.svg").read_text().startswith("<?xml")
    assert show(profiles, "memory.perf", "flamegraph", "-f", "flame.speedscope.json").returncode == 0
    assert json.loads((profiles / "flame.speedscope.json").read_text())["profiles"][0]["type"] == "sampled"
    assert show(profiles, "memory.perf", "flamegraph", "-f", "flame.folded").returncode == 0
    assert (profiles / "flame.folded").read_text() == (GOLDEN / "flamegraph_memory_folded.txt").read_text()
    assert show(profiles, "memory.perf", "tableof", "-f", "table.md").returncode == 0
    assert (profiles / "table.md").read_text().startswith("| snapshots | type |")


def test_registered_and_pending_profiles(perun_repo):
    root, shas = perun_repo
    write_pending(root, "complexity.perf", {"origin": shas[-1], **complexity_profile()})
    result = run_cli("show", "0@p", "scatter", "-u", "SLList_search(SLList*, int)", "--width", "76", "--height", "22",
                     "--model", "quadratic", "--model", "regressogram", cwd=root)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (GOLDEN / "scatter_complexity_search_filtered.txt").read_text()
    assert run_cli("add", "0@p", cwd=root).returncode == 0
    result = run_cli("show", "0@i", "tableof", "models", "-k", "model", "-n", "1", cwd=root)
    assert result.stdout.splitlines()[:3] == ["model", "────────", "constant"]


@pytest.mark.parametrize(("args", "message"), [
    (("time.perf", "bars", "--of", "amout"),
     "error: bars: parameter 'of' = 'amout': expected a numeric resource key: amount, order"),
    (("time.perf", "scatter", "-p", "order", "-o", "uid"),
     "error: scatter: parameter 'of' = 'uid': expected a numeric resource key: amount, order"),
    (("time.perf", "heapmap"), "error: view 'heapmap' cannot show a time profile; it supports: memory"),
    (("complexity.perf", "flamegraph"), "error: view 'flamegraph' cannot show this mixed profile: its resources carry "
                                        "no call traces ('trace'); flame graphs need memory, trace or sampling "
                                        "profiles with traces"),
    (("empty.perf", "bars"), "error: view 'bars': the profile has no resources to show; it needs at least one"),
    (("empty.perf", "tableof"), "error: view 'tableof': the profile has no resources to show; it needs at least one"),
    (("memory.perf", "heapmap", "-s", "7"),
     "error: heapmap: parameter 'snapshot' = 7: expected a snapshot number from 0 to 2"),
])
def test_wrong_inputs_get_one_line_errors(profiles, args, message):
    result = show(profiles, *args)
    assert result.returncode == 1
    assert result.stderr == message + "\n"
    assert result.stdout == ""


def test_unknown_view_names_the_known_ones(profiles):
    result = show(profiles, "time.perf", "pie")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "error: unknown view 'pie'; known: bars, flamegraph, flow, heapmap, raw, scatter, tableof"]


def test_bad_option_values_are_usage_errors(profiles):
    result = show(profiles, "time.perf", "bars", "avg")
    assert result.returncode == 2 and result.stderr.startswith("error: Invalid value for '[sum|count|mean|median|min|max]'")
    result = show(profiles, "time.perf", "bars", "--width", "3")
    assert result.returncode == 2 and "--width" in result.stderr
