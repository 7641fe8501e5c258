"""Pilot tests of the job-matrix editor and the postprocess form, at 80x24."""

from __future__ import annotations

import contextlib
import stat
import sys

import yaml
from textual.widgets import DataTable, Input, Static, TabbedContent, Tabs, TextArea

from perun_core import api
from perun_tui.app import MainScreen, PerunApp
from perun_tui.screens.matrix import MatrixScreen
from perun_tui.widgets.units import UnitsEditor
from perun_tui.modals.postprocess import PostprocessScreen
from perun_tui.widgets.profiles import ProfilesTable

from .helpers import Recorder, rendered_text, select_profile, set_matrix, settle, wait_until


def local_yml(root) -> str:
    return (root / ".perun" / "local.yml").read_text()


def status_of(screen) -> str:
    return str(screen.query_one("#matrix-status", Static).content)


async def open_editor(pilot) -> MatrixScreen:
    await pilot.press("e")
    screen = pilot.app.screen
    assert isinstance(screen, MatrixScreen)
    await wait_until(pilot, lambda: screen.loaded)
    await settle(pilot)
    return screen


async def test_matrix_edited_in_forms_is_validated_and_saved_with_the_comments(demo_repo):
    original = local_yml(demo_repo)
    recorder = Recorder()
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        screen = await open_editor(pilot)
        assert status_of(screen).startswith("! no commands yet")
        assert screen.query_one("#matrix-pane").border_subtitle == "saved"
        names = [command.name for command in screen.palette_commands()]
        assert {"matrix: save", "matrix: open in $EDITOR", "matrix: add collector"} <= set(names)
        assert all(": " in name for name in names)

        await pilot.press(*"./b")  # the commands have the focus on opening
        assert screen.query_one("#matrix-cmds", TextArea).text == "./b"
        screen.query_one("#matrix-cmds", TextArea).load_text("./sll-bench")  # the rest typed at once
        screen.query_one("#matrix-args", TextArea).load_text("--iterations 10\n  --iterations 20\n\n")
        await pilot.press("shift+tab")  # back to the tab bar
        assert isinstance(app.focused, Tabs)
        await pilot.press("right")
        assert screen.query_one(TabbedContent).active == "tab-collectors"
        await pilot.press("tab", "a")  # adds a time collector, the unit's name selected
        editor = screen.query_one("#matrix-collectors", UnitsEditor)
        assert editor.values() == [{"name": "time"}]
        await pilot.press("tab", "tab", "x")  # repeat: not a number
        assert app.focused.id == "field-repeat"
        app.focused.value = "abc"
        # the 'x' typed first may have been validated already: wait for the verdict on 'abc'
        await wait_until(pilot, lambda: "'abc'" in status_of(screen))
        assert status_of(screen).startswith("✗")
        assert "parameter 'repeat' = 'abc': expected an integer from 1 to 1000000" in status_of(screen)
        assert screen.query_one("#field-repeat", Input).has_class("-invalid")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert any("not saved" in note for note in recorder.notes("error"))
        assert local_yml(demo_repo) == original

        app.focused.value = ""
        await pilot.press("3")
        await wait_until(pilot, lambda: status_of(screen).startswith("✓") and editor.values()[0].get("params"))
        assert status_of(screen).startswith("✓ valid: 2 jobs per commit")
        assert editor.values() == [{"name": "time", "params": {"repeat": 3}}]
        preview = screen.query_one("#matrix-preview", DataTable)
        assert preview.row_count == 2
        assert str(preview.get_row_at(1)[1]).strip() == "./sll-bench --iterations 20"
        assert screen.query_one("#matrix-pane").border_subtitle == "modified"

        await pilot.press("ctrl+s")
        await settle(pilot)
        assert screen.query_one("#matrix-pane").border_subtitle == "saved"
        await pilot.press("escape")  # nothing unsaved: closes without asking
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
    text = local_yml(demo_repo)
    assert text.startswith(original)  # every comment and key kept, the matrix appended
    data = yaml.safe_load(text)
    assert data["cmds"] == ["./sll-bench"]
    assert data["args"] == ["--iterations 10", "--iterations 20"]
    assert data["collectors"] == [{"name": "time", "params": {"repeat": 3}}]
    assert "workloads" not in data and "postprocessors" not in data
    with api.open_repository(demo_repo) as repo:
        assert repo.config.get("cmds") == ["./sll-bench"]


async def test_open_in_editor_then_the_file_is_read_back_and_validated(demo_repo, tmp_path, monkeypatch):
    editor = tmp_path / "fake-editor"
    editor.write_text(f"#!{sys.executable}\n"
                      "import sys\n"
                      "path = sys.argv[1]\n"
                      "text = open(path).read()\n"
                      "open(path, 'w').write(text + '\\ncmds: [./from-the-editor]\\ncollectors: [{name: nosuch}]\\n"
                      "postprocessors: [{name: regression_analysis, params: {steps: 5}}]\\n"
                      "profiles: {register_after_run: maybe}\\n')\n")
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("EDITOR", str(editor))
    recorder = Recorder()
    app = PerunApp(demo_repo)
    monkeypatch.setattr(app, "suspend", contextlib.nullcontext)  # headless: nothing to hand over
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        screen = await open_editor(pilot)
        await pilot.press("f2")
        await wait_until(pilot, lambda: screen.loaded)
        await settle(pilot)
        assert screen.query_one("#matrix-cmds", TextArea).text == "./from-the-editor"
        # the rest of the file is validated too: the bad value is reported
        assert any("register_after_run" in note for note in recorder.notes("error"))
        # ... and so is the unknown unit
        assert "unknown collector 'nosuch'" in status_of(screen)
        collectors = screen.query_one("#matrix-collectors", UnitsEditor)
        assert "nosuch unknown" in str(collectors.entry_list.get_option_at_index(0).prompt)
        post = screen.query_one("#matrix-postprocessors", UnitsEditor)
        assert post.values() == [{"name": "regression_analysis", "params": {"steps": 5}}]

        screen.action_tab("tab-collectors")
        await pilot.press("x")  # remove the unknown unit: no collector left
        await wait_until(pilot, lambda: status_of(screen).startswith("!"))
        assert collectors.values() == []
        assert status_of(screen).startswith("! no collectors yet")
        await pilot.press("escape")  # unsaved: asks first
        await pilot.pause()
        assert app.screen.__class__.__name__ == "ConfirmScreen"
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is screen


async def test_postprocess_form_runs_the_unit_and_selects_the_new_pending_profile(demo_repo):
    with api.open_repository(demo_repo) as repo:
        pending_before = len(api.status(repo=repo).pending)
    recorder = Recorder()
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        table = await select_profile(pilot, "1@p")  # mixed, without models
        assert table.current.type == "mixed"
        await pilot.press("o")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PostprocessScreen)
        assert str(screen.query_one("#postprocess-unit").value) == "regression_analysis"
        steps = screen.query_one("#field-steps", Input)
        steps.focus()
        steps.value = "many"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, PostprocessScreen)  # refused
        assert any("parameter 'steps' = 'many'" in note for note in recorder.notes("error"))
        steps.value = ""
        await pilot.press("5", "enter")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        table = app.query_one(ProfilesTable)
        new = table.current
        assert not new.registered and new.postprocessors == ("regression_analysis",)
        assert app.focused is table
    with api.open_repository(demo_repo) as repo:
        report = api.status(repo=repo)
        assert len(report.pending) == pending_before + 1
        profile = api.load_profile(new.source, repo=repo).profile
    assert profile.postprocessors[-1]["params"]["steps"] == 5
    assert any(True for _ in profile.regions())


async def test_field_hints_end_in_an_ellipsis_in_a_narrow_terminal(demo_repo):
    """At 40x12 the hints ran past the pane's edge, cut with no ellipsis ('... (binarie')."""
    from textual.widgets import Label

    app = PerunApp(demo_repo)
    async with app.run_test(size=(40, 12)) as pilot:
        await settle(pilot)
        screen = await open_editor(pilot)
        label = next(label for label in screen.query(".matrix-label").results(Label)
                     if str(label.render()).startswith("cmds"))
        right = label.parent.content_region.right
        assert label.region.right <= right
        assert rendered_text(label).rstrip().endswith("…")


async def test_the_preview_columns_take_the_width_there_is(demo_repo):
    """The preview capped the command line at 40 cells and the collector at 30: at 120x40 the collector's
    parameters were cut beside an empty postprocessors column, and at 80x24 the table scrolled sideways."""
    set_matrix(demo_repo, cmds=["./sll-bench"], workloads=["15000"],
               collectors=[{"name": "time", "params": {"warmup": 2, "repeat": 9, "timeout": 600}}])
    for size in ((120, 40), (80, 24)):
        app = PerunApp(demo_repo)
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            screen = await open_editor(pilot)
            await pilot.press("f4", "f4", "f4")
            await settle(pilot)
            assert screen.query_one(TabbedContent).active == "tab-preview"
            preview = screen.query_one("#matrix-preview", DataTable)
            await wait_until(pilot, lambda: preview.row_count > 0, timeout=10)
            await settle(pilot)
            text = rendered_text(preview)
            assert preview.virtual_size.width <= preview.scrollable_content_region.width, (size, text)
            if size == (120, 40):
                assert "time (warmup: 2, repeat: 9, timeout: 600.0, keep_failed: false)" in text, text
            else:
                assert "time (warmup: 2, repeat: 9" in text, text


def test_parameters_not_set_are_left_out_and_booleans_read_as_in_local_yml():
    """The preview read 'time (warmup: 1, repeat: 7, timeout: , keep_failed: false)' and the details
    'time (warmup: 1, repeat: 7, timeout: None, keep_failed: False)'."""
    from perun_tui.modals.details import _unit
    from perun_tui.widgets.forms import describe_params

    params = {"warmup": 1, "repeat": 7, "timeout": None, "keep_failed": False}
    assert describe_params(params) == "warmup: 1, repeat: 7, keep_failed: false"
    assert _unit("time", params) == "time (warmup: 1, repeat: 7, keep_failed: false)"
    assert _unit("time", {"timeout": None}) == "time"


async def test_a_choice_prompt_too_long_for_its_field_ends_in_an_ellipsis(demo_repo):
    """At 40x12 the postprocessors' choice read 'choose a', the rest of its prompt cut with no ellipsis."""
    from textual.widgets import Select

    app = PerunApp(demo_repo)
    async with app.run_test(size=(40, 12)) as pilot:
        await settle(pilot)
        screen = await open_editor(pilot)
        await pilot.press("f4", "f4")
        await settle(pilot)
        # a postprocessor added and not yet chosen (with none in the matrix there is no choice to show)
        await screen.query_one("#matrix-postprocessors", UnitsEditor).add_entry()
        await settle(pilot)
        choice = next(select for select in screen.query(Select).results(Select)
                      if select.prompt == "choose a postprocessor" and select.is_on_screen)
        shown = rendered_text(choice.query_one("SelectCurrent #label")).strip()
        assert shown.startswith("choose a") and (shown == "choose a postprocessor" or shown.endswith("…")), shown


async def test_the_postprocessors_listed_at_40_columns_each_take_one_line(demo_repo):
    """The list of postprocessors, opened at 40x12, broke the longer names over two lines ('kernel_regressio' /
    'n'): each is one line now, a name too long ending in an ellipsis."""
    from textual.widgets import Select

    app = PerunApp(demo_repo)
    async with app.run_test(size=(40, 12)) as pilot:
        await settle(pilot)
        await select_profile(pilot, "1@p")
        await pilot.press("o")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PostprocessScreen)
        choice = screen.query_one("#postprocess-unit", Select)
        choice.expanded = True
        await settle(pilot)
        overlay = choice.query_one("SelectOverlay")
        lines = [line.strip() for line in rendered_text(overlay).splitlines() if line.strip()]
        assert len(lines) == overlay.option_count, lines
        names = [str(overlay.get_option_at_index(i).prompt) for i in range(overlay.option_count)]
        for line, name in zip(lines, names):
            assert line == name or (line.endswith("…") and name.startswith(line[:-1])), (line, name)


async def test_an_empty_postprocessors_tab_shows_no_selector_and_says_how_to_add_one(demo_repo):
    """With no postprocessor in the matrix, a disabled 'choose a postprocessor' selector stood beside 'no unit
    selected', as if a unit could be picked there."""
    set_matrix(demo_repo, postprocessors=[])
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, MatrixScreen))
        await settle(pilot)
        screen = app.screen
        editor = screen.query_one("#matrix-postprocessors", UnitsEditor)
        await wait_until(pilot, lambda: not editor.entries and editor.selected < 0)
        screen.query_one(TabbedContent).active = "tab-postprocessors"
        await settle(pilot)
        assert not editor.name_select.parent.display
        # the form is rebuilt on a later refresh, and a busy machine's toast may take the rows it would be drawn in:
        # its text is looked up afresh each time, as written, not as laid out
        def message() -> str:
            return " ".join(" ".join(str(w.render()).split()) for w in editor.query(".form-empty"))

        await wait_until(pilot, lambda: "a adds one" in message())
        await editor.add_entry()
        await settle(pilot)
        assert editor.name_select.parent.display and not editor.name_select.disabled


async def test_the_commands_have_the_focus_when_the_editor_opens(demo_repo):
    """The tab bar had the focus: the first letter typed was lost and the footer offered q Quit."""
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await open_editor(pilot)
        cmds = screen.query_one("#matrix-cmds", TextArea)
        assert app.focused is cmds
        shown = [binding.key for _node, binding, _enabled, _tip in screen.active_bindings.values() if binding.show]
        assert "q" not in shown
        await pilot.press(*"q./b")
        assert cmds.text.startswith("q./b")
        assert isinstance(app.screen, MatrixScreen)
