"""Save SVG screenshots of perun-tui on the demo repository into this directory.

    .venv/bin/python screenshots/make_screenshots.py

The demo is built in a temporary directory with a scrubbed HOME and TZ=UTC,
so the pictures come out the same on every machine.
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


async def shoot(root: Path, size: tuple[int, int], name: str, details: bool = False) -> Path:
    from perun_tui.app import PerunApp
    from perun_tui.widgets.profiles import ProfilesTable

    app = PerunApp(root)
    async with app.run_test(size=size) as pilot:
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        if details:
            table = app.query_one(ProfilesTable)
            table.focus()
            table.move_cursor(row=table.get_row_index("1@i"))
            await pilot.press("enter")
            for _ in range(3):
                await app.workers.wait_for_complete()
                await pilot.pause()
        filename = f"{name}-{size[0]}x{size[1]}.svg"
        app.save_screenshot(filename=filename, path=str(HERE))
    return HERE / filename


def main() -> int:
    os.environ["TZ"] = "UTC"
    time.tzset()
    with tempfile.TemporaryDirectory(prefix="perun-screens-") as scratch:
        os.environ["HOME"] = scratch
        os.environ["PERUN_CONFIG_DIR"] = str(Path(scratch) / "perun-config")
        from perun_core.demo import build_demo_repository

        root = build_demo_repository(Path(scratch) / "sll")
        saved = []
        for size in SIZES:
            saved.append(asyncio.run(shoot(root, size, "main")))
            saved.append(asyncio.run(shoot(root, size, "details", details=True)))
    for path in saved:
        sys.stdout.write(f"{path.relative_to(HERE.parent)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
