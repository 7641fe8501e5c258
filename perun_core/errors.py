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
    |   +-- UnsupportedProfile(view, profile_type, supported)   a view cannot show it
    |   +-- EmptyProfile(view)       nothing to show: no resources at all
    |   +-- ImportFailed(path, where, reason)   an imported file is malformed or truncated
    +-- UnitError
    |   +-- UnknownUnit(kind, name, known)
    |   +-- InvalidParameter(unit, name, value, expected)
    +-- RunError                     collecting or postprocessing cannot go on
    |   +-- CollectionError(job, reason, exit_status, stderr_tail)   one job failed
    |   |   +-- WorkloadGenerationFailed(job, generator, reason, exit_status, output_tail)
    |   +-- JobsFailed(failures)     several jobs of one run failed
    |   +-- PostprocessError(unit, reason)
    |   +-- PreRunFailed(command, exit_status, output_tail)
    |   +-- DirtyWorkingTree(root)   uncommitted changes would skew the profile
    |   +-- BuildFailed(what, command, output)   compiling a native library or target failed
    +-- CheckError                   a degradation check cannot be made
    |   +-- IncomparableProfiles(baseline, target, reason)   e.g. of different types
    |   +-- NothingInCommon(baseline, target)   no location (uid) in both profiles
    |   +-- HookError(path, reason)   the git hook cannot be installed
    +-- FuzzError                    fuzzing or delta debugging cannot start (seeds, program, budgets)
    +-- RemoteError(remote, reason)  a git remote cannot be read or written
    |   +-- RemoteFormatTooNew(remote, version, newest)   its perun refs were written by a newer perun
    +-- Interrupted                  Ctrl-C or a cancelled run; exit_code 130
    +-- ExternalToolError(tool, how_to_get)   a profiler or compiler is missing
    |   +-- ToolNotPermitted(tool, reason, how_to_allow)   present, but the kernel or permissions forbid it
    +-- EnvironmentFailure(path, reason, errno)   the operating system refused (read-only, full disk, ...)

Exit codes of every command (one table, also in README and ``perun-core --help``):
:data:`EXIT_CODES`.  3 means only "check found a degradation", so a CI script
can tell "slower" from "broken"; a bug is :data:`EXIT_INTERNAL`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_DEGRADATION = 3
EXIT_INTERNAL = 4
EXIT_INTERRUPTED = 130

#: code -> meaning, in the order the help text lists them
EXIT_CODES: dict[int, str] = {
    EXIT_OK: "success (for check: no degradation found)",
    EXIT_ERROR: "an error of input or environment (one 'error:' line names the file, key or value)",
    EXIT_USAGE: "a wrong command line",
    EXIT_DEGRADATION: "check found a degradation",
    EXIT_INTERNAL: "an internal error (a bug: run with -v for the traceback and report it)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C, SIGTERM or a cancelled run)",
}


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
    """A ``N@i`` / ``N@p`` tag past the last profile; ``where`` says which commit's list (``at de579c5``)."""

    def __init__(self, tag: str, count: int, kind: str, where: str = "") -> None:
        suffix = tag[tag.index("@"):] if "@" in tag else ""
        place = f" {where}" if where else ""
        if kind == "pending":
            listed = f"no profile is pending{place}" if count == 0 else \
                f"{count} profile{' is' if count == 1 else 's are'} pending{place}"
        else:
            listed = f"no profile is {kind}{place}" if count == 0 else \
                f"{count} profile{' is' if count == 1 else 's are'} {kind}{place}"
        tags = "" if count == 0 else f" (tag 0{suffix})" if count == 1 else f" (tags 0{suffix} to {count - 1}{suffix})"
        super().__init__(
            f"tag '{tag}' is out of range: {listed}{tags}",
            hint="run 'perun-core status' (HEAD) or 'perun-core log' (every commit) to list profiles and their tags",
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



class UnsupportedProfile(ProfileError):
    """A view was given a profile it cannot show.

    ``profile_type`` is the profile's type; ``supported`` the types the view
    accepts; ``reason`` says what is missing when the type itself is fine
    (e.g. a memory profile whose resources carry no call traces);
    ``fitting``, when given, names the views that can show the profile.
    """

    def __init__(self, view: str, profile_type: str, supported: Sequence[str], reason: str = "",
                 fitting: Sequence[str] | None = None) -> None:
        kinds = ", ".join(supported) or "any"
        if reason:
            message = f"view '{view}' cannot show this {profile_type or 'untyped'} profile: {reason}"
        else:
            message = f"view '{view}' cannot show a {profile_type or 'untyped'} profile; it supports: {kinds}"
        if fitting is not None:
            message += (f"; views that can show it: {', '.join(fitting)}" if fitting
                        else "; no view can show it")
        super().__init__(message)
        self.view = view
        self.profile_type = profile_type
        self.supported = list(supported)
        self.reason = reason
        self.fitting = list(fitting or ())


class EmptyProfile(ProfileError):
    def __init__(self, view: str, what: str = "resources") -> None:
        super().__init__(f"view '{view}': the profile has no {what} to show; it needs at least one")
        self.view = view
        self.what = what

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


class RunError(PerunError):
    """A collection, postprocessing or pre-run step failed."""


def _tail_hint(label: str, tail: str) -> str | None:
    lines = [line for line in tail.splitlines() if line.strip()]
    if not lines:
        return None
    return f"{label}:\n" + "\n".join(f"  {line}" for line in lines)


class CollectionError(RunError):
    """One job (collection and its postprocessing) failed.

    ``job`` is a short description of the job (command line and collector),
    ``exit_status`` the profiled command's status when it ran and failed
    (negative: killed by that signal), ``stderr_tail`` the last lines it
    wrote to its standard error.
    """

    def __init__(self, job: str, reason: str, exit_status: int | None = None, stderr_tail: str = "") -> None:
        super().__init__(f"{job}: {reason}", hint=_tail_hint("last lines of its standard error", stderr_tail))
        self.job = job
        self.reason = reason
        self.exit_status = exit_status
        self.stderr_tail = stderr_tail


class WorkloadGenerationFailed(CollectionError):
    """A workload generator of a job could not produce its workloads (an external command failed).

    ``generator`` is the generator's id; ``stderr_tail`` holds the last lines
    the generator's command wrote (standard output and error together).
    """

    def __init__(self, job: str, generator: str, reason: str, exit_status: int | None = None,
                 output_tail: str = "") -> None:
        super().__init__(job, f"workload generator '{generator}': {reason}", exit_status, output_tail)
        self.generator = generator
        self.hint = _tail_hint("its last output", output_tail)


class JobsFailed(RunError):
    """More than one job of a run failed; ``failures`` holds their errors in order."""

    def __init__(self, failures: Sequence[CollectionError], total: int) -> None:
        first = failures[0]
        super().__init__(f"{len(failures)} of {total} jobs failed; first: {first.message}", hint=first.hint)
        self.failures = list(failures)
        self.total = total


class PostprocessError(RunError):
    def __init__(self, unit: str, reason: str) -> None:
        super().__init__(f"postprocessor '{unit}' failed: {reason}")
        self.unit = unit
        self.reason = reason


class PreRunFailed(RunError):
    """A command of ``execute.pre_run`` could not run or exited non-zero."""

    def __init__(self, command: str, reason: str, exit_status: int | None = None, output_tail: str = "") -> None:
        super().__init__(f"pre_run command '{command}' {reason}", hint=_tail_hint("its last output", output_tail))
        self.command = command
        self.reason = reason
        self.exit_status = exit_status
        self.output_tail = output_tail


class DirtyWorkingTree(RunError):
    def __init__(self, root: Path | str) -> None:
        super().__init__(
            f"the working tree at {root} has uncommitted changes, which would skew the profile",
            hint="commit or stash them, pass --force-dirty to profile them anyway, "
                 "or name commits with -m to profile them in a clean temporary worktree",
        )
        self.root = Path(root)


class BuildFailed(RunError):
    """Compiling failed: ``what`` (a native library, an instrumented target) by ``command``.

    ``output`` is what the compiler wrote; its last lines become the hint.
    """

    def __init__(self, what: str, command: str, output: str) -> None:
        super().__init__(f"compiling {what} failed", hint=_tail_hint(f"{command}", "\n".join(output.splitlines()[-12:])))
        self.what = what
        self.command = command
        self.output = output


class CheckError(PerunError):
    """A degradation check cannot be made as asked."""


class IncomparableProfiles(CheckError):
    """Two profiles that cannot be compared, e.g. a time and a mixed one; ``reason`` says why."""

    def __init__(self, baseline: str, target: str, reason: str) -> None:
        super().__init__(f"cannot compare {baseline} with {target}: {reason}")
        self.baseline = baseline
        self.target = target
        self.reason = reason


class NothingInCommon(CheckError):
    """The two profiles share no location, so every result is NotInBaseline or NotInTarget."""

    def __init__(self, baseline: str, target: str) -> None:
        super().__init__(
            f"{baseline} and {target} have no uid in common: nothing could be compared",
            hint="check that both profiles measure the same program (same cmd, collector and uids)",
        )
        self.baseline = baseline
        self.target = target


class HookError(CheckError):
    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"cannot install the hook {path}: {reason}")
        self.path = Path(path)
        self.reason = reason


class FuzzError(PerunError):
    """Fuzzing or delta debugging cannot start: a bad seed, program, output directory or budget."""


class RemoteError(PerunError):
    """Pushing to or fetching from a git remote failed; ``remote`` is its name or URL."""

    def __init__(self, remote: str, reason: str, hint: str | None = None) -> None:
        super().__init__(f"remote '{remote}': {reason}", hint=hint)
        self.remote = remote
        self.reason = reason


class RemoteFormatTooNew(RemoteError):
    """The remote's perun refs carry a format version this perun does not know."""

    def __init__(self, remote: str, version: int, newest: int) -> None:
        super().__init__(remote, f"its perun profiles were written in format version {version}, newer than this "
                                 f"perun understands (newest known: {newest}); nothing was changed",
                         hint="upgrade perun on this machine to share profiles with this remote")
        self.version = version
        self.newest = newest


class Interrupted(PerunError):
    """The run was interrupted (Ctrl-C, SIGTERM) or cancelled; nothing partial was kept."""

    exit_code = 130

    def __init__(self, message: str = "interrupted") -> None:
        super().__init__(message)


class ExternalToolError(PerunError):
    def __init__(self, tool: str, how_to_get: str) -> None:
        super().__init__(f"'{tool}' is required but was not found", hint=how_to_get)
        self.tool = tool


class ToolNotPermitted(ExternalToolError):
    """The tool is installed but may not do its work here (kernel settings, privileges).

    The message is one line: what is forbidden, why, and how to allow it.
    """

    def __init__(self, tool: str, reason: str, how_to_allow: str) -> None:
        PerunError.__init__(self, f"{tool} cannot run here: {reason}; {how_to_allow}")
        self.tool = tool
        self.reason = reason
        self.how_to_allow = how_to_allow


class EnvironmentFailure(PerunError):
    """The operating system refused an operation: a read-only store, a full disk, no permission.

    Never a bug, so never an internal error: the message names the path and
    the system's reason (``error: .perun/objects/ab: No space left on device``).
    """

    def __init__(self, path: str | Path | None, reason: str, errno: int | None = None) -> None:
        where = f"{path}: " if path else ""
        super().__init__(f"{where}{reason}")
        self.path = None if path is None else str(path)
        self.reason = reason
        self.errno = errno

    @classmethod
    def from_os_error(cls, exc: OSError) -> EnvironmentFailure:
        """The failure an :class:`OSError` describes (its file names and strerror)."""
        path = exc.filename if exc.filename is not None else None
        if exc.filename2 is not None and path is not None:
            path = f"{path} -> {exc.filename2}"
        reason = exc.strerror or str(exc) or type(exc).__name__
        return cls(path, reason, exc.errno)


class ImportFailed(ProfileError):
    """A file given to an importer is not what the importer reads, or is cut short.

    ``where`` is ``line N`` for text formats or ``key 'a.b[3]'`` for JSON.
    """

    def __init__(self, path: Path | str, where: str | None, reason: str) -> None:
        if where and where.startswith("line "):
            text = f"{path}:{where[5:]}: {reason}"
        elif where:
            text = f"{path}: {where}: {reason}"
        else:
            text = f"{path}: {reason}"
        super().__init__(text)
        self.path = Path(path)
        self.where = where
        self.reason = reason
