"""Small text helpers shared by the panes."""

from __future__ import annotations

import time
from pathlib import Path
from datetime import datetime, timedelta, timezone

from rich.cells import cell_len, set_cell_size


def commit_date(epoch: int, tz_offset: int, *, with_time: bool = False) -> str:
    """A commit's date in its own time zone, as ``git log`` shows it (so never the viewer's)."""
    moment = datetime.fromtimestamp(epoch, timezone(timedelta(seconds=tz_offset)))
    if not with_time:
        return moment.strftime("%Y-%m-%d")
    return moment.strftime("%Y-%m-%d %H:%M %z")


def local_time(epoch: float) -> str:
    """When a profile was collected or registered, in the viewer's time zone."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch))


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells (ending in an ellipsis when cut) or padded to it."""
    if width <= 0:
        return ""
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…"
    return set_cell_size(text, width)


def display_path(path: Path, *, limit: int = 48) -> str:
    """``path`` with the home directory as ``~`` and, past ``limit`` cells, only its last parts after ``…/``."""
    text = str(path)
    home = str(Path.home())
    if home not in ("", "/") and (text == home or text.startswith(home + "/")):
        text = "~" + text[len(home):]
    if cell_len(text) <= limit:
        return text
    parts = Path(text).parts
    tail = parts[-1]
    for part in reversed(parts[:-1]):
        if cell_len(f"…/{part}/{tail}") > limit:
            break
        tail = f"{part}/{tail}"
    return f"…/{tail}"
