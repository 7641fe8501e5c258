"""Sharing profiles through git remotes: push, fetch, pull (see :mod:`.sync` and :mod:`.layout`).

This package's own namespace holds only what ``status`` asks on every run
(whether any transfer ever left state behind), so that question loads none
of the transfer machinery.
"""

from __future__ import annotations

from pathlib import Path

#: The bare git repository inside ``.perun`` that holds every remote's objects.
PRIVATE_DIR = "remote"
#: What each remote looked like at the last transfer, in :data:`PRIVATE_DIR`.
TRACKING_FILE = "tracking.json"


def has_transferred(perun_dir: Path | str) -> bool:
    """Whether a push, fetch or pull ever stored objects for the ``.perun`` at ``perun_dir``."""
    return (Path(perun_dir) / PRIVATE_DIR / "objects").is_dir()
