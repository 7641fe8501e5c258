"""Revision expressions (HEAD~2, tags, short shas, branches) resolved to commits: the refs part of GitVcs."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator

from ..errors import EmptyRepository, InvalidRevision, VcsError
from .constants import _COMMIT, _TAG
from .commits import MinorVersion, _parse_commit
from .constants import _HEX40, _HEX_SHORT, _MIN_SHORT_SHA, _SUFFIX, _SYMREF


class RevisionsMixin:
    """Refs and revision parsing; mixed into :class:`~perun_core.vcs.GitVcs`."""

    def _peel(self, sha: str, revision: str) -> str:
        """Follow annotated tags to the commit they name."""
        for _ in range(64):
            raw = self._raw(sha)
            if raw is None:
                raise InvalidRevision(revision)
            kind, data = raw
            if kind == _COMMIT:
                return sha
            if kind != _TAG:
                raise InvalidRevision(revision, "does not name a commit")
            target = None
            for line in data.split(b"\n"):
                if line.startswith(b"object "):
                    target = line[7:].strip().decode("ascii")
                    break
                if not line:
                    break
            if target is None:
                raise InvalidRevision(revision, "points at a malformed tag")
            sha = target
        raise InvalidRevision(revision, "is a chain of too many nested tags")

    def _commit(self, sha: str, revision: str | None = None) -> tuple[int, MinorVersion]:
        raw = self._raw(sha)
        if raw is None or raw[0] != _COMMIT:
            raise InvalidRevision(revision or sha)
        return _parse_commit(sha, raw[1])

    def _commit_tree_id(self, sha: str) -> str:
        raw = self._raw(sha)
        if raw is None or raw[0] != _COMMIT:
            raise InvalidRevision(sha)
        first = raw[1].split(b"\n", 1)[0]
        if not first.startswith(b"tree "):
            raise VcsError(f"commit {sha} is malformed: it names no tree")
        return first[5:].strip().decode("ascii")

    # ------------------------------------------------------------------ refs

    def _head_contents(self) -> bytes | None:
        contents = self.ref_files.head_contents()
        if contents is not None:
            return contents
        return self.repo.refs.read_ref(b"HEAD")

    def _head_sha(self) -> str | None:
        sha = self.ref_files.resolve(b"HEAD")
        if sha is not None:
            return sha
        try:
            return self.repo.refs[b"HEAD"].decode("ascii")
        except KeyError:
            return None

    def head(self) -> str:
        """Full sha of the commit HEAD points to."""
        sha = self._head_sha()
        if sha is None:
            raise EmptyRepository(self.root)
        return sha

    def major_version(self) -> str:
        """The current branch's short name, or ``HEAD`` when detached."""
        contents = self._head_contents() or b""
        if contents.startswith(_SYMREF):
            target = contents[len(_SYMREF) :].strip()
            if target.startswith(b"refs/heads/"):
                return target[len(b"refs/heads/") :].decode("utf-8", errors="replace")
            return target.decode("utf-8", errors="replace")
        return "HEAD"

    def walk_major_versions(self) -> Iterator[str]:
        """Names of the local branches, sorted."""
        names = self.repo.refs.keys(base=b"refs/heads/")
        yield from sorted(name.decode("utf-8", errors="replace") for name in names)

    def _lookup_ref(self, name: str) -> str | None:
        from dulwich.refs import check_ref_format

        if not name or any(ch in name for ch in " ~^:?*[\\") or ".." in name or "@{" in name:
            return None
        encoded = os.fsencode(name)  # a name given in bytes that are not UTF-8 stays those bytes
        candidates: list[bytes] = []
        if name == "HEAD" or re.fullmatch(r"[A-Z_]+", name) or name.startswith("refs/"):
            candidates.append(encoded)
        for pattern in (b"refs/%s", b"refs/tags/%s", b"refs/heads/%s", b"refs/remotes/%s", b"refs/remotes/%s/HEAD"):
            candidates.append(pattern % encoded)
        for ref in candidates:
            if ref != b"HEAD" and ref.startswith(b"refs/") and not check_ref_format(ref):
                continue
            try:
                sha = self.repo.refs[ref]
            except (KeyError, ValueError, OSError):
                continue
            text = sha.decode("ascii", errors="replace")
            if _HEX40.fullmatch(text):
                return text.lower()
        return None

    def _resolve_short(self, prefix: str, revision: str) -> str:
        store = self.repo.object_store
        matches = {m.decode("ascii") for m in store.iter_prefix(prefix.lower().encode("ascii"))}
        if not matches:
            raise InvalidRevision(revision)
        commits: set[str] = set()
        for sha in matches:
            with contextlib.suppress(InvalidRevision):
                commits.add(self._peel(sha, revision))
        if not commits:
            raise InvalidRevision(revision, "does not name a commit")
        if len(commits) > 1:
            shown = ", ".join(sorted(c[:12] for c in commits)[:5])
            raise InvalidRevision(
                revision, f"is ambiguous: it matches {len(commits)} commits ({shown}); use more characters"
            )
        return commits.pop()

    def _resolve_base(self, base: str, revision: str) -> str:
        if base == "@":
            base = "HEAD"
        if _HEX40.fullmatch(base):
            sha = base.lower()
            if self._raw(sha) is None:
                raise InvalidRevision(revision)
            return self._peel(sha, revision)
        sha = self._lookup_ref(base)
        if sha is not None:
            return self._peel(sha, revision)
        if base == "HEAD":
            raise EmptyRepository(self.root)
        if len(base) >= _MIN_SHORT_SHA and _HEX_SHORT.fullmatch(base):
            return self._resolve_short(base, revision)
        raise InvalidRevision(revision)

    def massage(self, revision: str) -> str:
        """Resolve a revision expression to the full sha of a commit.

        Supports ``HEAD`` (and ``@``), branch, tag and remote names, full
        refnames, full and unique short shas (at least 4 hex digits), each
        followed by any chain of ``~N``, ``~``, ``^N``, ``^`` and ``^{}`` /
        ``^{commit}``.
        """
        if not isinstance(revision, str):
            raise InvalidRevision(str(revision))
        text = revision.strip()
        if not text:
            raise InvalidRevision(revision)
        cut = len(text)
        for marker in ("~", "^"):
            pos = text.find(marker)
            if pos >= 0:
                cut = min(cut, pos)
        base, suffixes = text[:cut], text[cut:]
        if not base:
            raise InvalidRevision(revision)
        steps: list[tuple[str, str]] = []
        pos = 0
        while pos < len(suffixes):
            match = _SUFFIX.match(suffixes, pos)
            if match is None:
                raise InvalidRevision(revision)
            if match.group(1) is not None:
                steps.append(("~", match.group(1)))
            elif match.group(2) is not None:
                steps.append(("{", match.group(2)))
            else:
                steps.append(("^", match.group(3)))
            pos = match.end()

        sha = self._resolve_base(base, revision)
        for kind, value in steps:
            if kind == "{":
                if value not in ("", "commit"):
                    raise InvalidRevision(revision, "does not name a commit")
                continue
            count = int(value) if value else 1
            if kind == "~":
                for _ in range(count):
                    parents = self._commit(sha, revision)[1].parents
                    if not parents:
                        raise InvalidRevision(revision, "reaches beyond the root commit")
                    sha = parents[0]
            elif count:
                parents = self._commit(sha, revision)[1].parents
                if count > len(parents):
                    have = f"{len(parents)} parent{'' if len(parents) == 1 else 's'}"
                    raise InvalidRevision(revision, f"asks for parent {count} of a commit with {have}")
                sha = parents[count - 1]
        # make sure the result exists and is a commit (parents may be missing in shallow clones)
        self._commit(sha, revision)
        return sha

    def check_minor_version_validity(self, revision: str) -> None:
        """Raise :class:`InvalidRevision` unless ``revision`` names a commit."""
        self.massage(revision)

    def minor_info(self, sha: str) -> MinorVersion:
        """Everything perun keeps about one commit (any revision is accepted)."""
        if isinstance(sha, str) and _HEX40.fullmatch(sha):
            known = self._minors.get(sha.lower())
            if known is not None:
                return known
            raw = self._raw(sha.lower())
            if raw is not None and raw[0] == _COMMIT:
                return _parse_commit(sha.lower(), raw[1])[1]
        return self._commit(self.massage(sha), sha)[1]
