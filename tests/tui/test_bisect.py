"""Pilot tests of the bisect screen: palette command 'bisect: start' over stored profiles, live lines."""

from __future__ import annotations

import json

from gitrepo import make_repo
from textual.widgets import Log

from perun_core import api
from perun_tui.app import PerunApp
from perun_tui.screens.bisect import BisectDone, BisectScreen

from .helpers import Recorder, main_screen, set_matrix, settle, wait_until


def timed(amounts, origin):
    """A time profile of repeated runs of ./app (real and user seconds per run)."""
    resources = [{"amount": value * share, "type": "time", "subtype": subtype, "uid": "./app", "order": order}
                 for order, value in enumerate(amounts, 1) for subtype, share in (("real", 1.0), ("user", 0.9))]
    return {"origin": origin, "header": {"type": "time", "units": {"time": "s"}, "cmd": "./app", "params": "",
                                         "workload": "1000"},
            "collector_info": {"name": "time", "params": {"repeat": len(amounts)}}, "postprocessors": [],
            "global": {"timestamp": sum(amounts), "resources": resources, "models": []}}


def _repo(tmp_path):
    root = tmp_path / "proj"
    shas = make_repo(root, [{"files": {"n.txt": f"{i}\n"}, "message": f"c{i}"} for i in range(5)])
    api.init(root)
    for i, sha in enumerate(shas):
        base = 4.0 if i >= 3 else 1.0
        path = root / ".perun" / "jobs" / f"p{i}.perf"
        path.write_text(json.dumps(timed([base, base * 1.01, base * 0.99, base * 1.02, base], origin=sha)))
        api.add([str(path)], minor=sha, cwd=root)
    set_matrix(root, cmds=["./app"], workloads=["1000"], collectors=[{"name": "time"}])
    return root, shas


async def test_bisect_from_the_palette_finds_the_commit_with_stored_profiles(tmp_path):
    root, shas = _repo(tmp_path)
    recorder = Recorder()
    app = PerunApp(root)
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        main = main_screen(app)
        names = [command.name for command in main.palette_commands()]
        assert "bisect: start" in names
        main.action_bisect()  # nothing marked: a warning, no screen
        await pilot.pause()
        assert any("mark two commits" in note for note in recorder.notes("warning"))
        main.history.marked = {shas[4]: None, shas[0]: None}  # newest first: the order is found out
        main.action_bisect()
        await wait_until(pilot, lambda: recorder.of(BisectDone), timeout=60)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, BisectScreen)
        done = recorder.of(BisectDone)[0]
        assert done.error is None and done.result.culprit == shas[3] and done.result.collections == 0
        lines = screen.query_one(Log).lines
        assert any(line.startswith(f"{shas[4][:7]} is bad (stored profiles)") for line in lines), lines
        assert f"first degraded commit: {shas[3][:7]}" in lines
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, BisectScreen)
