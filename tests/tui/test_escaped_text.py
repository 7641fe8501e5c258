"""Foreign text with terminal escapes reaches no screen of the TUI raw (Pilot, 120x40).

A repository whose commit messages, profile commands, arguments, workloads,
uids and pending file names carry ESC, BEL and NUL (``ESC ] 0; ... BEL``
retitles a terminal, ``ESC [ 2 J`` clears it) is walked through the main
screen, the details, every plot, the degradation check, the comparison and
the difference.  On each, the drawn screen, the app's and the screen's
titles and every notification are free of control characters.

The walk runs with the app's last net (:class:`perun_tui.formatting.ControlFilter`,
which drops what the panes missed) switched off, so each pane has to escape
what it shows itself; the net is tested on its own below.
"""

from __future__ import annotations

import io
import json
import re

from rich.console import Console
from rich.segment import Segment
from textual.color import Color

from perun_core import api
from perun_tui.app import PerunApp
from perun_tui.formatting import ControlFilter

from .helpers import select_profile, settle, wait_until

CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
EVIL = "\x1b]0;pwned\x07"
SEEN = "\\e]0;pwned\\x07"  # how it must show: visibly escaped


def _profile(origin: str, amount: float) -> dict:
    resources = [{"amount": amount * (1 + i / 100), "uid": f"f{EVIL}\x00", "type": "time", "subtype": "real",
                  "order": i, "structure-unit-size": i} for i in range(8)]
    return {"origin": origin, "header": {"type": "time", "units": {"time": "s"}, "cmd": f"./app{EVIL}\x00",
                                         "args": "-n\x1b[2J", "workload": "w\x07"},
            "collector_info": {"name": "time", "params": {}}, "postprocessors": [],
            "global": {"time": 1.0, "resources": resources, "models": []}}


def _repository(tmp_path):
    from gitrepo import make_repo

    root = tmp_path / "evil"
    shas = make_repo(root, [{"files": {"a.txt": "one\n"}, "message": f"first{EVIL}"},
                            {"files": {"a.txt": "two\n"}, "message": f"second{EVIL}\n\nbody\x1b[2J"}])
    api.init(root)
    for sha, amount in zip(shas, (0.1, 0.5)):
        (root / ".perun/jobs/p.perf").write_text(json.dumps(_profile(sha, amount)))
        api.add(["p.perf"], minor=sha, cwd=root)
    (root / f".perun/jobs/pending{EVIL}.perf").write_text(json.dumps(_profile(shas[1], 0.7)))
    return root


def drawn(app) -> str:
    """The whole screen as it would be drawn, as plain text (every segment's text, the toasts included)."""
    console = Console(width=app.size[0], height=app.size[1], file=io.StringIO(), force_terminal=True, record=True,
                      legacy_windows=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text(styles=False)


class Walk:
    def __init__(self, app) -> None:
        self.app = app
        self.problems: list[str] = []
        self.shown = ""

    def look(self, where: str) -> None:
        app = self.app
        text = drawn(app)
        self.shown += text
        for line in text.splitlines():
            if CONTROLS.search(line):
                self.problems.append(f"{where}: drawn {line.strip()!r}")
        for title in (app.title, app.sub_title, app.screen.title, app.screen.sub_title):
            if title and CONTROLS.search(title):
                self.problems.append(f"{where}: title {title!r}")
        for note in app._notifications:
            if CONTROLS.search(f"{note.title} {note.message}"):
                self.problems.append(f"{where}: notification {note.message!r}")


async def test_no_control_character_reaches_the_screen(tmp_path, monkeypatch):
    root = _repository(tmp_path)
    monkeypatch.chdir(root)
    app = PerunApp(root)
    app._control_filter.enabled = False  # the panes alone must escape what they show
    walk = Walk(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        walk.look("main")
        await select_profile(pilot, "0@i")
        await pilot.press("enter")
        await settle(pilot)
        walk.look("details")
        await pilot.press("escape")
        await pilot.press("p")
        await settle(pilot)
        for key in "bfs":
            await pilot.press(key)
            await settle(pilot)
            walk.look(f"plot {key}")
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("c", "h")
        await wait_until(pilot, lambda: not app.screen.running, timeout=60)
        await settle(pilot)
        walk.look("check")
        await pilot.press("enter")
        await settle(pilot)
        walk.look("compare")
        await pilot.press("escape", "escape")
        await settle(pilot)
        await select_profile(pilot, "0@p")
        await pilot.press("m")
        await settle(pilot)
        walk.look("marked")
        await select_profile(pilot, "0@i")
        await pilot.press("d")
        await settle(pilot)
        walk.look("difference")
    assert not walk.problems, "\n".join(walk.problems)
    # the text is there, escaped: the commit subject, the command, the uid, the pending file's name
    for where, text in (("subject", f"second{SEEN}"), ("command", "./app\\e]0;p"), ("uid", f"f{SEEN}\\x00"),
                        ("pending file", f"pending{SEEN}")):
        assert text in walk.shown, f"the {where} is not shown escaped"


def test_the_net_drops_control_characters_and_keeps_the_cells():
    segments = [Segment("ok "), Segment(f"a{EVIL}b\x00\x9b"), Segment("\udc80|")]
    cleaned = ControlFilter().apply(segments, Color(0, 0, 0))
    assert [s.text for s in cleaned] == ["ok ", "a]0;pwnedb", "\ufffd|"]
    assert sum(s.cell_length for s in cleaned) == sum(s.cell_length for s in segments)
    untouched = [Segment("plain")]
    assert ControlFilter().apply(untouched, Color(0, 0, 0)) is untouched
