"""Hit-count guidance: keep an input that makes any line or branch of the program run more often than before.

This is PerfFuzz's maximizing idea.  The cost of a run is noisy and a
mutation that adds one iteration to a loop adds too little time to measure,
but it adds exactly one to the loop's hit count.  So besides the inputs
measurably slower than their parent, the search keeps every input that
raises the highest count seen so far of some arc; those inputs become
parents, and gains too small to time add up over generations until they can
be timed.

The counts come from a run of their own, never from a timed one (tracing
slows the program several times over, and the times must stay those of the
plain program), and only for candidates that the time alone did not keep:

* a Python program (``python [opts] script.py``, or a script whose ``#!``
  line names a Python interpreter) runs under :mod:`.hittrace`, which counts
  the arcs (line to line) of every code object outside the standard library;
* a native program built with gcov (``--source-path``/``--gcno-path``, as for
  the coverage pre-filter) gives the execution count of every line through
  ``gcov``.

:func:`start_guidance` picks the way for the program, or says why there is
none (the fuzzing then goes on unguided, with the reason in the notes).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..errors import Interrupted
from ..runner.helper import spawn_helper
from ..runner.process import RepeatedRuns
from .measure import Coverage

__all__ = ["GUIDANCE_MODES", "Guidance", "HitMaxima", "python_command", "read_gcov_counts", "read_trace_counts",
           "start_guidance"]

GUIDANCE_MODES = ("off", "hits")
_PYTHON_NAME = re.compile(r"python[0-9.]*$")
#: interpreter options followed by a value of their own
_VALUED_OPTIONS = frozenset({"-W", "-X", "-Q"})
_TRACER = Path(__file__).with_name("hittrace.py")
_GCOV_SOURCE = re.compile(r"^\s*-:\s*0:Source:(.*)$")
_GCOV_COUNT = re.compile(r"^\s*(\d+)\*?:\s*(\d+):")

Key = tuple[str, int, int]


class HitMaxima:
    """The highest count seen of every arc or line; :meth:`update` says whether a run raised one."""

    def __init__(self) -> None:
        self.maxima: dict[Key, int] = {}

    def update(self, counts: dict[Key, int]) -> list[Key]:
        """Record ``counts``; the keys whose count is above every count seen before (new keys included)."""
        raised = [key for key, count in counts.items() if count > self.maxima.get(key, 0)]
        for key in raised:
            self.maxima[key] = counts[key]
        return raised


def python_command(argv: Sequence[str], cwd: Path) -> tuple[list[str], list[str]] | None:
    """``(interpreter and its options, script and its arguments)`` when ``argv`` runs a Python script, else None.

    ``argv`` is either ``python [options] script [args]`` or ``script [args]``
    where the script's ``#!`` line names a Python interpreter (directly or
    through ``env``).  ``-c`` and ``-m`` programs are not scripts: None.
    """
    if not argv:
        return None
    if _PYTHON_NAME.match(os.path.basename(argv[0])):
        interpreter = [argv[0]]
        rest = list(argv[1:])
        while rest and rest[0].startswith("-") and rest[0] != "-":
            option = rest.pop(0)
            if option in ("-c", "-m") or option.startswith(("-c", "-m")):
                return None
            interpreter.append(option)
            if option in _VALUED_OPTIONS and rest:
                interpreter.append(rest.pop(0))
        return (interpreter, rest) if rest and rest[0] != "-" else None
    script = cwd / argv[0] if os.sep in argv[0] else Path(shutil.which(argv[0]) or cwd / argv[0])
    try:
        with open(script, "rb") as handle:
            first = handle.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    try:
        words = shlex.split(first[2:].decode("utf-8", "replace"))
    except ValueError:
        return None
    if words and os.path.basename(words[0]) == "env":
        words = words[1:]
        while words and words[0].startswith("-"):  # env's own options (-S splits the rest, as shlex did)
            words.pop(0)
        if words:
            words[0] = shutil.which(words[0]) or words[0]
    if not words or not _PYTHON_NAME.match(os.path.basename(words[0])):
        return None
    return words, [str(script), *argv[1:]]


def read_trace_counts(path: Path) -> dict[Key, int]:
    """The arc counts :mod:`.hittrace` wrote."""
    counts: dict[Key, int] = {}
    with open(path, encoding="utf-8", errors="surrogateescape") as handle:
        for line in handle:
            count, filename, start, end = line.rstrip("\n").split("\t")
            counts[(filename, int(start), int(end))] = int(count)
    return counts


def read_gcov_counts(text: str) -> dict[Key, int]:
    """Execution count of every executed line in ``gcov -t`` output (files told apart by their Source: line)."""
    counts: dict[Key, int] = {}
    source = ""
    for line in text.splitlines():
        header = _GCOV_SOURCE.match(line)
        if header:
            source = header.group(1)
            continue
        found = _GCOV_COUNT.match(line)
        if found:
            counts[(source, 0, int(found.group(2)))] = int(found.group(1))
    return counts


class Guidance:
    """Hit counts of candidate inputs, each from a run of its own; :attr:`active` False when there are none.

    ``note`` says which counts are used, or why none are.  Use as a context
    manager (it owns a temporary directory and a spawn helper).
    """

    def __init__(self, command: list[str] | None, note: str, *, cwd: Path, input_name: str, stdin: bool,
                 hang_timeout: float, cancelled: threading.Event | None, coverage: Coverage | None = None) -> None:
        self.note = note
        self.active = command is not None
        self.maxima = HitMaxima()
        self.traced = 0
        self.kept = 0
        self._coverage = coverage
        self._tmp: Path | None = None
        self._runs: RepeatedRuns | None = None
        if command is not None:
            self._tmp = Path(tempfile.mkdtemp(prefix="perun-guide-"))
            self._input = self._tmp / input_name
            self._counts = self._tmp / "counts.tsv"
            if coverage is None:
                interpreter, script = python_command(command, cwd) or ([], [])
                command = [*interpreter, str(_TRACER), str(self._counts), *script]
            if stdin:
                command = ["/bin/sh", "-c", 'f=$1; shift; exec "$@" < "$f"', "sh", str(self._input), *command]
            else:
                command = [*command, str(self._input)]
            self._runs = RepeatedRuns(command, cwd=cwd, helper=spawn_helper(), timeout=hang_timeout,
                                      cancelled=cancelled, tail_lines=3)

    def __enter__(self) -> Guidance:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def counts(self, data: bytes) -> dict[Key, int] | None:
        """The hit counts of one run on ``data``; None when the run failed, hung or left no counts."""
        if self._runs is None:
            return None
        self._input.write_bytes(data)
        self._counts.unlink(missing_ok=True)
        if self._coverage is not None:
            self._coverage.reset()
        self.traced += 1
        try:
            outcome = self._runs.run()
        except (OSError, Interrupted):
            return None  # a cancelled search stops at its next check; a run that cannot start guides nothing
        if outcome.timed_out or outcome.exit_status != 0:
            return None
        if self._coverage is not None:
            return self._gcov_counts()
        try:
            return read_trace_counts(self._counts)
        except (OSError, ValueError):
            return None

    def _gcov_counts(self) -> dict[Key, int] | None:
        coverage = self._coverage
        assert coverage is not None
        data = sorted(str(p) for p in coverage.gcno_path.glob("*.gcda"))
        if not data:
            return None
        done = subprocess.run([coverage.gcov, "-t", "-o", str(coverage.gcno_path), *data], cwd=coverage.source_path,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
        return read_gcov_counts(done.stdout.decode("utf-8", "replace"))

    def prime(self, seeds: Iterable[bytes]) -> None:
        """Start the maxima from the seeds' counts; a program that leaves none on its seeds turns guidance off."""
        got_any = False
        for data in seeds:
            counts = self.counts(data)
            if counts:
                got_any = True
                self.maxima.update(counts)
        if not got_any and self.active:
            self.active = False
            self.note = f"hit-count guidance off: the traced runs of the seeds left no counts ({self.note})"

    def raises(self, data: bytes) -> bool:
        """Whether a run on ``data`` raised the highest count seen of some arc or line (recorded if so)."""
        if not self.active:
            return False
        counts = self.counts(data)
        if not counts or not self.maxima.update(counts):
            return False
        self.kept += 1
        return True

    def summary(self) -> str:
        if not self.active:
            return self.note
        return f"{self.note}: {self.kept} input{'s' * (self.kept != 1)} kept for raising a hit count " \
               f"({self.traced} traced runs, {len(self.maxima.maxima)} arcs or lines counted)"

    def close(self) -> None:
        if self._runs is not None:
            self._runs.close()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)


def start_guidance(mode: str, argv: Sequence[str], *, cwd: Path, input_name: str, stdin: bool, hang_timeout: float,
                   cancelled: threading.Event | None, coverage: Coverage | None) -> Guidance:
    """The guidance ``mode`` asks for and the program allows (see the module's description)."""
    common = {"cwd": cwd, "input_name": input_name, "stdin": stdin, "hang_timeout": hang_timeout,
              "cancelled": cancelled}
    if mode == "off":
        return Guidance(None, "hit-count guidance off (--guidance hits turns it on)", **common)
    if python_command(argv, cwd) is not None:
        return Guidance(list(argv), "hit-count guidance by tracing the Python program's arcs", **common)
    if coverage is not None:
        return Guidance(list(argv), "hit-count guidance by the gcov line counts", coverage=coverage, **common)
    return Guidance(None, "hit-count guidance off: the program is neither a Python script nor built with gcov "
                          "(--source-path/--gcno-path)", **common)
