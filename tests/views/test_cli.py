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
from runhelpers import documented

from .profiles import (
    complexity_profile,
    empty_profile,
    memory_profile,
    perf_profile,
    sampling_profile,
    time_profile,
    trace_profile,
)
from .test_golden import GOLDEN

ESCAPE = re.compile(r"\x1b\[")


@pytest.fixture
def profiles(tmp_path):
    """Profiles of every kind as plain files in a directory outside any perun repository."""
    for name, make in (("time", time_profile), ("complexity", complexity_profile), ("memory", memory_profile),
                       ("sampling", sampling_profile), ("trace", trace_profile), ("perf", perf_profile),
                       ("empty", empty_profile)):
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
    (("time.perf", "bars", "--width", "70", "--height", "14"), "bars_time_default"),
    (("trace.perf", "flamegraph", "--width", "72", "--height", "7"), "flamegraph_trace_icicle"),
    (("perf.perf", "flamegraph", "--width", "72", "--height", "8"), "flamegraph_perf_icicle"),
    (("perf.perf", "bars", "-p", "subtype", "-T", "counter", "--width", "76", "--height", "16"),
     "bars_perf_counters"),
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
    (("time.perf", "heapmap"), "error: view 'heapmap' cannot show a time profile; it supports: memory; "
     "views that can show it: tableof, bars, flow, scatter"),
    (("complexity.perf", "flamegraph"), "error: view 'flamegraph' cannot show this mixed profile: it has no call "
                                        "stacks ('trace') or caller edges ('caller'); views that can show it: "
                                        "tableof, bars, flow, scatter"),
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


def test_trace_flame_graph_of_inclusive_amounts_on_request(profiles):
    result = show(profiles, "trace.perf", "flamegraph", "--of", "amount", "--format", "folded")
    assert result.returncode == 0, result.stderr
    assert "main();build();insert() 4500" in result.stdout.splitlines()
    assert sum(int(line.rsplit(" ", 1)[1]) for line in result.stdout.splitlines()) == 24_800


def test_svg_width_in_pixels(profiles):
    assert show(profiles, "memory.perf", "flamegraph", "-f", "wide.svg", "--width", "1600").returncode == 0
    assert '<svg version="1.1" width="1600"' in (profiles / "wide.svg").read_text()
    assert show(profiles, "memory.perf", "flamegraph", "-f", "plain.svg").returncode == 0
    assert '<svg version="1.1" width="1200"' in (profiles / "plain.svg").read_text()
    result = show(profiles, "memory.perf", "flamegraph", "-f", "narrow.svg", "--width", "80")
    assert result.returncode == 1
    assert result.stderr == "error: flamegraph: parameter 'width' = 80: expected a width from 200 to 8000 pixels\n"


@pytest.mark.parametrize(("args", "message"), [
    (("time.perf", "bars", "-f", "b.svg"),
     "error: bars: parameter 'filename' = 'b.svg': expected a file name ending in one of .txt, .html, .htm"),
    (("memory.perf", "flamegraph", "-f", "flame.png"),
     "error: flamegraph: parameter 'filename' = 'flame.png': expected a file name ending in one of .txt, .html, "
     ".htm, .svg, .folded, .collapsed, .json"),
    (("time.perf", "tableof", "-f", "t.xlsx"),
     "error: tableof: parameter 'filename' = 't.xlsx': expected a file name ending in one of .txt, .html, .htm, "
     ".csv, .json, .md, .markdown"),
])
def test_files_the_view_cannot_write_are_refused(profiles, args, message):
    result = show(profiles, *args)
    assert (result.returncode, result.stderr, result.stdout) == (1, message + "\n", "")
    assert not (profiles / args[-1]).exists()


def test_a_file_name_without_a_suffix_gets_plain_text(profiles):
    assert show(profiles, "memory.perf", "bars", "-b", "subtype", "-f", "plot", "--width", "70",
                "--height", "18").returncode == 0
    assert (profiles / "plot").read_text() == (GOLDEN / "bars_memory_stacked_by_subtype.txt").read_text()


def test_atomic_write_takes_a_mode_and_follows_the_umask_without(tmp_path):
    from perun_core.atomic import atomic_write, current_umask

    atomic_write(tmp_path / "store", b"object")
    atomic_write(tmp_path / "export", b"plot", mode=0o640)
    # a shared checkout's group reads the store as it reads any file a shell creates
    assert (tmp_path / "store").stat().st_mode & 0o777 == 0o666 & ~current_umask()
    assert (tmp_path / "export").stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export", "store"]


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_written_files_follow_the_umask(profiles, umask):
    previous = os.umask(umask)  # the subprocesses inherit it
    try:
        assert show(profiles, "memory.perf", "bars", "-f", "out.txt").returncode == 0
        assert show(profiles, "memory.perf", "flamegraph", "-f", "flame.svg").returncode == 0
        assert show(profiles, "time.perf", "raw", "-f", "raw.json").returncode == 0
    finally:
        os.umask(previous)
    for name in ("out.txt", "flame.svg", "raw.json"):
        assert (profiles / name).stat().st_mode & 0o777 == 0o666 & ~umask, name


def test_raw_writes_files_with_filename_and_its_old_name(profiles):
    result = show(profiles, "time.perf", "raw", "-f", "a.json")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Wrote time.perf as JSON to a.json\n"
    assert documented(profiles / "a.json") == time_profile()
    assert show(profiles, "time.perf", "raw", "--filename", "b.json", "--compact").returncode == 0
    assert (profiles / "b.json").read_text().count("\n") == 1
    assert show(profiles, "time.perf", "raw", "-o", "c.json").returncode == 0
    assert documented(profiles / "c.json") == time_profile()
    both = show(profiles, "time.perf", "raw", "-f", "d.json", "-o", "e.json")
    assert both.returncode == 2 and "give one of them" in both.stderr
    usage = show(profiles, "time.perf", "raw", "--help").stdout
    assert "-f, --filename FILE" in usage and "--output" not in usage


def test_help_is_plain_text(profiles):
    for view in ("raw", "tableof", "bars", "flow", "scatter", "flamegraph", "heapmap"):
        text = run_cli("show", "p", view, "--help", cwd=profiles, env={"COLUMNS": "100"}).stdout
        assert text.startswith("Usage:"), view
        assert not re.search(r":(func|class|meth|mod|data):|``", text), view
    flame = run_cli("show", "p", "flamegraph", "--help", cwd=profiles, env={"COLUMNS": "100"}).stdout
    items = [line.strip().split(":")[0] for line in flame.splitlines() if line.strip().startswith("* ")]
    assert items == ["* icicle", "* svg (.svg)", "* folded (.folded, .collapsed)", "* speedscope (.json)"]
    assert "Width of the output in columns (default: the terminal's); of svg in pixels (default 1200)." \
        in " ".join(flame.split())
    flow = " ".join(run_cli("show", "p", "flow", "--help", cwd=profiles, env={"COLUMNS": "100"}).stdout.split())
    assert ("-b, --by KEY Resource key whose every value gets a line of its own [default: subtype when the "
            "resources have several].") in flow
    assert "every bar" not in flow


def _y_ticks(text: str) -> list[float]:
    """The numbers labelling the y axis of a plain plot (``200┤``), from the lowest up."""
    return sorted(float(m) for m in re.findall(r"^\s*(-?[0-9.]+)┤", text, flags=re.MULTILINE))


def test_time_bars_and_flow_show_means_in_scaled_units(profiles):
    # a time profile's runs are averaged per kind of time, as the TUI shows them; the axis reads in ms
    bars = show(profiles, "time.perf", "bars", "--width", "60", "--height", "16", env={"NO_COLOR": "1"})
    assert bars.returncode == 0, bars.stderr
    assert "mean of amount per subtype (time only)" in bars.stdout and "mean(amount) [ms]" in bars.stdout
    ticks = _y_ticks(bars.stdout)
    steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:])}
    assert len(ticks) >= 3 and len(steps) == 1 and ticks[-1] > ticks[0]
    # 1, 2 or 5 times a power of ten: no 0.127 / 0.106 / 0.064 labels
    step = steps.pop()
    assert step in (1, 2, 5, 10, 20, 50, 100, 200, 500)
    # the mean real time is 575 ms: the top tick is below it and the next would be above
    assert ticks[-1] <= 575 < ticks[-1] + step
    flow = show(profiles, "time.perf", "flow", "--width", "90", "--height", "16", env={"NO_COLOR": "1"})
    assert flow.returncode == 0, flow.stderr
    assert "mean of amount through order by subtype" in flow.stdout and "mean(amount) [ms]" in flow.stdout
    assert all(name in flow.stdout for name in ("real", "user", "sys"))
    # asked for, the sum is still there
    summed = show(profiles, "time.perf", "bars", "sum", "--width", "60", "--height", "16", env={"NO_COLOR": "1"})
    assert "sum of amount per subtype" in summed.stdout and "sum(amount) [s]" in summed.stdout


@pytest.mark.parametrize("variable", ["NO_COLOR=1", "TERM=dumb"])
def test_without_colour_on_a_terminal_every_cue_stays(profiles, variable):
    """On a terminal with NO_COLOR (or a dumb one) the plots carry no colour, and tell apart by shape what colour would."""
    name, _eq, value = variable.partition("=")
    env = {name: value}
    flow = run_on_terminal(profiles, "show", "complexity.perf", "flow", "mean", "-t", "structure-unit-size", "-b",
                           "uid", "--width", "90", "--height", "20", env=env)
    assert not ESCAPE.search(flow)
    # one legend entry per uid, each with a marker of its own
    legend = re.findall(r"[│┤] (\S)\1 (\S.*?)\s{2,}", flow)
    assert len(legend) >= 2 and len({marker for marker, _name in legend}) == len(legend)
    heat = run_on_terminal(profiles, "show", "memory.perf", "heapmap", "--mode", "heat", "--width", "72",
                           "--height", "10", env=env)
    assert not ESCAPE.search(heat) and "░" in heat and "█" in heat
    assert heat.rstrip("\n").splitlines()[-1].startswith("· none  ░ 1")
    scatter = run_on_terminal(profiles, "show", "complexity.perf", "scatter", "-u", "SLList_search(SLList*, int)",
                              "--width", "90", "--height", "22", env=env)
    markers = re.findall(r"[│┤] (\S)\1 ", scatter)
    assert len(markers) >= 2 and len(set(markers)) == len(markers)  # the points and each model curve


def test_with_colour_the_series_keep_their_markers(profiles):
    """Colour is added to the shapes, it does not replace them (for eyes that do not tell the colours apart)."""
    coloured = run_on_terminal(profiles, "show", "complexity.perf", "flow", "mean", "-t", "structure-unit-size", "-b",
                               "uid", "--width", "90", "--height", "20")
    assert ESCAPE.search(coloured)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", coloured)
    legend = re.findall(r"[│┤] (\S)\1 (\S.*?)\s{2,}", plain)
    assert len(legend) >= 2 and len({marker for marker, _name in legend}) == len(legend)


def test_tableof_writes_every_measured_value_with_its_unit(profiles):
    """A time profile mixes seconds (time rows) and bytes (max_rss rows): each amount carries its own unit."""
    table = show(profiles, "time.perf", "tableof", "-k", "subtype", "-k", "amount", "-n", "4",
                 env={"COLUMNS": "80", "LINES": "24"})
    assert table.returncode == 0, table.stderr
    rows = [line.split() for line in table.stdout.splitlines()[2:6]]
    assert rows == [["real", "510.0", "ms"], ["user", "310.0", "ms"], ["sys", "110.0", "ms"], ["max_rss", "5.00", "MiB"]]
    records = json.loads(show(profiles, "time.perf", "tableof", "-k", "amount", "-n", "4", "--format", "json").stdout)
    assert [(r["amount"], r["unit"]) for r in records] == [(0.51, "s"), (0.31, "s"), (0.11, "s"), (5246976, "B")]


def test_stacked_bars_give_a_part_below_half_a_row_no_row_of_its_own(profiles):
    """0.5 ms of sys under about 300 ms of user: the bottom row belongs to user, sys is still in the legend."""
    profile = time_profile()
    resources = profile["snapshots"][0]["resources"]
    resources[:] = [r for r in resources if r["subtype"] in ("user", "sys")]
    for resource in resources:
        if resource["subtype"] == "sys":
            resource["amount"] = 0.0005
    (profiles / "tiny.perf").write_text(json.dumps(profile))
    result = show(profiles, "tiny.perf", "bars", "--per", "order", "--by", "subtype",
                  env={"COLUMNS": "70", "LINES": "20"})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    legend = {line.split()[-2]: line.split()[-3][0] for line in lines if line.rstrip("│ ").endswith(("user", "sys"))}
    bottom = next(line for line in lines if line.lstrip().startswith("0┤"))
    assert set(legend) == {"user", "sys"} and legend["sys"] not in bottom and legend["user"] in bottom


def test_show_gives_a_mixed_profile_the_tuis_groups_by_default(profiles):
    # 'show 0@i bars' of a trace profile drew one bar of everything summed ('sum of amount per snapshots') where
    # the TUI's b drew one per function: both now take the core's defaults by profile type
    from perun_core import api

    bars = show(profiles, "trace.perf", "bars", "--width", "80", "--height", "16", env={"NO_COLOR": "1"})
    assert bars.returncode == 0, bars.stderr
    assert "sum of amount per uid" in bars.stdout and "per snapshots" not in bars.stdout
    assert api.type_defaults("bars", "mixed") == {"func": "sum", "per": "uid"}
    explicit = show(profiles, "trace.perf", "bars", "--per", "snapshots", "--width", "80", "--height", "16")
    assert "per snapshots" in explicit.stdout  # what the user asks for still wins
