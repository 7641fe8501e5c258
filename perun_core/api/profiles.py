"""The porcelain of single profiles: look one up (spec section 3.2.16) and load it.

A spec is a tag (``0@i`` registered at a minor version, ``0@p`` pending), a
profile's name in the index or a path; plain files work outside a perun
repository too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import NotPerunRepository
from ..storage.lookup import TAG, find_profile
from ..storage.repository import PerunRepository


if TYPE_CHECKING:
    from ..profile.model import Profile

__all__ = ["LoadedProfile", "load_profile"]

@dataclass(slots=True)
class LoadedProfile:
    profile: Profile
    source: str
    kind: str  # "index", "pending" or "file"
    minor: str | None


def load_profile(
    spec: str,
    *,
    minor: str | None = None,
    repo: PerunRepository | None = None,
    cwd: Path | str | None = None,
) -> LoadedProfile:
    """Look a profile up (§3.2.16) and load it.

    Outside a perun repository plain file paths still work.
    """
    if repo is not None:
        return _load_in(repo, spec, minor)
    try:
        opened = PerunRepository.discover(cwd)
    except NotPerunRepository:
        if minor is not None or TAG.match(spec.strip()):
            raise
        item = find_profile(None, spec, None, allow=("file",))
        return LoadedProfile(item.load(None), item.source, item.kind, None)
    with opened:
        return _load_in(opened, spec, minor)


def _load_in(repo: PerunRepository, spec: str, minor: str | None) -> LoadedProfile:
    # The VCS is only opened when the spec may name a registered profile.
    needs_index = minor is not None or not Path(spec).expanduser().is_file()
    target = repo.resolve_minor(minor) if needs_index else None
    item = find_profile(repo, spec, target)
    return LoadedProfile(item.load(repo), item.source, item.kind, item.minor)
