"""Save SVG screenshots of perun-tui on the demo repository into this directory.

    .venv/bin/python screenshots/make_screenshots.py

The demo is built in a temporary directory with a scrubbed HOME and TZ=UTC,
so the pictures come out the same on every machine.  Each picture is a
screen reached by keys from the start, as a user would.
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


async def settle(pilot) -> None:
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


async def select_profile(pilot, tag: str, commit: int = 0) -> None:
    from perun_tui.widgets.history import HistoryView
    from perun_tui.widgets.profiles import ProfilesTable

    pilot.app.query_one(HistoryView).cursor = commit
    await pilot.pause()
    table = pilot.app.query_one(ProfilesTable)
    table.focus()
    table.move_cursor(row=table.get_row_index(tag))
    await pilot.pause()


async def details(pilot) -> None:
    await select_profile(pilot, "1@i")
    await pilot.press("enter")


async def plot(pilot) -> None:
    await select_profile(pilot, "1@i")
    await pilot.press("p")
    await settle(pilot)
    await pilot.press("right")  # the uid whose time grows with the list


async def heapmap(pilot) -> None:
    await select_profile(pilot, "1@i", commit=2)  # the demo's third commit has a memory profile
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


async def compare(pilot) -> None:
    await check(pilot)
    await pilot.press("enter")  # the first degradation: its baseline and target side by side


#: name -> how to get there from the main screen (None: the main screen itself)
SHOTS = {"main": None, "keys": keys, "details": details, "plot": plot, "heapmap": heapmap, "flamegraph": flamegraph,
         "matrix": matrix, "run": run, "check": check, "compare": compare}


async def shoot(root: Path, size: tuple[int, int], name: str) -> Path:
    from perun_tui.app import PerunApp

    app = PerunApp(root)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        prepare = SHOTS[name]
        if prepare is not None:
            await prepare(pilot)
            await settle(pilot)
        filename = f"{name}-{size[0]}x{size[1]}.svg"
        app.save_screenshot(filename=filename, path=str(HERE))
    return HERE / filename


def write_matrix(root: Path, *, postprocess: bool = True) -> None:
    """A job matrix like a user of the demo would write, for the matrix editor's and the run's pictures."""
    from perun_core.config import Config

    config = Config.load(root / ".perun" / "local.yml", kind="local")
    config.set("execute.pre_run", ["make"])
    config.set("cmds", ["./sll-bench"])
    config.set("args", ["--iterations 1000"])
    config.set("workloads", ["workloads/small.txt", "workloads/large.txt"])
    config.set("collectors", [{"name": "time", "params": {"repeat": 5, "warmup": 1}}])
    if postprocess:
        config.set("postprocessors", [{"name": "regression_analysis", "params": {"method": "full"}}])
    config.save()


def main() -> int:
    os.environ["TZ"] = "UTC"
    time.tzset()
    with tempfile.TemporaryDirectory(prefix="perun-screens-") as scratch:
        os.environ["HOME"] = scratch
        os.environ["PERUN_CONFIG_DIR"] = str(Path(scratch) / "perun-config")
        from perun_core.demo import build_demo_repository

        saved = []
        for size in SIZES:
            for name in SHOTS:
                # a fresh demo for each picture: a check stores its results, which the history then shows
                root = build_demo_repository(Path(scratch) / f"sll-{name}-{size[0]}")
                if name in ("matrix", "run"):
                    write_matrix(root, postprocess=name == "matrix")
                saved.append(asyncio.run(shoot(root, size, name)))
    for path in saved:
        sys.stdout.write(f"{path.relative_to(HERE.parent)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
