"""Walking the history from a commit, with an on-disk cache of finished walks: the history part of GitVcs."""

from __future__ import annotations

import contextlib
import heapq
import os
from collections.abc import Iterator
from pathlib import Path

from .. import cachefile
from ..errors import InvalidRevision
from .constants import _COMMIT
from .commits import MinorVersion, _new_minor, _parse_commit
from .constants import _HEX40, HISTORY_CACHE_LIMIT, HISTORY_CACHE_VERSION, _CACHE_NAME


class HistoryMixin:
    """History walks and their cache; mixed into :class:`~perun_core.vcs.GitVcs`."""

    # ------------------------------------------------------------------ history

    def walk_minor_versions(self, start: str) -> Iterator[MinorVersion]:
        """``start`` and all its ancestors, each once, in ``git log`` order.

        That is the order of a priority queue keyed by committer time (newest
        first, ties in discovery order) in which a commit enters the queue when
        its first child leaves it.  With ``cache_dir`` the result is stored and
        reused, also for walks from descendants of a cached start.
        """
        if _HEX40.fullmatch(start) and start.lower() in self._cached_starts():
            # a walk was cached from this very commit, so it exists: no need to open git's objects
            return self._walk_from(start.lower())
        return self._walk_from(self.massage(start))

    def _walk_from(self, head: str) -> Iterator[MinorVersion]:
        cached_names = self._cached_starts()
        if head in cached_names:
            cached = self._load_history(head)
            if cached is not None:
                yield from cached
                return
        result: list[MinorVersion] | None = [] if self.cache_dir is not None else None
        for info in self._walk(head, cached_names):
            if result is not None:
                result.append(info)
            yield info
        if result is not None:
            self._store_history(head, result)

    def _walk(self, head: str, cached_names: set[str]) -> Iterator[MinorVersion]:
        read = self._reader()
        heappush, heappop = heapq.heappush, heapq.heappop
        raw = self._raw(head)
        if raw is None or raw[0] != _COMMIT:
            raise InvalidRevision(head)
        ctime, info = _parse_commit(head, raw[1])
        pending: dict[str, MinorVersion] = {head: info}
        seen: set[str] = {head}
        heap: list[tuple[int, int, str]] = [(-ctime, 0, head)]
        counter = 1
        while heap:
            if len(heap) == 1 and counter > 1 and heap[0][2] in cached_names:
                # Everything left is the history of one commit that was cached:
                # nothing seen so far is its ancestor, so the rest of the walk is
                # exactly its cached walk.
                cached = self._load_history(heap[0][2])
                if cached is not None and not any(c.checksum in seen for c in cached[1:]):
                    yield from cached
                    return
            _, _, sha = heappop(heap)
            info = pending.pop(sha)
            yield info
            for parent in info.parents:
                if parent in seen:
                    continue
                seen.add(parent)
                try:
                    kind, data = read(parent)
                except (KeyError, AssertionError):
                    continue  # missing parent: shallow clone boundary
                if kind != _COMMIT:
                    continue
                ptime, pinfo = _parse_commit(parent, data)
                pending[parent] = pinfo
                heappush(heap, (-ptime, counter, parent))
                counter += 1

    # -------------------------------------------------------------- history cache

    def _cache_file(self, sha: str) -> Path:
        assert self.cache_dir is not None
        return self.cache_dir / f"history-{sha}.json"

    def _cached_starts(self) -> set[str]:
        if self.cache_dir is None:
            return set()
        try:
            names = os.listdir(self.cache_dir)
        except OSError:
            return set()
        found = set()
        for name in names:
            match = _CACHE_NAME.fullmatch(name)
            if match:
                found.add(match.group(1))
        return found

    def _load_history(self, sha: str) -> list[MinorVersion] | None:
        """The cached walk from ``sha``, or None if missing, damaged or of another format."""
        path = self._cache_file(sha)
        rows = cachefile.read(path, HISTORY_CACHE_VERSION, name="commits", start=sha)
        if not isinstance(rows, list):
            return None
        try:
            result = [_new_minor(r[0], r[1], r[2], r[3], r[4], r[5], tuple(r[6])) for r in rows]
        except (KeyError, TypeError, IndexError):
            return None
        if not result or result[0].checksum != sha:
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # most recently used
        return result

    def _store_history(self, sha: str, history: list[MinorVersion]) -> None:
        """Write the walk from ``sha`` as one JSON document.

        Layout (a single line of JSON)::

            {"format":1,"checksum":"<sha1 of the commits array>","start":"<sha>","commits":[...]}

        with one ``[sha, date, tz_offset, author, email, desc, [parents]]``
        row per commit in walk order.  The checksum covers the exact bytes of
        the ``commits`` array, so it can be verified before parsing.
        """
        if self.cache_dir is None:
            return
        rows = [[m.checksum, m.date, m.tz_offset, m.author, m.email, m.desc, m.parents] for m in history]
        document = cachefile.encode(HISTORY_CACHE_VERSION, rows, name="commits", start=sha)
        if cachefile.write(self._cache_file(sha), document):
            self._prune_cache()

    def _prune_cache(self) -> None:
        assert self.cache_dir is not None
        entries = []
        for sha in self._cached_starts():
            path = self._cache_file(sha)
            with contextlib.suppress(OSError):
                entries.append((path.stat().st_mtime_ns, str(path)))
        entries.sort(reverse=True)
        for _, path in entries[HISTORY_CACHE_LIMIT:]:
            with contextlib.suppress(OSError):
                os.unlink(path)
