"""The porcelain of the demo repository: a small C project whose history has real, collected profiles.

``perun-tui --demo`` opens it; :func:`build_demo` builds it once (about half
a minute) and reuses it afterwards.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from ._demo.collected import COLLECTED_DEMO_VERSION, build_collected_demo

from ._demo.staging import marker_of

__all__ = ["build_demo", "demo_is_built", "demo_dir"]


def demo_dir() -> Path:
    """Where the demo lives unless told otherwise: the user's cache, else the temp directory.

    The name carries the demo's version, so a newer demo is built afresh.
    """

    name = f"demo-collected-{COLLECTED_DEMO_VERSION}"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    candidate = Path(cache) / "perun" / name
    try:
        candidate.parent.mkdir(parents=True, exist_ok=True)
        return candidate
    except OSError:
        return Path(tempfile.gettempdir()) / f"perun-{name}-{os.getuid()}"


def demo_is_built(path: Path | str) -> bool:
    """Whether ``path`` holds a demo of the current version (``build_demo`` would reuse it)."""

    return marker_of(Path(path)) == {"kind": "collected", "version": COLLECTED_DEMO_VERSION}


def build_demo(path: Path | str | None = None, *, progress: Callable[[str], None] | None = None,
               cancel: threading.Event | None = None) -> Path:
    """Build the demo at ``path`` (default :func:`demo_dir`) unless built there before; its root.

    ``progress`` gets one line per step.  Raises UsageError (``path`` holds
    something else), ExternalToolError (cc, make or binutils missing),
    Interrupted.
    """

    return build_collected_demo(path if path is not None else demo_dir(), progress=progress, cancel=cancel)
