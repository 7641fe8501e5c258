"""Which commit a pending profile is listed under, and the ``i@p`` tags of each commit's list.

A pending profile belongs to the commit its ``origin`` names (a full sha,
or a prefix of at least 7 digits as older files have).  One that records no
such origin, or cannot be read at all, belongs to no commit; it is listed under
HEAD, so it stays in sight to be fixed, registered with ``--force`` or
deleted.  ``i@p`` numbers every pending profile of the repository from 0 in
the order of ``format.sort_profiles_by``, as the original Perun numbers its
``jobs`` directory: a commit lists its own with those tags, so ``0@p`` and
``1@p`` name the same two profiles whichever commit is looked at (``check
profiles 0@p 1@p`` compares the pending profiles of two commits).
"""

from __future__ import annotations

from collections.abc import Iterable

from .repository import ProfileInfo

#: the shortest origin taken as a commit prefix (as ``add`` accepts it)
MIN_ORIGIN = 7


def belongs_to(info: ProfileInfo, minor: str, head: str | None) -> bool:
    """Whether pending ``info`` is listed under commit ``minor`` (a full sha; ``head`` is HEAD's)."""
    origin = (info.origin or "").lower()
    if len(origin) >= MIN_ORIGIN and info.error is None:
        return minor.startswith(origin)
    return head is not None and minor == head


class PendingByCommit:
    """All pending profiles grouped once by origin, then asked per commit (``log`` asks for every one)."""

    def __init__(self, infos: Iterable[ProfileInfo], sort_key: str, head: str | None) -> None:
        self.sort_key = sort_key
        self.head = head
        self._full: dict[str, list[ProfileInfo]] = {}
        self._short: list[ProfileInfo] = []
        self._orphans: list[ProfileInfo] = []
        for info in infos:
            origin = (info.origin or "").lower()
            if len(origin) < MIN_ORIGIN or info.error is not None:
                self._orphans.append(info)
            elif len(origin) == 40:
                self._full.setdefault(origin, []).append(info)
            else:
                self._short.append(info)

    def of(self, minor: str) -> list[ProfileInfo]:
        """The pending profiles listed under ``minor``, with their repository-wide tags, in tag order."""
        found = list(self._full.get(minor, ()))
        found += [info for info in self._short if belongs_to(info, minor, self.head)]
        if minor == self.head:
            found += self._orphans
        return sorted(found, key=_tag_number)


def _tag_number(info: ProfileInfo) -> int:
    number, _, _ = (info.tag or "").partition("@")
    return int(number) if number.isdigit() else -1
