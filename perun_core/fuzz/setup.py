"""Everything checked before a fuzzing runs the program: settings, seeds, program, output directory.

:func:`settings_from` converts the values of
:data:`~perun_core.fuzz.options.FUZZ_PARAMS` into :class:`FuzzSettings`;
:func:`read_seeds`, :func:`prepare_program` and :func:`check_output_dir`
turn a bad seed corpus, program or output directory into one
:class:`~perun_core.errors.FuzzError` before anything runs.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import FuzzError, UsageError
from ..params import convert_params
from .options import FUZZ_PARAMS

__all__ = ["FuzzSettings", "check_output_dir", "is_binary", "prepare_program", "read_seeds", "settings_from"]


@dataclass(frozen=True)
class FuzzSettings:
    """Converted values of :data:`FUZZ_PARAMS` (see there for each one)."""

    cmd: str
    seeds: tuple[str, ...]
    output_dir: Path
    args: str | None = None
    timeout: float = 1800.0
    hang_timeout: float = 10.0
    max_size: int | None = None
    max_increase: int | None = None
    max_ratio: float | None = None
    workloads_filter: str | None = None
    rules: tuple[str, ...] = ()
    dictionary: str | None = None
    literal_source: str | None = None
    guidance: str = "off"
    seed: int | None = None
    stdin: bool = False
    metric: str = "auto"
    jobs: int | None = None
    exec_limit: int | None = None
    stop_at: float | None = None
    calibration: int = 5
    source_path: str | None = None
    gcno_path: str | None = None
    coverage_increase: float = 1.05
    skip_coverage: bool = False
    collector: str = "time"
    postprocessors: tuple[str, ...] = ()
    minor: str | None = None
    profiles: int = 3
    register: bool = False
    add_to_matrix: bool = False


#: the parameters a search cannot start without, with their command-line flags (a form names its field instead)
NEEDED = (("cmd", "-b/--cmd"), ("seeds", "-w/--input-sample"), ("output_dir", "-o/--output-dir"))


def settings_from(values: Mapping[str, Any], cwd: Path | str | None = None) -> FuzzSettings:
    """Check and convert ``values`` (names or flags of :data:`FUZZ_PARAMS`) into settings.

    Raises InvalidParameter for a bad value and :class:`FuzzError` for a
    missing command, seed or output directory, or for more than one of the
    size limits.
    """
    given = {k: v for k, v in values.items() if v is not None and v != () and v != []}
    converted = convert_params("fuzz", FUZZ_PARAMS, given)
    for name, flag in NEEDED:
        if not converted[name]:
            raise UsageError(f"fuzz: {flag} is required")
    limits = [flag for name, flag in (("max_size", "-N"), ("max_increase", "-mi"), ("max_ratio", "-mp"))
              if converted[name] is not None]
    if len(limits) > 1:
        raise UsageError(f"fuzz: {' and '.join(limits)} cannot be combined; choose one size limit")
    if converted["workloads_filter"]:
        try:
            re.compile(converted["workloads_filter"])
        except re.error as exc:
            raise FuzzError(f"fuzz: -wf {converted['workloads_filter']!r} is not a valid regular expression: {exc}") \
                from None
    base = Path(cwd) if cwd is not None else Path.cwd()
    converted["output_dir"] = (base / Path(converted["output_dir"]).expanduser()).resolve()
    converted["seeds"] = tuple(str(base / Path(s).expanduser()) for s in converted["seeds"])
    if converted["dictionary"]:
        converted["dictionary"] = str(base / Path(converted["dictionary"]).expanduser())
    if converted["literal_source"]:
        converted["literal_source"] = str(base / Path(converted["literal_source"]).expanduser())
    converted["rules"] = tuple(converted["rules"] or ())
    converted["postprocessors"] = tuple(converted["postprocessors"] or ())
    return FuzzSettings(**converted)


def read_seeds(paths: Sequence[str], pattern: str | None) -> list[tuple[Path, bytes]]:
    """The seed files (directories walked, names filtered by ``pattern``) and their content."""
    found: list[tuple[Path, bytes]] = []
    matcher = re.compile(pattern) if pattern else None
    for given in paths:
        path = Path(given)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and (matcher is None or matcher.search(p.name)))
            if not files:
                what = f" matching -wf {pattern!r}" if pattern else ""
                raise FuzzError(f"seed directory {path} has no files{what}; expected seed inputs in it")
        elif path.is_file():
            files = [path]
        elif path.exists():
            # a named pipe would block the read until someone writes; a device never ends
            raise FuzzError(f"seed {path} is not a regular file (a pipe, device or socket); "
                            "expected a file or a directory of seed inputs")
        else:
            raise FuzzError(f"seed {path} does not exist; expected a file or a directory of seed inputs")
        for file in files:
            try:
                found.append((file, file.read_bytes()))
            except OSError as exc:
                raise FuzzError(f"cannot read seed {file}: {exc.strerror or exc}") from None
    if not found:
        raise FuzzError("the seed corpus is empty; give seed inputs with -w")
    if all(not data for _, data in found):
        raise FuzzError(f"every seed is empty ({', '.join(str(p) for p, _ in found)}); mutations need some content")
    return found


def is_binary(data: bytes) -> bool:
    """Whether a seed is binary (a NUL byte, or not UTF-8): the binary mutation rules fit it, not the text ones."""
    if b"\0" in data:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def prepare_program(cmd: str, args: str | None, cwd: Path) -> list[str]:
    """``cmd`` and ``args`` as an argument list; FuzzError when the program cannot be found."""
    try:
        argv = shlex.split(cmd) + (shlex.split(args) if args else [])
    except ValueError as exc:
        raise FuzzError(f"cannot split the command {cmd!r}: {exc}") from None
    if not argv:
        raise FuzzError("the command is empty; expected a program to fuzz with -b")
    program = argv[0]
    if os.sep in program:
        path = Path(cwd, program)
        if not path.is_file() or not os.access(path, os.X_OK):
            raise FuzzError(f"command {program} is not an executable file (looked in {cwd})")
    elif shutil.which(program) is None:
        raise FuzzError(f"command {program} not found on PATH")
    return argv


def check_output_dir(path: Path) -> None:
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        what = "is not a directory" if not path.is_dir() else "exists and is not empty"
        raise FuzzError(f"output directory {path} {what}; expected a new or empty directory")
