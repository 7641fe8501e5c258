"""Pairing target profiles with their baselines in the history (spec 001 §3.2.14, §8).

The baseline of a registered profile is the newest profile of the same
configuration (command, arguments, workload, collector, postprocessors) in
the *nearest* predecessor version that has one: the parents are searched
breadth first, first parents before second ones, so a merge finds its
baseline on whichever side is closer.  Versions without an index are walked
through, not stopped at.

Pending profiles take part too (``include_pending``, the default): a profile
that ``run`` or ``collect`` left in ``.perun/jobs`` belongs to the version
its ``origin`` names, so ``init``, ``run matrix`` on two commits and ``check
head`` find a change without a manual ``add``.  They are marked ``pending``
in every report.  Within one version a registered profile of a
configuration is preferred to a pending one as the baseline, since the user
chose it; among pending profiles of one configuration only the newest one
counts (an earlier run of the same job is superseded, not compared twice).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..profile.codec import load_profile_from_file
from .data import ProfileData, config_key, describe_config

if TYPE_CHECKING:  # pragma: no cover
    from ..storage.repository import PerunRepository, ProfileInfo

__all__ = ["Pairing", "ProfileCache", "ProfileRef"]


@dataclass(frozen=True, slots=True)
class ProfileRef:
    """A checked profile as reports show it.

    ``kind`` is ``index`` (registered at ``minor``), ``pending`` (in
    ``.perun/jobs``, made at ``minor``) or ``file``; ``name`` is how reports
    name it: the path given for files, ``<sha7>:<source>`` for registered
    profiles and ``<sha7>:<source> (pending)`` for pending ones of a version.
    """

    source: str
    kind: str
    minor: str | None
    checksum: str | None
    type: str
    config: str
    #: the first line of the commit message of ``minor`` (when known)
    desc: str = ""

    @property
    def name(self) -> str:
        if self.kind == "index" and self.minor:
            return f"{self.minor[:7]}:{self.source}"
        if self.kind == "pending" and self.minor:
            return f"{self.minor[:7]}:{self.source} (pending)"
        return self.source

    @property
    def pending(self) -> bool:
        return self.kind == "pending"

    def to_record(self) -> dict[str, str | None]:
        return {"source": self.source, "kind": self.kind, "minor": self.minor, "checksum": self.checksum,
                "type": self.type, "config": self.config, "desc": self.desc}

    @classmethod
    def from_record(cls, record: dict) -> ProfileRef:
        return cls(str(record.get("source", "")), str(record.get("kind", "index")), record.get("minor"),
                   record.get("checksum"), str(record.get("type", "")), str(record.get("config", "")),
                   str(record.get("desc", "")))


def ref_of_info(info: ProfileInfo, minor: str, desc: str = "") -> ProfileRef:
    kind = "index" if info.registered else "pending"
    return ProfileRef(info.source, kind, minor, info.checksum, info.type, describe_config(info), desc)


def profile_key(info: ProfileInfo) -> str | None:
    """What identifies the content of ``info`` for the cache: its checksum, or a pending file's path and stamp."""
    if info.checksum:
        return info.checksum
    if info.path is None:
        return None
    try:
        stat = info.path.stat()
    except OSError:
        return None
    return f"pending:{info.path}:{stat.st_size}:{stat.st_mtime_ns}"


class ProfileCache:
    """Profiles of the object store as :class:`ProfileData`, the most recently used ``capacity`` kept."""

    def __init__(self, repo: PerunRepository, capacity: int = 48) -> None:
        self.repo = repo
        self.capacity = capacity
        self._items: OrderedDict[str, ProfileData] = OrderedDict()

    def get_info(self, info: ProfileInfo, label: str = "") -> ProfileData:
        """The profile of a registered or a pending ``info``."""
        key = profile_key(info)
        if info.checksum or key is None or info.path is None:
            return self.get(info.checksum or "", label)
        found = self._items.get(key)
        if found is not None:
            self._items.move_to_end(key)
            return found

        return self._keep(key, ProfileData(load_profile_from_file(info.path), label=label), label)

    def get(self, checksum: str, label: str = "") -> ProfileData:
        found = self._items.get(checksum)
        if found is not None:
            self._items.move_to_end(checksum)
            return found
        return self._keep(checksum, ProfileData(self.repo.objects.read_profile(checksum), label=label), label)

    def _keep(self, checksum: str, full: ProfileData, label: str) -> ProfileData:
        # keep what a check reads, not the (possibly huge) resources
        data = full.light()
        self._items[checksum] = data
        if len(self._items) > self.capacity:
            self._items.popitem(last=False)
        return data


class Pairing:
    """Finds baselines in one repository, caching indexes and parents.

    ``parents`` may be given (``check all`` knows the whole history from its
    walk); otherwise parents are read commit by commit.
    """

    def __init__(self, repo: PerunRepository, parents: dict[str, tuple[str, ...]] | None = None,
                 sort_key: str = "time", include_pending: bool = True) -> None:
        self.repo = repo
        self.include_pending = include_pending
        self._pending: dict[str, list[ProfileInfo]] | None = None
        #: per origin, (superseded, newer) pending profiles of one configuration: the older is left out of checks
        self._superseded: dict[str, list[tuple[ProfileInfo, ProfileInfo]]] = {}
        self._parents = dict(parents or {})
        self._infos: dict[str, list[ProfileInfo]] = {}
        self._sort_key = sort_key
        self._baselines: dict[tuple[str, tuple], tuple[str, ProfileInfo] | None] = {}

    def parents(self, minor: str) -> tuple[str, ...]:
        found = self._parents.get(minor)
        if found is None:
            try:
                found = tuple(self.repo.vcs.minor_info(minor).parents)
            except Exception:  # noqa: BLE001 - a missing parent (shallow clone) ends the search there
                found = ()
            self._parents[minor] = found
        return found

    def desc(self, minor: str) -> str:
        """The first line of the commit message of ``minor``."""
        try:
            return self.repo.vcs.minor_info(minor).short_desc
        except Exception:  # noqa: BLE001 - a description is only decoration
            return ""

    def infos(self, minor: str) -> list[ProfileInfo]:
        """Registered profiles of ``minor`` ([] without an index), then its pending ones (see the module)."""
        found = self._infos.get(minor)
        if found is None:
            found = self.repo.registered_infos(minor, self._sort_key) if self.repo.has_index(minor) else []
            # a pending file registered with 'add --keep-profile' is the same measurement as its entry
            registered = {(info.source, config_key(info)) for info in found}
            found = found + [info for info in self.pending_of(minor)
                             if (info.source, config_key(info)) not in registered]
            self._infos[minor] = found
        return found

    def pending_of(self, minor: str) -> list[ProfileInfo]:
        """The newest valid pending profile of each configuration whose origin is ``minor``."""
        if not self.include_pending:
            return []
        if self._pending is None:
            newest: dict[tuple[str, tuple], ProfileInfo] = {}
            older: dict[tuple[str, tuple], list[ProfileInfo]] = {}
            for info in self.repo.pending_infos(self._sort_key):
                if info.error is not None or not info.origin or info.path is None:
                    continue
                key = (info.origin, config_key(info))
                if key in newest:
                    kept, left = (info, newest[key]) if info.time > newest[key].time else (newest[key], info)
                    older.setdefault(key, []).append(left)
                    newest[key] = kept
                else:
                    newest[key] = info
            self._superseded = {}
            for key, infos in older.items():
                for info in infos:
                    self._superseded.setdefault(key[0], []).append((info, newest[key]))
            grouped: dict[str, list[ProfileInfo]] = {}
            for (origin, _config), info in newest.items():
                grouped.setdefault(origin, []).append(info)
            self._pending = {origin: sorted(infos, key=lambda i: int(i.tag.split("@")[0])) for origin, infos in grouped.items()}
        return list(self._pending.get(minor, ()))

    def superseded_lines(self, minor: str) -> list[str]:
        """One line per pending profile of ``minor`` left out because a newer one of its configuration is pending."""
        self.pending_of(minor)
        lines = []
        for old, new in sorted(self._superseded.get(minor, ()), key=lambda pair: int(pair[0].tag.split("@")[0])):
            # the tags and the reason first: a narrow status line cuts the file names at its end
            lines.append(f"skipped {old.tag}: {new.tag} is a newer pending profile of the same job and only the "
                         f"newest is checked ({old.source}; newer: {new.source})")
        return lines

    def versions_with_pending(self) -> set[str]:
        """Versions that pending profiles name as their origin."""
        self.pending_of("")
        return set(self._pending or ())

    def forget(self, minor: str) -> None:
        """Drop what is cached about ``minor`` (profiles were just registered there)."""
        self._infos.pop(minor, None)
        self._pending = None
        self._baselines.clear()

    def baseline_of(self, minor: str, info: ProfileInfo) -> tuple[str, ProfileInfo] | None:
        """The nearest predecessor of ``minor`` holding a profile of ``info``'s configuration."""
        key = config_key(info)
        memo = self._baselines.get((minor, key), False)
        if memo is not False:
            return memo  # type: ignore[return-value]
        found = self._search(minor, lambda candidate: [i for i in self.infos(candidate) if config_key(i) == key])
        self._baselines[(minor, key)] = found
        return found

    def _search(self, minor: str, matching: Callable[[str], list[ProfileInfo]]) -> tuple[str, ProfileInfo] | None:
        seen = {minor}
        queue = deque(self.parents(minor))
        seen.update(queue)
        while queue:
            candidate = queue.popleft()
            hits = matching(candidate)
            if hits:
                registered = [i for i in hits if i.registered]
                return candidate, max(registered or hits, key=lambda i: i.time)
            for parent in self.parents(candidate):
                if parent not in seen:
                    seen.add(parent)
                    queue.append(parent)
        return None

    def chain(self, minor: str, info: ProfileInfo, length: int) -> list[tuple[str, ProfileInfo]]:
        """Up to ``length`` predecessors of the same configuration, oldest first (the target excluded)."""
        out: list[tuple[str, ProfileInfo]] = []
        current: tuple[str, ProfileInfo] | None = (minor, info)
        while current is not None and len(out) < length:
            current = self.baseline_of(*current)
            if current is not None:
                out.append(current)
        out.reverse()
        return out
