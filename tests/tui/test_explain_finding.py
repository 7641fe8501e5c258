"""Pilot test of `x` on a finding: the functions responsible for its change, collected in a worker."""

from __future__ import annotations

from gitrepo import make_repo
from textual.widgets import DataTable, Static

from perun_core import api
from perun_tui.app import PerunApp
from perun_tui.modals.explain import ExplainScreen
from perun_tui.screens.check import CheckScreen

from check.test_explain import PY_PROGRAM, PY_SLOW
from .helpers import settle, wait_until


def _text(screen: ExplainScreen) -> str:
    return str(screen.query_one("#explain-text", Static).render())


async def test_x_on_a_degradation_names_the_function_responsible(tmp_path):
    root = tmp_path / "pyproject"
    make_repo(root, [{"files": {"prog.py": PY_PROGRAM}, "message": "v1: dict lookup"},
                     {"files": {"prog.py": PY_SLOW}, "message": "v2: list scan"}])
    api.init(root)
    for key, value in {"cmds": ["python3 prog.py"], "workloads": ["3000"],
                       "collectors": [{"name": "time", "params": {"warmup": 1, "repeat": 5}}]}.items():
        api.config_set(key, value, scope="local", cwd=root)
    api.check_head(compute_missing=True, cwd=root)
    app = PerunApp(root)
    async with app.run_test(size=(120, 34)) as pilot:
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
        modal = app.screen
        assert isinstance(modal, ExplainScreen)
        await wait_until(pilot, lambda: "explained by" in _text(modal), timeout=60)
        assert "1. lookup (prog.py:7)" in _text(modal)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen
