"""The porcelain of the demo repository: a small C project whose history has real, collected profiles.

``perun-tui --demo`` opens it; :func:`build_demo` builds it once (half a
minute to a few minutes, by the machine's load: :data:`DEMO_DURATION`) and reuses it afterwards.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from ._demo.collected import COLLECTED_DEMO_VERSION, build_collected_demo

from ._demo.staging import marker_of

__all__ = ["DEMO_DURATION", "build_demo", "demo_is_built", "demo_dir", "demo_phase"]

#: how long the build takes, as the front ends say it before it starts: it runs and measures programs, so the
#: machine's load decides (half a minute idle, about 100 s on two cores shared with other work)
DEMO_DURATION = ("It runs and measures the demo's programs: about half a minute on two idle cores, a few minutes "
                 "on a busy machine")

#: the counter a progress step of the build ends in: ``: commit 3/12 (ae868f3)``, `` 3/12``
_COUNTER = re.compile(r":?\s*(?:commit\s+)?\d+/\d+.*$")


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


def demo_phase(step: str) -> str:
    """The phase a progress step of :func:`build_demo` belongs to: the step without its counter.

    ``collecting time profiles: commit 3/12 (ae868f3)`` is in the phase
    ``collecting time profiles``; a step without a counter is a phase of its own.
    """
    return _COUNTER.sub("", step)


def demo_is_built(path: Path | str) -> bool:
    """Whether ``path`` holds a demo of the current version (``build_demo`` would reuse it)."""

    return marker_of(Path(path)) == {"kind": "collected", "version": COLLECTED_DEMO_VERSION}


def build_demo(path: Path | str | None = None, *, progress: Callable[[str], None] | None = None,
               cancel: threading.Event | None = None, on_ready: Callable[[Path], None] | None = None) -> Path:
    """Build the demo at ``path`` (default :func:`demo_dir`) unless built there before; its root.

    ``progress`` gets one line per step.  The build happens in ``path``
    itself: ``on_ready`` gets the root as soon as it opens as a repository
    (the history written, no profile yet), so a front end can show the
    demo while its profiles land (each commit's time profile is registered
    as soon as it is measured); :func:`demo_is_built` is true only once the
    build is complete.  A build stopped by ``cancel`` or failing removes
    ``path``; a build killed outright is found and done again by the next
    call; a second call while a build runs waits for it.  Raises UsageError
    (``path`` holds something else), ExternalToolError (cc, make or
    binutils missing), Interrupted.
    """

    return build_collected_demo(path if path is not None else demo_dir(), progress=progress, cancel=cancel,
                                on_ready=on_ready)
