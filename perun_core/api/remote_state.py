"""``remote_status``: what the last transfers saw of each remote, read without contacting any.

Apart from :mod:`.remote` because ``status`` asks it on every run: the
sharing engine is loaded only when a transfer ever left state to report.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..remote import has_transferred
from ..storage.repository import PerunRepository
from ._repo import using as _using

if TYPE_CHECKING:
    from ..remote.sync import RemoteState

__all__ = ["remote_status"]


def remote_status(*, repo: PerunRepository | None = None, cwd: Path | str | None = None) -> list[RemoteState]:
    """Profiles only here / only there per remote, as of the last transfer (no network)."""
    with _using(repo, cwd) as r:
        if not has_transferred(r.perun_dir):
            return []
        # lazy: the transfer machinery (and dulwich's object store) only once something was transferred
        from ..remote.sync import remote_states

        return remote_states(r)
