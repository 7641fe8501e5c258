"""Importing what other tools measured: ``perun-core import KIND FILE...``.

:func:`import_profiles` reads the files with the importer of ``KIND`` (see
:mod:`perun_core.importers`), makes the commit the profile's origin, adds
``cmd`` and ``workload`` to its header, and stores it as a pending profile
(or registers it at the commit).  Nothing is written when a file is bad.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ImportFailed, InvalidProfile, UsageError
from ..importers import importers
from ..params import convert_params
from ..profile.validate import validate_profile
from ..runner.naming import TEMPLATE_KEY, render_name, write_new_profile
from ..safetext import escape_controls
from ._repo import using as _using

if TYPE_CHECKING:  # pragma: no cover
    from ..profile.model import Profile
    from ..storage.repository import PerunRepository

__all__ = ["ImportedProfile", "ImporterInfo", "import_profiles", "importer_info", "importer_kinds", "read_imported"]


@dataclass(frozen=True, slots=True)
class ImporterInfo:
    """One importer: its KIND, one-line summary, full description and declared options."""

    name: str
    summary: str
    description: str
    params: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class ImportedProfile:
    """What an import stored: where, at which commit, and what the profile holds."""

    kind: str
    files: tuple[str, ...]
    origin: str
    type: str
    resources: int
    units: dict[str, str]
    #: the pending profile's path (None once registered)
    path: Path | None
    registered: bool
    checksum: str | None
    name: str


def importer_kinds() -> list[ImporterInfo]:
    """Every importer (built-in and registered), by name."""

    return [importer_info(name) for name in importers.names()]


def importer_info(kind: str) -> ImporterInfo:
    """The importer of ``kind`` (only its module is loaded); UnknownUnit listing the kinds otherwise."""

    unit = importers.get(kind)
    return ImporterInfo(kind, str(getattr(unit, "summary", "")), str(getattr(unit, "description", "")),
                        tuple(getattr(unit, "params", ())))


def read_imported(kind: str, files: list[Path | str], options: dict[str, Any] | None = None) -> Profile:
    """The profile the importer of ``kind`` makes of ``files`` (nothing stored, no origin).

    Raises UnknownUnit (no such kind), InvalidParameter (a bad option),
    ImportFailed (a missing, malformed or truncated file).
    """

    if not files:
        raise UsageError("import needs at least one file")
    importer = importers.get(kind)
    values = convert_params(kind, getattr(importer, "params", ()), options or {})
    paths = [Path(f).expanduser() for f in files]
    for path in paths:
        if not path.exists():
            raise ImportFailed(path, None, "does not exist")
        if path.is_dir():
            raise ImportFailed(path, None, "is a directory, expected a file")
        if not path.is_file():  # reading a named pipe nobody writes would never end
            raise ImportFailed(path, None, "is not a regular file (a pipe, device or socket), expected a file")
    profile = importer.load(paths, values)
    return _checked(profile, paths)


def _checked(profile: Profile, paths: list[Path]) -> Profile:
    """``profile`` when it is one perun can store; else ImportFailed naming the file read and the bad key.

    Importers convert what they read; whatever slips through them (a NaN or
    an infinite number, text that is not Unicode) is caught here, once for
    every importer, and blamed on the input rather than on the profile name
    that would have been written.
    """

    where = str(paths[0]) if len(paths) == 1 else f"{paths[0]} (and {len(paths) - 1} more)"
    try:
        validate_profile(profile)
    except InvalidProfile as exc:
        key = f"the profile made of it has key '{exc.key}' " if exc.key else "the profile made of it "
        raise ImportFailed(where, None, f"{key}{exc.reason}") from None
    if not profile.resource_count():
        raise ImportFailed(where, None, "holds no measurements (no runs, samples or stacks); nothing to import")
    return profile


def import_profiles(
    kind: str,
    files: list[Path | str],
    *,
    minor: str | None = None,
    cmd: str | None = None,
    workload: str | None = None,
    register: bool = False,
    options: dict[str, Any] | None = None,
    repo: PerunRepository | None = None,
    cwd: Path | str | None = None,
) -> ImportedProfile:
    """Import ``files`` as one profile of commit ``minor`` (default HEAD), pending or registered.

    ``cmd`` defaults to what the file records (hyperfine's command, the
    program of a callgrind run) or the importer's kind; ``workload`` to
    empty.  The importer's own metadata stays in the header under ``tool``.
    """

    for flag, text in (("-c/--cmd", cmd), ("-w/--workload", workload)):
        if text is not None and not _encodes(text):
            raise UsageError(f"{flag} '{escape_controls(text)}': not valid text (it holds bytes that are not UTF-8)")
    with _using(repo, cwd) as r:
        origin = r.resolve_minor(minor)  # a bad revision fails before any file is read
        profile = read_imported(kind, files, options)
        header = dict(profile.header)
        header["cmd"] = cmd if cmd is not None else _recorded_command(header, kind)
        header.setdefault("params", "")
        header["workload"] = workload or ""
        profile.header = header
        profile.collector_info = {"name": kind, "params": dict(options or {}), "imported": True}
        profile.origin = origin
        names = tuple(str(f) for f in files)
        now = time.time()
        template = str(r.config.get_or(TEMPLATE_KEY, "%collector%-%cmd%-%args%-%workload%-%date%"))
        name = render_name(profile, template, when=now)
        if register:  # straight into the store: a failed registration leaves no pending file behind
            entry = r.register(origin, profile, name, now)
            return ImportedProfile(kind, names, origin, profile.type, profile.resource_count(), profile.units,
                                   None, True, entry.checksum, entry.path)
        r.jobs_dir.mkdir(parents=True, exist_ok=True)
        path = write_new_profile(profile, r.jobs_dir, name, resources_checked=True)  # read_imported checked them
        return ImportedProfile(kind, names, origin, profile.type, profile.resource_count(), profile.units,
                               path, False, None, path.name)


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:  # lone surrogates: bytes of the command line that were not UTF-8
        return False


def _recorded_command(header: dict[str, Any], kind: str) -> str:
    tool = header.get("tool") or {}
    files = tool.get("files") if isinstance(tool, dict) else None
    if isinstance(files, list) and files and isinstance(files[0], dict) and files[0].get("cmd"):
        return str(files[0]["cmd"]).strip()  # callgrind records the program
    if isinstance(tool, dict) and tool.get("executable"):
        return str(tool["executable"])  # google benchmark
    if isinstance(tool, dict) and tool.get("command"):
        return str(tool["command"])  # memray: the command line it ran
    if isinstance(tool, dict) and tool.get("commands"):
        return str(tool["commands"][0])  # perf script: the sampled program
    return kind
