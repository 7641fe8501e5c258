"""Pilot test of the fuzz screen: opened from the palette, started from its form, live progress, cancelled with esc."""

from __future__ import annotations

import json

from textual.widgets import DataTable, Input

from perun_core import api
from perun_tui.app import PerunApp
from perun_tui.screens.fuzz import FuzzDone, FuzzEvent, FuzzScreen
from perun_tui.widgets.forms import ParamForm

from fuzz.programs import SORT, sort_seed, write_program
from .helpers import Recorder, settle, wait_until


async def test_fuzzing_from_the_palette_shows_progress_and_esc_cancels(demo_repo, tmp_path):
    program = write_program(tmp_path, "sort.py", SORT)
    (tmp_path / "seed.txt").write_text(sort_seed())
    out = tmp_path / "out"
    recorder = Recorder()
    app = PerunApp(demo_repo)
    async with app.run_test(size=(100, 32), message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"fuzz: start")
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, FuzzScreen) and app.screen.query(ParamForm))
        screen = app.screen
        form = screen.query_one(ParamForm)
        await wait_until(pilot, lambda: bool(screen.query("#field-cmd")))
        # the form is the fuzz declaration: one field per parameter, the same names
        assert {p.name for p in form.owner.params} == {p.name for p in api.FUZZ_PARAMS}
        for name, value in (("cmd", str(program)), ("seeds", str(tmp_path / "seed.txt")), ("output_dir", str(out)),
                            ("seed", "5"), ("profiles", "0")):
            screen.query_one(f"#field-{name}", Input).value = value
        await pilot.pause()
        assert not form.problems()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: any(type(m.event).__name__ == "FuzzProgress" for m in recorder.of(FuzzEvent)),
                         timeout=60)
        assert screen.running
        assert "runs" in str(screen.query_one("#fuzz-status").render())
        await pilot.press("escape")
        await wait_until(pilot, lambda: recorder.of(FuzzDone), timeout=60)
        await settle(pilot)
        assert screen.status == "cancelled" and app.screen is screen
        results = json.loads((out / "results.json").read_text())
        assert results["stopped"] == "cancelled"
        assert screen.query_one("#fuzz-found", DataTable).row_count == len(results["findings"])
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, FuzzScreen)
