"""The low-bandwidth mode's frame rate, given to textual the way textual takes it.

textual reads ``TEXTUAL_FPS`` from the environment once, when
``textual.constants`` is first imported, and draws at most that many frames
a second.  ``perun-tui --low-bandwidth`` (or ``PERUN_LOW_BANDWIDTH=1``) sets
it with :func:`cap_frame_rate` before anything of textual is imported (the
command line imports textual only after parsing its arguments); an app built
after textual was loaded (from Python, in tests) falls back to
:func:`perun_tui.app.cap_loaded_frame_rate`.
"""

from __future__ import annotations

import os

__all__ = ["LOW_BANDWIDTH_FPS", "cap_frame_rate"]

#: frames a second at most in the low-bandwidth mode (textual draws up to 60)
LOW_BANDWIDTH_FPS = 10


def cap_frame_rate(environ: dict[str, str] | os._Environ = os.environ) -> None:
    """Ask textual for at most :data:`LOW_BANDWIDTH_FPS` frames a second (a lower rate already asked for stays)."""
    try:
        asked = int(environ.get("TEXTUAL_FPS", ""))
    except ValueError:
        asked = 0
    if not 1 <= asked <= LOW_BANDWIDTH_FPS:
        environ["TEXTUAL_FPS"] = str(LOW_BANDWIDTH_FPS)
