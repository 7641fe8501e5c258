"""Finding the profile a user means (spec 001 §3.2.16).

In order: an index tag ``i@i`` of the minor version, a pending tag ``i@p``,
a registered profile whose source name matches, a file path, then a pending
profile whose name matches exactly, without its extension, or as a unique
substring.  The original tool's last step, an interactive walk of the whole
directory tree, is left to front ends: the core never asks questions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import sort_key
from ..errors import InvalidProfile, ProfileNotFound, TagOutOfRange, UsageError
from .repository import PerunRepository, ProfileInfo

if TYPE_CHECKING:
    from ..profile.model import Profile

TAG = re.compile(r"^(\d+)@([ip])$")


@dataclass(frozen=True, slots=True)
class FoundProfile:
    """Where a profile spec led: a registered entry, a pending file or a plain file."""

    kind: str  # "index", "pending" or "file"
    spec: str
    minor: str | None
    info: ProfileInfo | None
    path: Path | None

    @property
    def source(self) -> str:
        if self.info is not None:
            return self.info.source
        return str(self.path)

    def load(self, repo: PerunRepository | None) -> Profile:
        if self.kind == "index":
            assert repo is not None and self.info is not None and self.info.checksum
            return repo.objects.read_profile(self.info.checksum)
        assert self.path is not None
        # lazy: resolving a spec (status, log, add) never parses a profile file
        from ..profile.codec import load_profile_from_file

        return load_profile_from_file(self.path)


def sort_key_of(repo: PerunRepository) -> str:
    return sort_key(repo.config.get_or("format.sort_profiles_by", "time"))


def find_profile(
    repo: PerunRepository | None,
    spec: str,
    minor: str | None,
    *,
    allow: tuple[str, ...] = ("index", "pending", "file"),
) -> FoundProfile:
    """Resolve one profile spec; ``minor`` is a full SHA (needed for index lookups)."""
    if not spec.strip():
        # an empty text is part of every name: it would pick the only pending profile
        raise UsageError("no profile named: expected a tag (0@i, 0@p), a name or a path, got an empty text")
    tag = TAG.match(spec.strip())
    if tag:
        number, where = int(tag.group(1)), tag.group(2)
        kind = "index" if where == "i" else "pending"
        if kind not in allow:
            raise UsageError(f"'{spec}': {'index' if where == 'i' else 'pending'} tags cannot be used here")
        if repo is None:
            raise ProfileNotFound(spec, "(tags need a perun repository)")
        if kind == "index":
            assert minor is not None
            infos = repo.registered_infos(minor, sort_key_of(repo))
            if number >= len(infos):
                raise TagOutOfRange(spec, len(infos), "registered", f"at {minor[:7]}")
        else:
            # repository-wide, as the original Perun numbers its jobs directory (storage.pending)
            infos = repo.pending_infos(sort_key_of(repo))
            if number >= len(infos):
                raise TagOutOfRange(spec, len(infos), "pending")
        info = infos[number]
        return FoundProfile(kind, spec, minor if kind == "index" else None, info, info.path)

    if repo is not None and "index" in allow and minor is not None:
        for info in repo.registered_infos(minor, sort_key_of(repo)):
            if spec in (info.source, Path(info.source).name) or (len(spec) >= 7 and (info.checksum or "").startswith(spec)):
                return FoundProfile("index", spec, minor, info, None)

    candidate = Path(spec).expanduser()
    if "file" in allow and candidate.is_file():
        if repo is not None and candidate.resolve().parent == repo.jobs_dir.resolve() and "pending" in allow:
            return _pending_by_name(repo, candidate.name, spec) or FoundProfile("file", spec, None, None, candidate)
        return FoundProfile("file", spec, None, None, candidate)

    if repo is not None and "pending" in allow:
        found = _pending_by_name(repo, spec, spec)
        if found is not None:
            return found
        pending = repo.pending_infos(sort_key_of(repo))
        partial = [i for i in pending if spec in i.source]
        if len(partial) == 1:
            return FoundProfile("pending", spec, None, partial[0], partial[0].path)
        if len(partial) > 1:
            names = ", ".join(i.source for i in partial[:5])
            raise UsageError(f"'{spec}' matches {len(partial)} pending profiles ({names}); be more specific or use a tag")
    if "file" in allow and candidate.exists():
        kind = "a directory" if candidate.is_dir() else "not a regular file"
        raise InvalidProfile(candidate, None, f"is {kind}; expected a profile file (JSON)")
    raise ProfileNotFound(spec)


def _pending_by_name(repo: PerunRepository, name: str, spec: str) -> FoundProfile | None:
    for info in repo.pending_infos(sort_key_of(repo)):
        if name == info.source or name == Path(info.source).stem:
            return FoundProfile("pending", spec, None, info, info.path)
    return None

