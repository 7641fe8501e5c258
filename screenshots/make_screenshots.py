"""Save SVG screenshots of perun-tui on the demo repository into this directory.

    make screenshots        # or: .venv/bin/python screenshots/make_screenshots.py

The demo that ``perun-tui --demo`` opens (its profiles collected by the real
collectors, so it needs cc and make) is built once in a temporary directory
with a scrubbed HOME and TZ=UTC, and copied afresh for every picture (a check
stores its results, which the history then shows).  Commits, dates and
authors are fixed; the measured numbers are whatever this machine measured.
Each picture is a screen reached by keys from the start, as a user would;
the last one is the notice of a terminal under the least size (40x12).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZES = ((80, 24), (120, 40))
#: the too-small screen is pictured at this size only
TOO_SMALL = (36, 10)


async def settle(pilot) -> None:
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


#: positions in the demo's history, newest first
HEAD, FIX, REGRESSION = 0, 2, 5


async def select_profile(pilot, kind: str, commit: int = HEAD) -> None:
    """The history cursor on the ``commit``-th commit, the profiles cursor on its first registered ``kind`` profile."""
    from perun_tui.widgets.history import HistoryView
    from perun_tui.widgets.profiles import ProfilesTable

    pilot.app.query_one(HistoryView).cursor = commit
    await settle(pilot)
    table = pilot.app.query_one(ProfilesTable)
    table.focus()
    tag = next(tag for tag, info in table.infos.items() if info.type == kind and info.registered)
    table.move_cursor(row=table.get_row_index(tag))
    await pilot.pause()


async def details(pilot) -> None:
    await select_profile(pilot, "mixed", commit=REGRESSION)
    await pilot.press("enter")


async def plot(pilot) -> None:
    from perun_tui.widgets.plot import ChartView

    await select_profile(pilot, "mixed", commit=REGRESSION)
    await pilot.press("p")
    await settle(pilot)
    chart = pilot.app.screen.query_one(ChartView)
    for _ in range(8):  # on to the function the regression made linear
        if chart.picture is not None and "uid: sll_insert" in chart.picture.plain:
            break
        await pilot.press("right")
        await settle(pilot)


async def heapmap(pilot) -> None:
    await select_profile(pilot, "memory")
    await pilot.press("p")


async def flamegraph(pilot) -> None:
    await heapmap(pilot)
    await settle(pilot)
    await pilot.press("f")
    await settle(pilot)
    await pilot.press("down", "down")  # onto the frame that allocates the list's nodes


async def keys(pilot) -> None:
    await pilot.press("question_mark")


async def run(pilot) -> None:
    await pilot.press("R")
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await settle(pilot)


async def matrix(pilot) -> None:
    await pilot.press("e")
    while not getattr(pilot.app.screen, "loaded", False):
        await pilot.pause(0.05)
    pilot.app.animation_level = "none"  # the tab underline jumps instead of sliding
    await pilot.press("right")
    await settle(pilot)


async def check(pilot) -> None:
    await pilot.press("c")
    await settle(pilot)
    await pilot.press("a")
    while getattr(pilot.app.screen, "running", True):
        await pilot.pause(0.1)
    await settle(pilot)
    await pilot.press("f", "f")  # only the degradations


async def diff(pilot) -> None:
    """The time profile of the regression's commit marked, then its difference to HEAD's time profile."""
    await select_profile(pilot, "time", commit=REGRESSION)
    await pilot.press("m")
    await select_profile(pilot, "time")
    await pilot.press("d")
    await settle(pilot)
    while getattr(pilot.app.screen, "result", None) is None:
        await pilot.pause(0.05)
    pilot.app.clear_notifications()


async def fuzz(pilot) -> None:
    pilot.app.screen.action_fuzz()
    while not pilot.app.screen.query("#field-cmd"):
        await pilot.pause(0.05)


async def compare(pilot) -> None:
    await check(pilot)
    await pilot.press("enter")  # the first degradation: its baseline and target side by side


#: name -> how to get there from the main screen (None: the main screen itself)
SHOTS = {"main": None, "keys": keys, "details": details, "plot": plot, "heapmap": heapmap, "flamegraph": flamegraph,
         "matrix": matrix, "run": run, "check": check, "compare": compare, "diff": diff, "fuzz": fuzz}


async def shoot(root: Path, size: tuple[int, int], name: str) -> Path:
    from perun_tui.app import PerunApp

    app = PerunApp(root)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        prepare = SHOTS[name]
        if prepare is not None:
            await prepare(pilot)
            await settle(pilot)
        small = size == TOO_SMALL
        filename = f"{'too-small' if small else name}-{size[0]}x{size[1]}.svg"
        app.save_screenshot(filename=filename, path=str(HERE))
    return HERE / filename


def main() -> int:
    os.environ["TZ"] = "UTC"
    time.tzset()
    with tempfile.TemporaryDirectory(prefix="perun-screens-") as scratch:
        os.environ["HOME"] = scratch
        os.environ["PERUN_CONFIG_DIR"] = str(Path(scratch) / "perun-config")
        import shutil

        from perun_core.api._demo.collected import build_collected_demo

        template = build_collected_demo(Path(scratch) / "template", progress=lambda step: print(step, file=sys.stderr))
        saved = []
        shots = [(size, name) for size in SIZES for name in SHOTS] + [(TOO_SMALL, "main")]
        for size, name in shots:
            root = Path(scratch) / "sll"
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(template, root, symlinks=True)
            saved.append(asyncio.run(shoot(root, size, name)))
    for path in saved:
        sys.stdout.write(f"{path.relative_to(HERE.parent)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
