"""HEAD and refs read straight from git's files, without loading dulwich.

``status`` and ``log`` need little of git when their caches are warm: the
commit HEAD names and the branch.  Loading dulwich costs several times what
the rest of those commands do, so these readers answer from ``HEAD``, loose
ref files and ``packed-refs`` alone.  They handle the common layouts (a
``.git`` directory or gitfile, linked worktrees, bare repositories) and
return None for anything else (a reftable store, an unreadable file, a
malformed ref), in which case the caller asks dulwich, which decides.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import cachefile
from .constants import _HEX40, _SYMREF


class RefFiles:
    """The ref files of the git repository at ``root`` (not checked to exist)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.git_dir = _git_dir(self.root)
        #: a bare repository: its git directory is ``root`` itself
        self.bare = self.git_dir == self.root
        self.common_dir = _common_dir(self.git_dir) if self.git_dir is not None else None

    def head_contents(self) -> bytes | None:
        """The first line of ``HEAD`` (``ref: refs/heads/main`` or a sha), or None."""
        if self.git_dir is None:
            return None
        try:
            with open(self.git_dir / "HEAD", "rb") as handle:
                line = handle.readline(4096)
        except OSError:
            return None
        line = line.rstrip(b"\r\n")
        return line or None

    def resolve(self, name: bytes = b"HEAD") -> str | None:
        """The sha ``name`` finally points to, following symbolic refs; None when unsure or unborn."""
        if self.git_dir is None or self.common_dir is None:
            return None
        for _ in range(5):
            contents = self.head_contents() if name == b"HEAD" else self._ref_contents(name)
            if contents is None:
                return None
            if contents.startswith(_SYMREF):
                name = contents[len(_SYMREF):].strip()
                # branches live in the common directory of every worktree; rarer refs are left to dulwich
                if not name.startswith(b"refs/heads/") or b".." in name:
                    return None
                continue
            text = contents.strip().decode("ascii", errors="replace")
            return text.lower() if _HEX40.fullmatch(text) else None
        return None

    def stamp(self, name: str) -> list[int] | None:
        """The :func:`~perun_core.cachefile.file_signature` of a file in the git directory, None when it is missing."""
        if self.git_dir is None:
            return None
        return cachefile.file_signature(self.git_dir / name)

    def _ref_contents(self, name: bytes) -> bytes | None:
        assert self.common_dir is not None
        relative = os.fsdecode(name)
        try:
            with open(self.common_dir / relative, "rb") as handle:
                return handle.readline(4096).rstrip(b"\r\n") or None
        except (FileNotFoundError, NotADirectoryError):
            return self._packed(name)
        except OSError:
            return None

    def _packed(self, name: bytes) -> bytes | None:
        assert self.common_dir is not None
        try:
            with open(self.common_dir / "packed-refs", "rb") as handle:
                lines = handle.read().splitlines()
        except FileNotFoundError:
            return None
        except OSError:
            return None
        for line in lines:
            if line.startswith((b"#", b"^")):
                continue
            sha, _, ref = line.partition(b" ")
            if ref == name:
                return sha
        return None


def _git_dir(root: Path) -> Path | None:
    """The git directory of ``root``: ``.git``, the target of a ``.git`` gitfile, or ``root`` when bare."""
    dotgit = root / ".git"
    if dotgit.is_dir():
        return dotgit
    if dotgit.is_file():
        try:
            line = dotgit.read_bytes().split(b"\n", 1)[0].strip()
        except OSError:
            return None
        if not line.startswith(b"gitdir: "):
            return None
        target = Path(os.fsdecode(line[len(b"gitdir: "):]))
        return target if target.is_absolute() else (root / target)
    if (root / "HEAD").is_file() and (root / "refs").is_dir():
        return root
    return None


def _common_dir(git_dir: Path) -> Path | None:
    """Where the refs of ``git_dir`` live (a linked worktree shares its main repository's); None for reftable."""
    common = git_dir
    try:
        line = (git_dir / "commondir").read_bytes().strip()
    except FileNotFoundError:
        line = b""
    except OSError:
        return None
    if line:
        target = Path(os.fsdecode(line))
        common = target if target.is_absolute() else git_dir / target
    if (common / "reftable").exists():
        return None  # refs in a reftable: only dulwich reads them
    return common
