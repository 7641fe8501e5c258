"""Which commit a pending profile is listed under, and the ``i@p`` tags of each commit's list.

A pending profile belongs to the commit its ``origin`` names (a full sha,
or a prefix of at least 7 digits as older files have).  One that records no
such origin, or cannot be read at all, belongs to no commit; it is listed under
HEAD, so it stays in sight to be fixed, registered with ``--force`` or
deleted.  ``i@p`` numbers one commit's list from 0 in the order of
``format.sort_profiles_by``: a commit's tags never depend on the pending
profiles of other commits.
"""

from __future__ import annotations

from collections.abc import Iterable

from .repository import ProfileInfo, tagged

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
        """The pending profiles listed under ``minor``, tagged ``0@p`` onwards."""
        found = list(self._full.get(minor, ()))
        found += [info for info in self._short if belongs_to(info, minor, self.head)]
        if minor == self.head:
            found += self._orphans
        return tagged(found, self.sort_key, "p")
