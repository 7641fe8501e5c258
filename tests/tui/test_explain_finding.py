"""Pilot test of `x` on a finding: the functions responsible for its change, collected in a worker."""

from __future__ import annotations

from pathlib import Path

from gitrepo import make_repo
from textual.widgets import DataTable, OptionList, Static

from perun_core import api
from perun_tui.app import PerunApp
from perun_tui.modals.explain import KEYS_HINT, NO_FLAME, SHORT_KEYS_HINT, ExplainScreen
from perun_tui.modals.source import SourceScreen, viewers
from perun_tui.screens.check import CheckScreen

from check.test_explain import PY_PROGRAM, PY_SLOW, PY_WORKLOAD
from .helpers import Recorder, checked, settle, wait_until


def _text(screen: ExplainScreen) -> str:
    """The headline and the ranked functions (one option each) of the explanation."""
    functions = screen.query_one("#explain-functions", OptionList)
    return "\n".join([str(screen.query_one("#explain-text", Static).render()),
                      *(str(functions.get_option_at_index(i).prompt) for i in range(functions.option_count))])


def _python_project(root):
    """The Python program whose lookup became a list scan, at two commits, checked (time profiles collected)."""
    shas = make_repo(root, [{"files": {"prog.py": PY_PROGRAM}, "message": "v1: dict lookup"},
                            {"files": {"prog.py": PY_SLOW}, "message": "v2: list scan"}])
    api.init(root)
    for key, value in {"cmds": ["python3 prog.py"], "workloads": [PY_WORKLOAD],
                       "collectors": [{"name": "time", "params": {"warmup": 1, "repeat": 5}}]}.items():
        api.config_set(key, value, scope="local", cwd=root)
    api.check_head(compute_missing=True, cwd=root)
    return shas


async def test_x_on_a_degradation_names_the_function_responsible(tmp_path):
    root = tmp_path / "pyproject"
    _python_project(root)
    app = PerunApp(root)
    async with app.run_test(size=(120, 34)) as pilot:
        screen, modal = await _open_explanation(app, pilot)
        await wait_until(pilot, lambda: "explained by" in _text(modal), timeout=60)
        assert "1. lookup (prog.py:7)" in _text(modal)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen


def _recording_editor(tmp_path, monkeypatch, variable="EDITOR"):
    """$EDITOR (or $PAGER): a script that appends its arguments (one JSON list a call) to a file, and the text
    of the file it was given and whether any write permission bit was set on it to ``<calls>-files``."""
    import stat
    import sys

    calls = tmp_path / f"{variable.lower()}-calls"
    editor = tmp_path / f"record-{variable.lower()}"
    editor.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                      f"open({str(calls)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
                      f"seen = [open(sys.argv[-1]).read(), bool(os.stat(sys.argv[-1]).st_mode & 0o222)]\n"
                      f"open({str(calls) + '-files'!r}, 'a').write(json.dumps(seen) + '\\n')\n")
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv(variable, str(editor))
    return calls


def _calls(path):
    import json

    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _seen(calls):
    """(text, writable) of the file each call was given."""
    return [tuple(seen) for seen in _calls(calls.with_name(calls.name + "-files"))]


async def _open_explanation(app, pilot):
    await settle(pilot)
    await pilot.press("c")
    screen = app.screen
    assert isinstance(screen, CheckScreen)
    await wait_until(pilot, lambda: screen.query_one("#check-findings", DataTable).row_count > 0, timeout=30)
    table = screen.query_one("#check-findings", DataTable)
    row = next(r for r in range(table.row_count)
               if screen.rows[int(table.coordinate_to_cell_key((r, 0)).row_key.value)][2].result.value
               == "Degradation")
    table.move_cursor(row=row)
    await pilot.press("x")
    await settle(pilot)
    assert isinstance(app.screen, ExplainScreen)
    return screen, app.screen


async def test_enter_opens_the_function_and_a_stored_explanation_needs_no_collection(tmp_path, monkeypatch):
    import contextlib

    root = tmp_path / "pyproject"
    shas = _python_project(root)
    calls = _recording_editor(tmp_path, monkeypatch)
    app = PerunApp(root)
    monkeypatch.setattr(app, "suspend", contextlib.nullcontext)  # headless: nothing to hand over
    recorder = Recorder()
    async with app.run_test(size=(120, 40), message_hook=recorder) as pilot:
        _screen, modal = await _open_explanation(app, pilot)
        await wait_until(pilot, lambda: modal.explanation is not None, timeout=90)
        assert "1. lookup (prog.py:7)" in _text(modal)
        # cProfile's caller edges make the difference flame graph (stacks rebuilt from who called whom)
        flame = str(modal.query_one("#explain-flame", Static).render())
        assert flame.startswith("Difference flame graph:") and "prog.py" in flame and NO_FLAME not in flame
        # the working tree holds the fixed code: enter shows the code of the explained commit, read from git
        (root / "prog.py").write_text("# fixed again\n" + PY_PROGRAM)
        target = modal.commit
        assert target == shas[-1]
        await pilot.press("enter")  # the first function is highlighted
        await settle(pilot)
        [(line, copy)] = _calls(calls)
        assert line == "+7" and Path(copy).name == f"prog@{target[:7]}.py"
        assert _seen(calls) == [(PY_SLOW, False)]  # the target's code, in a read-only copy
        assert not Path(copy).exists()  # removed once the editor returned
        assert any(f"prog.py at {target[:7]} shown in record-editor" in note for note in recorder.notes())

    # the explanation was stored with the check: a new session shows it without collecting anything
    def no_collection(*args, **kwargs):
        raise AssertionError("explained again instead of showing the stored explanation")

    monkeypatch.setattr(api, "explain", no_collection)
    app = PerunApp(root)
    async with app.run_test(size=(120, 40)) as pilot:
        _screen, modal = await _open_explanation(app, pilot)
        await wait_until(pilot, lambda: modal.explanation is not None, timeout=30)
        assert "1. lookup (prog.py:7)" in _text(modal) and modal.lines == []


def _perf_profile(path, middle, root):
    from perun_core.collect.perf import stack_resources
    from perun_core.profile.codec import to_json_bytes
    from perun_core.profile.model import Profile, Snapshot
    from perun_core.profile.resources import ResourceTable

    app = str(root / "app")
    stacks = {(("middle", app), ("main", app)): [middle, middle * 1000],
              (("alpha", app), ("main", app)): [100, 100000],
              (("memcpy", "/usr/lib/libc.so.6"), ("middle", app), ("main", app)): [middle // 3, middle * 300],
              (("memcpy", "/usr/lib/libc.so.6"), ("_dl_start", "/usr/lib/ld.so")): [middle // 5, middle * 200]}
    rows = stack_resources(stacks)
    for row in rows:
        if row["subtype"] == "function" and row["uid"] in ("middle", "alpha", "main"):
            row.update(source=str(root / "app.c"), line={"middle": 7, "alpha": 5, "main": 10}[row["uid"]])
        if row["subtype"] == "function" and row["uid"] == "memcpy":
            row.update(source="/usr/src/libc/memcpy.S", line=30)
    profile = Profile(header={"type": "time", "cmd": "./app", "units": {"time": "samples"}},
                      collector_info={"name": "perf", "params": {"mode": "record"}},
                      global_region=Snapshot(ResourceTable(rows), [], {}))
    path.write_bytes(to_json_bytes(profile))
    return path


async def test_the_difference_flame_graph_of_two_perf_profiles_and_sources_outside_the_repository(tmp_path,
                                                                                                monkeypatch):
    import contextlib

    root, report = _c_project(tmp_path)
    calls = _recording_editor(tmp_path, monkeypatch)
    app = PerunApp(root)
    monkeypatch.setattr(app, "suspend", contextlib.nullcontext)
    recorder = Recorder()
    async with app.run_test(size=(120, 40), message_hook=recorder) as pilot:
        await settle(pilot)
        modal = await _explained(pilot, report)
        assert "1. middle (" in " ".join(_text(modal).split()) and "app.c:7)" in _text(modal)  # wrapped at any space
        # the library's memcpy called by middle is middle's cost, shown below it as in the command line's tree
        assert "through memcpy: 100 samples -> 300 samples" in _text(modal), _text(modal)
        flame = str(modal.query_one("#explain-flame", Static).render())
        assert NO_FLAME not in flame and "middle" in flame and "main" in flame, flame
        _assert_flame_fits(modal)
        await pilot.press("enter")  # middle: app.c is in the repository (profiles of files: the working tree's)
        await settle(pilot)
        assert [call[0] for call in _calls(calls)] == ["+7"] and Path(_calls(calls)[0][1]).name == "app.c"
        assert _seen(calls) == [((root / "app.c").read_text(), False)]
        functions = modal.query_one("#explain-functions", OptionList)
        # memcpy called only by the loader has no caller in the repository: listed itself, after the program's
        memcpy = next(i for i, f in enumerate(modal.explanation.functions) if f.function == "memcpy")
        assert modal.explanation.functions[memcpy].owned is False and modal.explanation.functions[0].owned
        functions.highlighted = memcpy
        await pilot.press("enter")  # memcpy's source is not a file of this repository: a warning, no editor
        await settle(pilot)
        assert len(_calls(calls)) == 1
        assert any("memcpy" in note and "not a file of this repository" in note for note in recorder.notes("warning"))


async def test_the_tui_names_the_same_owned_function_and_library_calls_as_the_command_line(tmp_path, monkeypatch):
    import json

    import pytest
    from conftest import run_cli
    from runhelpers import line_of
    from tools import need_tools

    from check.owned_programs import MAKE_C, NESTED_FAST, NESTED_SLOW
    from check.test_explain import _configure

    need_tools("cc", "make", "valgrind")
    root = tmp_path / "nested"
    files = {"Makefile": MAKE_C, ".gitignore": "app\n"}
    make_repo(root, [{"files": {**files, "app.c": NESTED_FAST}, "message": "v1"},
                     {"files": {**files, "app.c": NESTED_SLOW}, "message": "v2: strlen at every character"}])
    _configure(root, "./app", "9000", pre_run=["make"])
    result = run_cli("check", "--compute-missing", "head", "--explain", "--format", "json", cwd=root)
    assert result.returncode == 3, result.stdout + result.stderr
    record = next(r for r in json.loads(result.stdout) if r["result"] == "Degradation")
    first = record["explained_by"][0]
    assert (first["function"], first["file"], first["line"]) == ("parse", "app.c",
                                                                  line_of(NESTED_SLOW, "static long parse"))

    def no_collection(*args, **kwargs):
        raise AssertionError("explained again instead of showing the stored explanation")

    monkeypatch.setattr(api, "explain", no_collection)
    app = PerunApp(root)
    async with app.run_test(size=(120, 40)) as pilot:
        _screen, modal = await _open_explanation(app, pilot)
        await wait_until(pilot, lambda: modal.explanation is not None, timeout=30)
        shown = _text(modal)
        assert f"1. parse (app.c:{first['line']})" in shown, shown
        assert f"through {first['through'][0]['function']}: " in shown, shown
        assert modal.explanation.functions[0].owned and modal.explanation.target_total == \
            pytest.approx(record["explanation"]["target_total"])


def _perf_report(tmp_path, root, minor):
    """A report of one degradation between two perf profiles of ``root``'s app.c, as found at commit ``minor``
    (None: profiles of files)."""
    from perun_core.check.pairing import ProfileRef
    from perun_core.check.report import CheckReport, PairReport, VersionReport
    from perun_core.check.results import Finding, PerformanceChange

    base = _perf_profile(tmp_path / "base.perf", 300, root)
    target = _perf_profile(tmp_path / "target.perf", 900, root)
    refs = [ProfileRef(str(p), "file", None, None, "time", "time ./app") for p in (base, target)]
    finding = Finding(PerformanceChange.DEGRADATION, "time", "./app [real]", 1.0, 2.0)
    return CheckReport("profiles", (VersionReport(minor, None, (PairReport(*refs, ("sart",), (finding,)),)),))



def _c_project(tmp_path):
    """A C project's repository with perun and a perf-explained report of its ./app (``_perf_report``)."""
    root = tmp_path / "cproject"
    make_repo(root, [{"files": {"app.c": "int main(void) { return 0; }\n"}, "message": "v1"}])
    api.init(root)
    return root, _perf_report(tmp_path, root, None)


async def _explained(pilot, report) -> ExplainScreen:
    """The explain dialog of ``report``'s ./app [real], opened and settled once its explanation is in."""
    modal = ExplainScreen(report, "./app [real]")
    await pilot.app.push_screen(modal)
    await wait_until(pilot, lambda: modal.explanation is not None, timeout=30)
    await settle(pilot)
    return modal

async def _source_of_middle(tmp_path, monkeypatch, pager: str | None):
    """Explain the perf pair as found at the second commit, the working tree changed since; enter on middle."""
    import contextlib

    root = tmp_path / "cproject"
    shas = make_repo(root, [{"files": {"app.c": "int main(void) { return 1; }\n"}, "message": "v1"},
                            {"files": {"app.c": "/* slow */\nint main(void) { return 2; }\n"}, "message": "v2"}])
    api.init(root)
    (root / "app.c").write_text("/* fixed */\n")
    if pager is not None:
        monkeypatch.setenv("PAGER", pager)
    app = PerunApp(root)
    monkeypatch.setattr(app, "suspend", contextlib.nullcontext)
    recorder = Recorder()
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        modal = ExplainScreen(_perf_report(tmp_path, root, shas[1]), "./app [real]")
        await app.push_screen(modal)
        await wait_until(pilot, lambda: modal.explanation is not None, timeout=30)
        await settle(pilot)
        assert modal.commit == shas[1]
        await pilot.press("enter")  # middle, at app.c:7
        await settle(pilot)
        shown = app.screen
        text = shown.query_one("#source-text").text if isinstance(shown, SourceScreen) else None
        note = shown.note if isinstance(shown, SourceScreen) else ""
        if note:
            assert str(shown.query_one("#source-note", Static).render()) == note
        return shas, text, recorder.notes(), note


async def test_without_a_pager_or_an_editor_the_source_at_the_commit_shows_in_a_dialog(tmp_path, monkeypatch):
    shas, text, notes, note = await _source_of_middle(tmp_path, monkeypatch, pager=None)
    assert text == "/* slow */\nint main(void) { return 2; }\n"  # the commit's, not the working tree's
    # why it shows here is said in the dialog (its title names the file and commit), not by a toast over its border
    assert note == "shown here: neither $PAGER nor an editor is set" and not notes, notes


async def test_a_pager_that_cannot_start_is_said_and_the_dialog_shows_the_source(tmp_path, monkeypatch):
    _shas, text, notes, note = await _source_of_middle(tmp_path, monkeypatch, pager=str(tmp_path / "no-such-pager"))
    assert text == "/* slow */\nint main(void) { return 2; }\n"
    assert "cannot start no-such-pager ($PAGER)" in note and not notes, (note, notes)


async def test_the_pager_gets_a_read_only_copy_of_the_source_at_the_commit(tmp_path, monkeypatch):
    calls = _recording_editor(tmp_path, monkeypatch, variable="PAGER")
    shas, text, notes, _note = await _source_of_middle(tmp_path, monkeypatch, pager=None)
    assert text is None  # no dialog: the pager showed it
    [(copy,)] = _calls(calls)  # a pager other than less gets no line
    assert Path(copy).name == f"app@{shas[1][:7]}.c"
    assert _seen(calls) == [("/* slow */\nint main(void) { return 2; }\n", False)]
    assert any(f"app.c at {shas[1][:7]} shown in record-pager ($PAGER)" in note for note in notes)


def test_viewers_pager_first_with_the_line_each_takes():
    assert viewers("less -R", "vim", 7) == [("less ($PAGER)", ["less", "-R", "+7g"]), ("vim", ["vim", "+7"])]
    assert viewers("", "emacs -nw", None) == [("emacs", ["emacs", "-nw"])]
    assert viewers("more", "", 3) == [("more ($PAGER)", ["more"])]
    assert viewers("", "", 3) == [] and viewers("'unbalanced", "", 1) == []


async def test_a_collection_under_way_shows_its_collector_expected_time_and_seconds_elapsed(tmp_path, monkeypatch):
    import threading

    root, report = _c_project(tmp_path)
    release = threading.Event()
    explain = api.explain

    def collecting(report, *, on_event, cancel, cwd):
        """What explain says while callgrind runs, held until the test has looked; then the real explanation."""
        on_event(api.ExplainStarted(1, 1))
        on_event(api.ExplainCollecting("./app", "callgrind", ("abc1234", "def5678"), 40.0, 240.0,
                                       ("callgrind on 3200 would take about 90 s",)))
        on_event(api.ExplainRound("./app", "callgrind", "abc1234", 1, 1))
        release.wait(timeout=600)
        return explain(report, on_event=on_event, cancel=cancel, cwd=cwd)

    monkeypatch.setattr(api, "explain", collecting)
    app = PerunApp(root)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        modal = ExplainScreen(report, "./app [real]")
        now = [1000.0]
        modal.clock = lambda: now[0]  # seconds pass when the test says so

        def shown():
            return str(modal.query_one("#explain-text", Static).render())

        try:
            await app.push_screen(modal)
            await wait_until(pilot, lambda: "round 1 of 1" in shown(), timeout=30)
            lines = shown().splitlines()
            assert lines[:4] == ["collecting callgrind profiles of ./app at abc1234, def5678…",
                                 "  callgrind, about 40 s expected, 0 s elapsed",
                                 "  callgrind on 3200 would take about 90 s", "  round 1 of 1: abc1234"], lines
            now[0] += 12
            await wait_until(pilot, lambda: "callgrind, about 40 s expected, 12 s elapsed" in shown(), timeout=30)
        finally:
            release.set()
        await wait_until(pilot, lambda: modal.explanation is not None, timeout=30)
        assert "elapsed" not in shown() and modal.ticker is None and "1. middle (" in " ".join(_text(modal).split())


def _assert_flame_fits(modal: ExplainScreen) -> None:
    """The difference flame graph is as wide as its pane: drawn wider (for the terminal's width less 12), the
    last cell of every frame wrapped onto a line of its own at 40 and at 120 columns."""
    from rich.cells import cell_len

    body = modal.query_one("#explain-flame-body")
    lines = str(modal.query_one("#explain-flame", Static).render()).splitlines()
    assert lines and max(cell_len(line) for line in lines) <= body.scrollable_content_region.width, lines


async def test_the_keys_in_the_border_stay_whole_at_40_columns(tmp_path):
    """At 40x12 the border's "enter opens a function's source · esc to close" was cut before "esc": a short
    form fits there, the full one comes back at 120 columns; esc closes."""
    root, report = _c_project(tmp_path)
    app = PerunApp(root)
    async with app.run_test(size=(40, 12)) as pilot:
        await settle(pilot)
        modal = await _explained(pilot, report)
        dialog = modal.query_one("#explain-dialog")
        assert dialog.border_subtitle == SHORT_KEYS_HINT
        assert len(SHORT_KEYS_HINT) <= dialog.size.width - 4
        _assert_flame_fits(modal)
        # the text filled the 8 rows and left the functions and the flame graph none: the dialog scrolls now,
        # and each part is shown when it has the focus
        functions = modal.query_one("#explain-functions", OptionList)
        flame = modal.query_one("#explain-flame-body")
        for part in (functions, flame, functions):
            assert app.focused is part
            assert part.region.height > 0 and dialog.content_region.overlaps(part.region), part
            await pilot.press("tab")
            await settle(pilot)
        # the text above the functions comes back with the keyboard (page up), not with the mouse only
        text = modal.query_one("#explain-text", Static)
        focused = app.focused
        assert dialog.scroll_y > 0 and not dialog.content_region.overlaps(text.region)
        await pilot.press("pageup", "pageup", "pageup")
        await settle(pilot)
        assert dialog.scroll_y == 0 and dialog.content_region.overlaps(text.region)
        assert app.focused is focused  # the page keys scroll, they do not move the focus
        # a note longer than the dialog wraps under its own start, not at column 0 under the headline
        lines = str(text.render()).splitlines()
        assert len(lines) > 1 + len(modal.explanation.notes), lines
        assert all(line.startswith("     ") for line in lines[1:]), lines
        # wrapped for the width the text has once the dialog's scroll bar is there: wrapped a cell wider, the
        # widget broke the headline again ("->" on a line of its own, its next line indented)
        assert max(len(line) for line in lines) <= text.content_region.width, lines
        # so are the ranked functions, under their name: wrapped while the list was hidden (no width), the
        # option broke them itself, "(app.c:7): ..." at the start of the next line
        prompt = str(functions.get_option_at_index(0).prompt).splitlines()
        assert len(prompt) > 1 and all(line.startswith("     ") for line in prompt[1:]), prompt
        assert max(len(line) for line in prompt) <= functions.scrollable_content_region.width, prompt
        narrow = max(len(line) for line in str(modal.query_one("#explain-flame", Static).render()).splitlines())
        await pilot.resize_terminal(120, 40)
        await settle(pilot)
        assert dialog.border_subtitle == KEYS_HINT
        # the flame graph is drawn again for the wider dialog
        await wait_until(pilot, lambda: max(len(line) for line in str(
            modal.query_one("#explain-flame", Static).render()).splitlines()) > narrow, timeout=30)
        _assert_flame_fits(modal)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is not modal


async def test_a_long_note_of_the_collection_wraps_under_its_own_start(tmp_path, monkeypatch):
    """At 80x24 the note "sampled with perf: the change shows in about 540 samples; callgrind would take about
    55 s" went on at column 0, under the line that says what runs: it wraps under its own start now."""
    import threading

    from perun_core.errors import Interrupted

    root, report = _c_project(tmp_path)
    release = threading.Event()
    note = "sampled with perf: the change shows in about 540 samples; callgrind would take about 55 s"

    def collecting(report, *, on_event, cancel, cwd):
        on_event(api.ExplainCollecting("./app", "perf", ("abc1234", "def5678"), 14.0, 240.0, (note,)))
        release.wait(timeout=600)
        raise Interrupted("cancelled")  # the dialog was closed: the worker ends quietly

    monkeypatch.setattr(api, "explain", collecting)
    app = PerunApp(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        modal = ExplainScreen(report, "./app [real]")
        try:
            await app.push_screen(modal)
            text = modal.query_one("#explain-text", Static)
            await wait_until(pilot, lambda: "callgrind" in str(text.render()), timeout=30)
            lines = str(text.render()).splitlines()
            assert len(lines) > 3 and lines[2].startswith("  sampled with perf") and lines[3].startswith("    "), lines
            assert max(len(line) for line in lines) <= text.content_region.width, lines
        finally:
            release.set()
            await pilot.press("escape")


async def test_a_finding_with_nothing_to_explain_offers_no_source_to_open(tmp_path):
    """x on a finding that cannot be explained (here no change) said "only certain time degradations ... can be
    explained" over a border that still read "enter opens a function's source": enter did nothing."""
    from dataclasses import replace

    from perun_core.check.results import PerformanceChange

    root, report = _c_project(tmp_path)
    version = report.versions[0]
    pair = version.pairs[0]
    unchanged = replace(pair.findings[0], result=PerformanceChange.NO_CHANGE)
    report = replace(report, versions=(replace(version, pairs=(replace(pair, findings=(unchanged,)),)),))
    app = PerunApp(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        modal = ExplainScreen(report, "./app [real]")
        await app.push_screen(modal)
        # the reason (no change here) in the words the dialog has for a finding it does not explain
        await wait_until(pilot, lambda: "no change here" in str(modal.query_one("#explain-text", Static).render()),
                         timeout=30)
        await settle(pilot)
        hint = str(modal.query_one("#explain-dialog").border_subtitle)
        assert "source" not in hint and "esc to close" in hint, hint
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is not modal


async def test_x_on_a_finding_of_a_mixed_profile_says_why_not_and_what_would_work(demo_repo):
    """The dialog said only 'only certain time degradations and optimizations can be explained' for the trace
    profile's findings, leaving a newcomer to guess that its type is the reason."""
    app = PerunApp(demo_repo)
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot)
        screen = await checked(pilot, "a")
        table = screen.query_one("#check-findings", DataTable)
        row = next(int(key.value) for key in table.rows if screen.rows[int(key.value)][1].target.type == "mixed")
        table.move_cursor(row=table.get_row_index(str(row)))
        await pilot.press("x")
        modal = app.screen
        assert isinstance(modal, ExplainScreen)
        await wait_until(pilot, lambda: modal.explanation is None and "not explained" in _text(modal), timeout=30)
        assert "mixed profile" in _text(modal) and "a finding of a time profile" in _text(modal)


async def test_the_flame_graph_keeps_rows_and_its_legend_at_80x24(tmp_path):
    """At 80x24 the text and the ranked functions took all but two rows of the dialog: the difference flame graph
    showed its title and one level, and its legend (what + - = mean) came only after its last level, never in
    view.  The flame graph keeps rows of its own now and the legend stays below it, whatever is scrolled."""
    root, report = _c_project(tmp_path)
    app = PerunApp(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        modal = await _explained(pilot, report)
        dialog = modal.query_one("#explain-dialog")
        body = modal.query_one("#explain-flame-body")
        assert body.region.height >= 5 and dialog.content_region.contains_region(body.region), body.region
        legends = [widget for widget in modal.query("#explain-flame-legend, #explain-flame")
                   if "+ own amount grew" in str(widget.render())]
        assert legends, "no legend"
        legend = legends[0]
        assert legend.id == "explain-flame-legend"  # not inside the scrolled graph
        assert legend.region.height > 0 and dialog.content_region.contains_region(legend.region), legend.region
        assert "= same (within 1%)" in " ".join(str(legend.render()).split())
        await pilot.press("pagedown", "pagedown")
        await settle(pilot)
        assert dialog.content_region.contains_region(legend.region)


async def test_the_flame_graph_of_the_dialog_is_drawn_whole_and_advises_in_the_dialog_s_words(tmp_path, monkeypatch):
    """The dialog drew the graph a third of the terminal high and ended it in '(16 deeper levels not shown;
    raise --height)' and '... see --format folded)': options of the command line, not of the dialog."""
    root, report = _c_project(tmp_path)
    drawn = []
    render = api.render_diff

    def recording(comparison, view="short", **options):
        drawn.append(options)
        return render(comparison, view, **options)

    monkeypatch.setattr(api, "render_diff", recording)
    app = PerunApp(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        modal = await _explained(pilot, report)
        flame = str(modal.query_one("#explain-flame", Static).render())
        assert "middle" in flame and "--" not in flame, flame
    assert drawn and all(options.get("front") == "tui-dialog" for options in drawn), drawn
    # every level is drawn: the pane scrolls (pgup/pgdn), nothing is left out for a --height to bring back
    assert all(options["height"] >= 100 for options in drawn), drawn


async def test_a_headline_taller_than_its_share_scrolls_to_its_last_note(tmp_path):
    """The text above the functions was cut by its height mid-phrase ('wrote perf-sll-bench-...-1a2f1a1.perf
    (object'), the parenthesis never closed and nothing said more was below: it scrolls now, the rest reached with
    tab and the arrow keys."""
    from dataclasses import replace

    root, report = _c_project(tmp_path)
    app = PerunApp(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        modal = ExplainScreen(report, "./app [real]")
        await app.push_screen(modal)
        await wait_until(pilot, lambda: modal.explanation is not None, timeout=30)
        written = tuple(f".perun/pending/perf-app-{n}-0123456789abcdef.perf (object files of the build {n})"
                        for n in range(8))
        modal.explanation = replace(modal.explanation, written=written)
        modal._show_text(modal.explanation)
        await settle(pilot)
        body = modal.query_one("#explain-text-body")
        lines = str(modal.query_one("#explain-text", Static).render()).splitlines()
        assert lines[-1].endswith("build 7)"), lines
        assert body.size.height < len(lines) and body.max_scroll_y == len(lines) - body.size.height
        for _ in range(3):
            if app.focused is body:
                break
            await pilot.press("tab")
            await settle(pilot)
        assert app.focused is body
        await pilot.press("end")
        await settle(pilot)
        assert body.scroll_y == body.max_scroll_y
