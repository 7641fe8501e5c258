"""The perun-core CLI as a user runs it: subprocesses in real git repositories."""

from __future__ import annotations

import concurrent.futures
import json
import re
import zlib
from pathlib import Path

import pytest

from conftest import run_cli, time_profile, write_pending


def snapshot_tree(root: Path) -> dict[str, bytes]:
    """Every file under root (including .perun and .git) with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_new_user_flow(perun_repo):
    root, shas = perun_repo
    head = shas[-1]
    write_pending(root, "time-ls.perf", time_profile(head))

    status = run_cli("--no-pager", "status", cwd=root)
    assert status.returncode == 0, status.stderr
    assert "0@p" in status.stdout and "ls" in status.stdout

    added = run_cli("add", "0@p", cwd=root)
    assert added.returncode == 0, added.stderr
    assert not (root / ".perun/jobs/time-ls.perf").exists()
    objects = [p for p in (root / ".perun/objects").rglob("*") if p.is_file() and p.name != head[2:]]
    assert len(objects) == 1
    raw = zlib.decompress(objects[0].read_bytes())
    header, content = raw.split(b"\0", 1)
    assert header == b"profile time %d" % len(content)
    json.loads(content)

    status = run_cli("--no-pager", "status", cwd=root)
    assert "0@i" in status.stdout and "0@p" not in status.stdout

    log = run_cli("--no-pager", "log", "-s", cwd=root)
    assert log.returncode == 0, log.stderr
    lines = log.stdout.splitlines()
    assert any(head[:6] in line and "1|0|0|1 profiles" in line for line in lines)
    assert any(shas[0][:6] in line and "---no--profiles---" in line for line in lines)

    shown = run_cli("show", "0@i", "raw", cwd=root)
    assert shown.returncode == 0, shown.stderr
    expected = time_profile(head)  # a registered profile names the commit it is registered at
    assert json.loads(shown.stdout) == expected

    removed = run_cli("rm", "0@i", cwd=root)
    assert removed.returncode == 0, removed.stderr
    assert objects[0].exists()  # the object is kept
    assert "0@i" not in run_cli("--no-pager", "status", cwd=root).stdout


def test_profile_of_another_commit_is_refused(perun_repo):
    root, shas = perun_repo
    path = write_pending(root, "old.perf", time_profile(shas[0]))
    result = run_cli("add", "old.perf", cwd=root)
    assert result.returncode == 1
    assert shas[0] in result.stderr and shas[1] in result.stderr
    assert "Traceback" not in result.stderr
    assert path.exists()
    # its tag is the repository's (as the original's): at HEAD it is refused the same way, naming both commits
    at_head = run_cli("add", "0@p", cwd=root)
    assert at_head.returncode == 1 and shas[0] in at_head.stderr and path.exists()
    assert run_cli("add", "-m", "HEAD~1", "0@p", cwd=root).returncode == 0


def test_version_log_graph_and_short_log(perun_repo):
    root, shas = perun_repo
    result = run_cli("--no-pager", "log", cwd=root)
    assert result.returncode == 0
    assert f"Minor Version {shas[1]}" in result.stdout and "second" in result.stdout


def error_cases(root: Path, shas: list[str]):
    jobs = root / ".perun" / "jobs"
    return {
        "malformed json": (lambda: write_pending(root, "bad.perf", '{"header": '), ["add", "0@p"], "bad.perf"),
        "no header.type": (lambda: write_pending(root, "notype.perf", {"origin": shas[1], "header": {}}),
                           ["add", "0@p"], "header.type"),
        "tag out of range": (lambda: [write_pending(root, f"p{i}.perf", time_profile(shas[1])) for i in range(2)],
                             ["add", "7@p"], "7@p"),
        "bad revision": (lambda: None, ["log", "nonexistent-rev"], "nonexistent-rev"),
        "bad yaml": (lambda: (root / ".perun/local.yml").write_text("vcs: [unclosed\n"), ["status"], "local.yml"),
        "unknown profile": (lambda: None, ["show", "nothing-here", "raw"], "nothing-here"),
        "bad sort key": (lambda: None, ["status", "--sort-by", "colour"], "colour"),
    }


@pytest.mark.parametrize("case", ["malformed json", "no header.type", "tag out of range", "bad revision",
                                  "bad yaml", "unknown profile", "bad sort key"])
def test_bad_input_gives_one_line_error_and_changes_nothing(perun_repo, case):
    root, shas = perun_repo
    prepare, args, needle = error_cases(root, shas)[case]
    prepare()
    before = snapshot_tree(root)
    result = run_cli("--no-pager", *args, cwd=root)
    assert result.returncode != 0
    assert result.stderr.startswith("error: ")
    assert needle in result.stderr.splitlines()[0]
    assert "Traceback" not in result.stderr
    after = snapshot_tree(root)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k) and "/cache/" not in k}
    assert changed == set()


def test_outside_a_repository(tmp_path):
    result = run_cli("status", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines()[0].startswith("error: not a perun repository")


def test_corrupted_object_and_truncated_index(perun_repo):
    root, shas = perun_repo
    write_pending(root, "a.perf", time_profile(shas[1]))
    assert run_cli("add", "0@p", cwd=root).returncode == 0
    index = root / ".perun/objects" / shas[1][:2] / shas[1][2:]
    obj = next(p for p in (root / ".perun/objects").rglob("*") if p.is_file() and p != index)
    data = bytearray(obj.read_bytes())
    data[len(data) // 2] ^= 0x01
    obj.write_bytes(bytes(data))
    shown = run_cli("show", "0@i", "raw", cwd=root)
    assert shown.returncode == 1 and obj.name in shown.stderr and "Traceback" not in shown.stderr
    # status still lists everything, marks the damaged profile and fails with its name
    status = run_cli("--no-pager", "status", cwd=root)
    assert status.returncode == 1 and "0@i" in status.stdout and "corrupt object" in status.stdout
    assert status.stderr.startswith("error: corrupt object") and obj.name in status.stderr
    assert "Traceback" not in status.stderr
    index.write_bytes(index.read_bytes()[:-5])
    status = run_cli("--no-pager", "status", cwd=root)
    assert status.returncode == 1 and "corrupt index" in status.stderr
    log = run_cli("--no-pager", "log", "-s", "HEAD~1", cwd=root)
    assert log.returncode == 0


def test_eight_concurrent_adds(perun_repo):
    root, shas = perun_repo
    for i in range(8):
        write_pending(root, f"p{i}.perf", time_profile(shas[1], cmd=f"cmd{i}"))
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: run_cli("add", f"p{i}.perf", cwd=root), range(8)))
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    status = run_cli("--no-pager", "status", cwd=root).stdout
    assert all(f"{i}@i" in status for i in range(8))
    assert all(f"cmd{i}" in status for i in range(8))


def test_init_in_plain_directory_creates_git(tmp_path):
    target = tmp_path / "fresh"
    result = run_cli("init", str(target), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (target / ".git").is_dir()
    for sub in ("jobs", "objects", "logs", "cache"):
        assert (target / ".perun" / sub).is_dir()
    again = run_cli("init", str(target), cwd=tmp_path)
    assert "Reinitialized" in again.stdout


def test_config_get_set(perun_repo):
    root, _ = perun_repo
    assert run_cli("config", "set", "format.shortlog", "| %checksum:6% | %stats% |", cwd=root).returncode == 0
    got = run_cli("config", "get", "format.shortlog", cwd=root)
    assert got.stdout.strip() == "format.shortlog: | %checksum:6% | %stats% |"
    assert "| " in run_cli("--no-pager", "log", "-s", cwd=root).stdout
    bad = run_cli("config", "set", "general.paging", "sometimes", cwd=root)
    assert bad.returncode == 1 and "general.paging" in bad.stderr
    shared = run_cli("config", "--shared", "set", "general.editor", "nano", cwd=root)
    assert shared.returncode == 0, shared.stderr
    assert run_cli("config", "--shared", "get", "general.editor", cwd=root).stdout.strip() == "general.editor: nano"


def test_show_raw_works_on_a_plain_file_outside_a_repository(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(time_profile("a" * 40)))
    result = run_cli("show", str(path), "raw", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["origin"] == "a" * 40


def test_usage_error_exit_code(tmp_path):
    result = run_cli("status", "--bogus", cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.startswith("error: ")


def test_broken_local_config_can_be_repaired(perun_repo):
    root, _ = perun_repo
    local = root / ".perun/local.yml"
    local.write_text("vcs: [unclosed\n")
    assert run_cli("--no-pager", "status", cwd=root).returncode == 1
    # the editor (here a script that fixes the file) opens even though the file does not parse
    fixer = root.parent / "fix.sh"
    fixer.write_text("#!/bin/sh\nprintf 'vcs:\\n  type: git\\n  url: .\\n' > \"$1\"\n")
    fixer.chmod(0o755)
    edited = run_cli("config", "edit", cwd=root, env={"EDITOR": str(fixer)})
    assert edited.returncode == 0, edited.stderr
    assert run_cli("--no-pager", "status", cwd=root).returncode == 0
    local.write_text("vcs: [unclosed\n")
    reset = run_cli("config", "reset", cwd=root)
    assert reset.returncode == 0, reset.stderr
    assert run_cli("--no-pager", "status", cwd=root).returncode == 0


def test_editor_leaving_invalid_yaml_is_reported(perun_repo):
    root, _ = perun_repo
    result = run_cli("config", "edit", cwd=root, env={"EDITOR": "sh -c 'echo \"bad: [\" >> \"$0\"'"})
    assert result.returncode == 1 and "local.yml" in result.stderr and "line" in result.stderr


def test_log_counts_profiles_past_the_first_few_hundred_commits(tmp_path):
    # past 256 commits log stops testing index files one by one and lists the object store once
    from gitrepo import fast_linear_history

    from perun_core import api

    root = tmp_path / "long"
    shas = fast_linear_history(root, 400)
    api.init(root)
    for sha in (shas[0], shas[1], shas[-1]):
        write_pending(root, f"{sha[:7]}.perf", time_profile(sha))
        api.add([f"{sha[:7]}.perf"], minor=sha, cwd=root)
    counts = {e.version.checksum: e.counts.total for e in api.log(cwd=root)}
    assert len(counts) == 400
    assert {sha for sha, total in counts.items() if total} == {shas[0], shas[1], shas[-1]}
    short = run_cli("--no-pager", "log", "-s", cwd=root).stdout.splitlines()
    assert sum("1|0|0|1 profiles" in line for line in short) == 3


def test_a_group_called_without_its_command_names_the_commands_it_expects(tmp_path):
    result = run_cli("show", "0@i", cwd=tmp_path)
    assert result.returncode == 2
    first = result.stderr.splitlines()[0]
    assert first.startswith("error: perun-core show: missing a command") and "raw, scatter, tableof" in first


def test_a_directory_given_as_a_profile_is_named_as_a_directory(tmp_path):
    (tmp_path / "profile.json").mkdir()
    result = run_cli("show", "profile.json", "raw", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines() == ["error: profile.json: is a directory; expected a profile file (JSON)"]


def test_an_add_stopped_half_way_leaves_every_tag_naming_its_profile(perun_repo, monkeypatch):
    """Killed after the first of two profiles was registered, ``add 0@p 1@p`` used to leave the second
    pending as 0@p: the same command run again would then register nothing new for 1@p (or fail).  Now
    the pending files go only once all are registered, and running the same add again finishes the job."""
    from perun_core import api
    from perun_core.storage.repository import PerunRepository

    root, shas = perun_repo
    write_pending(root, "a.perf", time_profile(shas[1], cmd="first"))
    write_pending(root, "b.perf", time_profile(shas[1], cmd="second"))
    register = PerunRepository.register
    calls = []

    def stopped_at_the_second(self, *args, **kwargs):
        calls.append(args)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return register(self, *args, **kwargs)

    monkeypatch.setattr(PerunRepository, "register", stopped_at_the_second)
    with pytest.raises(KeyboardInterrupt):
        api.add(["0@p", "1@p"], cwd=root)
    monkeypatch.undo()
    assert sorted(p.name for p in (root / ".perun" / "jobs").glob("*.perf")) == ["a.perf", "b.perf"]
    again = run_cli("add", "0@p", "1@p", cwd=root)
    assert again.returncode == 0, again.stderr
    status = run_cli("--no-pager", "status", cwd=root)
    assert "0@i" in status.stdout and "1@i" in status.stdout and "2@i" not in status.stdout, status.stdout
    assert "first" in status.stdout and "second" in status.stdout
    assert list((root / ".perun" / "jobs").glob("*.perf")) == []


def test_every_help_text_fits_80_columns(tmp_path):
    """``--help`` of perun-core and of each command on a terminal of 80 columns: no line wider (the diff's list
    of views and the exit code of input errors were 100 and 90 wide, past the edge of the terminal)."""
    from perun_core.cli.main import LAZY_COMMANDS

    commands = [(), *((name,) for name in ("status", "log", "show", "add", "rm", "init", "config", *LAZY_COMMANDS)),
                ("check", "head"), ("check", "profiles")]

    def widest(command: tuple[str, ...]) -> tuple[int, str]:
        done = run_cli(*command, "--help", cwd=tmp_path, env={"COLUMNS": "80"})
        assert done.returncode == 0, (command, done.stderr)
        return max((len(line), line) for line in done.stdout.splitlines())

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for command, (width, line) in zip(commands, pool.map(widest, commands)):
            assert width <= 80, (command, line)


def test_status_tables_fit_the_terminal(perun_repo):
    """At 80 columns the demo's rows of profiles were 84 wide (the default format's seven columns, one of them
    the empty args): a column with nothing in any row goes, then the seconds of the time, then the widest are
    cut with an ellipsis (the time is kept to the minute)."""
    root, _shas = perun_repo
    command = "./build/release/benchmarks/a-benchmark-with-a-long-name"
    write_pending(root, "one.perf", time_profile(None, cmd=command, args="", workload="1000"))
    for columns in (80, 70):
        done = run_cli("status", cwd=root, env={"COLUMNS": str(columns), "NO_COLOR": "1"})
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        table = [line for line in lines if "┃" in line or line.strip().startswith("id ")]
        assert table and max(len(line) for line in table) <= columns, done.stdout
        header = next(line for line in lines if line.strip().startswith("id "))
        assert "args" not in header.split() and "cmd" in header.split(), header
        row = next(line for line in lines if line.strip().startswith("0@p"))
        assert "…" in row and "1000" in row and re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", row), row
    wide = run_cli("status", cwd=root, env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert command in wide.stdout and "args" in wide.stdout


def test_log_puts_a_pending_file_under_its_profile_when_the_line_is_too_wide(perun_repo):
    """'0@p [time] ./sll-bench  6000 (time) pending: time-sll-bench-6000-2026-11-28-00-24-45.perf' was 95
    columns wide at 80: the file goes on the line under it, under the profile's type."""
    root, shas = perun_repo
    name = "time-long-bench-6000-2026-11-28-00-24-45.perf"
    write_pending(root, name, time_profile(shas[1], cmd="./a-benchmark-with-a-long-name", workload="6000"))
    done = run_cli("log", cwd=root, env={"COLUMNS": "80", "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines if "pending" in line or "0@p" in line) <= 80, done.stdout
    at = next(i for i, line in enumerate(lines) if "0@p [time]" in line)
    assert lines[at + 1].strip("| ") == f"pending: {name}"
    assert lines[at + 1].index("pending") == lines[at].index("[time]")
    wide = run_cli("log", cwd=root, env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert f"(time) pending: {name}" in wide.stdout


def test_log_short_shortens_a_message_to_the_terminal_width(tmp_path):
    """'log --short' cut messages at 50 characters, then added the marks of the changes: 82 columns at 80."""
    from gitrepo import make_repo

    root = tmp_path / "project"
    message = "Keep a tail pointer again: appending was quadratic in the length of the list"
    make_repo(root, [{"files": {"a.txt": "one\n"}, "message": message}])
    assert run_cli("init", cwd=root).returncode == 0
    for columns in (80, 40):
        done = run_cli("log", "--short", cwd=root, env={"COLUMNS": str(columns), "NO_COLOR": "1"})
        assert done.returncode == 0, done.stderr
        line = next(line for line in done.stdout.splitlines() if "Keep a" in line)
        assert len(line) <= columns and line.rstrip().endswith("…"), line


def test_status_and_log_give_every_time_with_its_zone(tmp_path):
    """A commit reads as in git (its own zone, named) and a profile's time names the viewer's zone, as in the TUI."""
    from gitrepo import make_repo

    from perun_core import api

    root = tmp_path / "project"
    make_repo(root, [{"files": {"a.txt": "one\n"}, "message": "first", "time": 1714701600, "tz": 3600}])
    api.init(root)
    write_pending(root, "p.perf", time_profile(None))
    india = {"TZ": "Asia/Kolkata", "COLUMNS": "200"}
    status = run_cli("--no-pager", "status", cwd=root, env=india)
    assert status.returncode == 0, status.stderr
    assert "Author:  Perun Tester <tester@example.com>  2024-05-03 03:00:00 +0100" in status.stdout, status.stdout
    # the rows' one zone is said once, in the header of their times
    assert re.search(r"collector +time \+0530\n.*┃ \d{4}-\d\d-\d\d \d\d:\d\d:\d\d ┃", status.stdout), status.stdout
    narrow = run_cli("--no-pager", "status", cwd=root, env={**india, "COLUMNS": "60"})
    assert re.search(r"time \+0530\n.*┃ \d{4}-\d\d-\d\d \d\d:\d\d ┃", narrow.stdout), narrow.stdout
    log = run_cli("--no-pager", "log", cwd=root, env=india)
    assert "2024-05-03 03:00:00 +0100" in log.stdout, log.stdout
    short = run_cli("--no-pager", "config", "set", "format.shortlog", "%checksum:7% %date% %desc%", cwd=root)
    assert short.returncode == 0, short.stderr
    assert "2024-05-03 03:00:00 +0100 first" in run_cli("--no-pager", "log", "-s", cwd=root, env=india).stdout


def test_the_long_log_says_what_each_profile_count_is(perun_repo):
    """'Profiles: 1|0|0|1 profiles' gave no clue which number was which."""
    root, shas = perun_repo
    write_pending(root, "time-ls.perf", time_profile(shas[-1]))
    assert run_cli("add", "0@p", cwd=root).returncode == 0
    log = run_cli("--no-pager", "log", cwd=root)
    assert log.returncode == 0, log.stderr
    assert "Profiles: 1|0|0|1 profiles (all|memory|mixed|time)" in log.stdout
    assert "---no--profiles---" in log.stdout and "---no--profiles--- (" not in log.stdout


def test_a_long_result_line_fits_the_terminal_and_keeps_a_path_whole(monkeypatch):
    # bisect's 'against its parent: ...' lines were 108 columns at 80
    from perun_core.cli.terminal import fit_to_terminal

    monkeypatch.setenv("COLUMNS", "40")
    path = "/tmp/a/very/long/directory/name/that/is/longer/than/a/line/findings/w1.txt"
    lines = fit_to_terminal(f"  against its parent: Degradation at ./app [real]: 165.5 ms -> 674.6 ms "
                            f"(+308%) in {path}").splitlines()
    assert lines[0].startswith("  against") and all(line.startswith("    ") for line in lines[1:])
    assert all(len(line) <= 40 for line in lines if line.strip() != path) and f"    {path}" in lines
    assert "165.5 ms" in "\n".join(lines)  # an amount keeps its unit


def test_the_check_tree_wraps_by_the_one_rule_of_amounts_and_units():
    # the CLI's wrapper had its own copy of the rule, which let '100 %' break between number and sign
    from perun_core.cli.terminal import wrap_segments

    for width in range(12, 40):
        lines = wrap_segments([("  ", ""), ("the change is 100 % of it, 3.2 ms in '$ ./app 5'", "")], width)
        text = ["".join(part for part, _style in line) for line in lines]
        assert not any(line.rstrip().endswith(("100", "3.2", "'$")) for line in text), (width, text)


def test_bisect_progress_lines_fit_the_terminal(monkeypatch, capsys):
    # '  5a817b2 is bad (stored profiles, at 1.21 of the way to BAD, p=0.0003); 1 left to test' was 87 columns
    from perun_core import api
    from perun_core.cli.bisect_cmds import _progress

    monkeypatch.setenv("COLUMNS", "60")
    step = api.BisectStep("5a817b2" + "0" * 33, "bad", True, position=1.21, p_value=0.0003)
    _progress(0)(api.BisectTested(step, 1))
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("  5a817b2 is bad (stored profiles,") and len(lines) == 2
    assert all(len(line) <= 60 for line in lines), lines
