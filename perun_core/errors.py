"""Every error perun_core raises, in one tree.

Front ends catch :class:`PerunError` and print ``error: <message>`` (plus
``hint`` when set); anything else escaping the core is a bug.  Each error
keeps the data it talks about as attributes, so a front end can render it
differently from the default message.

::

    PerunError                       message, hint; exit_code 1
    +-- UsageError                   bad arguments to an API call; exit_code 2
    +-- NotPerunRepository(path)     no .perun above path
    +-- ConfigError(path, key)       unreadable or invalid YAML, bad key or value
    +-- VcsError                     anything the version-control layer refuses
    |   +-- NotGitRepository(path)
    |   +-- InvalidRevision(revision)
    |   +-- EmptyRepository(path)    a repository without any commit
    +-- StorageError                 the .perun store
    |   +-- CorruptObject(sha, path, reason)
    |   +-- CorruptIndex(path, reason)
    |   +-- UnsupportedFormatVersion(path, kind, version, newest)
    |   +-- LockTimeout(path)
    +-- ProfileError
    |   +-- InvalidProfile(path, key, reason)
    |   +-- ProfileNotFound(spec)
    |   +-- TagOutOfRange(tag, count)
    |   +-- OriginMismatch(path, origin, target)
    +-- UnitError
    |   +-- UnknownUnit(kind, name, known)
    |   +-- InvalidParameter(unit, name, value, expected)
    +-- ExternalToolError(tool, how_to_get)   a profiler or compiler is missing
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


class PerunError(Exception):
    """Root of every error the core raises on purpose."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class UsageError(PerunError):
    """The caller combined arguments that make no sense together."""

    exit_code = 2


class NotPerunRepository(PerunError):
    def __init__(self, path: Path | str) -> None:
        super().__init__(
            f"not a perun repository (or any parent up to /): {path}",
            hint="run 'perun-core init' to create one",
        )
        self.path = Path(path)


class ConfigError(PerunError):
    def __init__(self, path: Path | str | None, key: str | None, reason: str) -> None:
        where = str(path) if path else "configuration"
        what = f"key '{key}': " if key else ""
        super().__init__(f"{where}: {what}{reason}")
        self.path = Path(path) if path else None
        self.key = key
        self.reason = reason


class VcsError(PerunError):
    """The version control layer cannot do what was asked."""


class NotGitRepository(VcsError):
    def __init__(self, path: Path | str) -> None:
        super().__init__(f"not a git repository: {path}", hint="run 'perun-core init' there first")
        self.path = Path(path)


class InvalidRevision(VcsError):
    def __init__(self, revision: str, reason: str = "does not name a commit") -> None:
        super().__init__(f"revision '{revision}' {reason}")
        self.revision = revision


class EmptyRepository(VcsError):
    def __init__(self, path: Path | str) -> None:
        super().__init__(
            f"the git repository at {path} has no commits yet",
            hint="commit something first: profiles are linked to commits",
        )
        self.path = Path(path)


class StorageError(PerunError):
    """The .perun store is unreadable or cannot be written."""


class CorruptObject(StorageError):
    def __init__(self, sha: str, path: Path | str, reason: str) -> None:
        super().__init__(f"corrupt object {sha} ({path}): {reason}")
        self.sha = sha
        self.path = Path(path)
        self.reason = reason


class CorruptIndex(StorageError):
    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"corrupt index {path}: {reason}")
        self.path = Path(path)
        self.reason = reason


class UnsupportedFormatVersion(StorageError):
    def __init__(self, path: Path | str, kind: str, version: int, newest: int) -> None:
        super().__init__(
            f"{path}: {kind} format version {version} is newer than this perun understands "
            f"(newest known: {newest})",
            hint="upgrade perun to read it",
        )
        self.path = Path(path)
        self.kind = kind
        self.version = version
        self.newest = newest


class LockTimeout(StorageError):
    def __init__(self, path: Path | str, seconds: float) -> None:
        super().__init__(f"could not lock {path} within {seconds:g} s; another perun process holds it")
        self.path = Path(path)


class ProfileError(PerunError):
    """A profile cannot be found, parsed or accepted."""


class InvalidProfile(ProfileError):
    def __init__(self, path: Path | str | None, key: str | None, reason: str) -> None:
        where = str(path) if path else "<profile>"
        what = f"key '{key}' " if key else ""
        super().__init__(f"{where}: {what}{reason}")
        self.path = Path(path) if path else None
        self.key = key
        self.reason = reason


class ProfileNotFound(ProfileError):
    def __init__(self, spec: str, where: str = "") -> None:
        suffix = f" {where}" if where else ""
        super().__init__(f"profile '{spec}' not found{suffix}", hint="run 'perun-core status' to list profiles and their tags")
        self.spec = spec


class TagOutOfRange(ProfileError):
    def __init__(self, tag: str, count: int, kind: str) -> None:
        super().__init__(
            f"tag '{tag}' is out of range: there {'is' if count == 1 else 'are'} {count} {kind} profile{'' if count == 1 else 's'}",
            hint="run 'perun-core status' to list profiles and their tags",
        )
        self.tag = tag
        self.count = count


class OriginMismatch(ProfileError):
    def __init__(self, path: Path | str, origin: str | None, target: str) -> None:
        got = origin if origin else "(none)"
        super().__init__(
            f"{path}: profile was collected for commit {got}, not for {target}",
            hint=f"register it with '-m {got}'" if origin else None,
        )
        self.path = Path(path)
        self.origin = origin
        self.target = target


class UnitError(PerunError):
    """A collector, postprocessor, view or check method cannot be used."""


class UnknownUnit(UnitError):
    def __init__(self, kind: str, name: str, known: Sequence[str]) -> None:
        super().__init__(f"unknown {kind} '{name}'; known: {', '.join(sorted(known)) or '(none)'}")
        self.kind = kind
        self.name = name
        self.known = list(known)


class InvalidParameter(UnitError):
    def __init__(self, unit: str, name: str, value: object, expected: str) -> None:
        super().__init__(f"{unit}: parameter '{name}' = {value!r}: expected {expected}")
        self.unit = unit
        self.name = name
        self.value = value
        self.expected = expected


class ExternalToolError(PerunError):
    def __init__(self, tool: str, how_to_get: str) -> None:
        super().__init__(f"'{tool}' is required but was not found", hint=how_to_get)
        self.tool = tool
