"""Text from profiles, made safe for terminals (front ends escape what they did not write), measured values as text,
and advice naming its settings in the words of a front end."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

from ..advice import in_words_of
from ..amounts import (UNIT_SPACE, amount_scale, format_amount, format_change, format_percent, nice_ticks,
                       relative_change, wrap_text)
from ..safetext import drop_controls, escape_controls, escape_lines, escape_output, has_controls, json_bytes_safe

__all__ = ["UNIT_SPACE", "amount_scale", "commit_time", "drop_controls", "escape_controls", "escape_lines", "escape_output", "format_amount",
           "format_change", "format_percent", "has_controls", "in_words_of", "json_bytes_safe", "local_time", "nice_ticks", "relative_change",
           "wrap_text"]


def commit_time(epoch: int, tz_offset: int, *, clock: bool = True, seconds: bool = False) -> str:
    """A commit's date in its own time zone with that zone (``2024-05-03 03:00 +0100``), as ``git log`` shows it.

    Every front end shows a commit's time this way, never in the viewer's zone without saying so: one commit
    reads the same in ``perun-core log`` and in perun-tui.  ``clock`` False gives the date alone.
    """
    moment = datetime.fromtimestamp(epoch, timezone(timedelta(seconds=tz_offset)))
    if not clock:
        return moment.strftime("%Y-%m-%d")
    return moment.strftime("%Y-%m-%d %H:%M:%S %z" if seconds else "%Y-%m-%d %H:%M %z")


def local_time(epoch: float, *, seconds: bool = False, zone: bool = True) -> str:
    """When a profile was collected or registered, in the viewer's time zone, with that zone unless ``zone``
    is False (a table that names the zone in its header)."""
    moment = time.localtime(epoch)
    text = time.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M", moment)
    return f"{text} {time.strftime('%z', moment)}" if zone else text
