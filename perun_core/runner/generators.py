"""Workload generators: jobs over growing inputs, merged into one profile.

Generators are configured in ``generators.workload`` (usually in
``.perun/local.yml``)::

    generators:
      workload:
        - id: sizes
          type: integer
          min: 1000
          max: 10000
          step: 1000
        - {id: lines, type: textfile, min_lines: 100, max_lines: 1000, step_lines: 300,
           min_chars: 80, max_chars: 80, profile_for_each_workload: true}

A job whose workload is a generator's ``id`` (``workloads: [sizes]`` in the
job matrix, ``-w sizes`` on the command line) runs its collector once per
generated workload, each time with that workload in place of the id on the
command line.  Every generated workload has a *size*:

==========  ===========================================  ==========================================
type        options (all integers unless said)           workloads and their sizes
==========  ===========================================  ==========================================
singleton   ``value`` (text or number), ``size``         ``value`` once; size ``size``, else the
            (number, optional)                           value when it is a number, else 1
integer     ``min``, ``max``, ``step`` (default 1)       the numbers min, min+step, ... <= max;
                                                         size = the number
string      ``min_len``, ``max_len``, ``step_len``       strings of letters and digits of those
            (default 1)                                  lengths (seeded, so the same every time);
                                                         size = the length
textfile    ``min_lines``, ``max_lines``,                temporary text files (the path is the
            ``step_lines``, ``min_chars``,               workload) of every combination of line
            ``max_chars``, ``step_chars`` (steps         count and characters per line, random
            default 1)                                   words (seeded); size = the file's bytes;
                                                         each file exists while its run lasts
external    ``command`` (text), ``file_format``          runs ``command`` (no shell) in the job's
            (text, optional), ``timeout`` (seconds,      directory with ``{dir}`` replaced by a
            optional)                                    temporary directory (appended when
                                                         absent); every file it writes there is
                                                         a workload, size = its bytes or, with
                                                         ``file_format: "in-{size}.txt"``, the
                                                         number in its name (``size_key: n``
                                                         records it as ``n`` too, as the
                                                         original Perun's ``{n}`` does)
==========  ===========================================  ==========================================

Workloads run in the order of their sizes.  With ``profile_for_each_workload``
false (the default) the profiles of all runs are merged into one
(:func:`merge_profiles`) before the job's postprocessors see it: its
``header.workload`` is the generator id and every resource carries its run's
workload size as ``structure-unit-size`` (unless the collector gave it one),
so regression analysis of the merged profile yields a model of the amounts
depending on the input size.  With it true, every run gives a profile of its
own whose ``header.workload`` is ``ID:LABEL`` (``sizes:4000``,
``lines:100x80``), with the size in ``header.workload_size`` and on its
resources too.

A run over generated workloads is still one job (one ``JobStarted``); each
workload announces itself with a
:class:`~perun_core.events.WorkloadStarted` event.
"""

from __future__ import annotations

import contextlib
import math
import re
import shlex
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import WorkloadGenerationFailed
from ..config.generators import (  # the schema; re-exported so the generator names stay in one place
    GENERATOR_TYPES,
    MAX_WORKLOADS,
    Generator,
    check_generators,
    generator_from_spec,
    generator_spec,
    generators_from_config,
    steps,
)
from ..events import WorkloadStarted
from ..profile.model import Profile, Snapshot
from ..profile.resources import MISSING, ResourceTable
from .process import describe_status, run_process
from .run import collect_job, postprocess_job

__all__ = [
    "GENERATOR_TYPES",
    "MAX_WORKLOADS",
    "Generator",
    "Workload",
    "check_generators",
    "collect_generated",
    "generated_workloads",
    "generator_from_spec",
    "generator_spec",
    "generators_from_config",
    "measure_generated",
    "merge_profiles",
    "with_sizes",
]

SIZE_KEY = "structure-unit-size"


@dataclass(frozen=True, slots=True)
class Workload:
    """One generated workload: ``argument`` goes on the command line; ``label`` names it briefly."""

    argument: str
    size: int | float
    label: str


# -- generation ----------------------------------------------------------------------------------

def _seeded(generator: Generator, *parts: Any) -> Any:
    import random

    return random.Random(":".join(str(p) for p in (generator.id, *parts)))


_ALPHANUMERIC = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
# random bytes become letters, with about one space in six (words of ~5 letters)
_TEXT_TABLE = bytes(b" "[0] if i % 6 == 0 else b"abcdefghijklmnopqrstuvwxyz"[i % 26] for i in range(256))


def _text(generator: Generator, lines: int, chars: int) -> bytes:
    body = _seeded(generator, lines, chars).randbytes(lines * chars).translate(_TEXT_TABLE)
    return b"".join(body[i * chars:(i + 1) * chars] + b"\n" for i in range(lines))


def _number(value: Any) -> int | float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        for parse in (int, float):
            with contextlib.suppress(ValueError):
                number = parse(value.strip())
                return number if math.isfinite(number) else None
    return None


class _External:
    """The files an external command wrote, with their sizes."""

    def __init__(self, generator: Generator, cwd: Path, directory: Path, ctx: Any) -> None:
        self.generator = generator
        self.cwd = cwd
        self.directory = directory
        self.ctx = ctx

    def run(self) -> list[Workload]:
        generator = self.generator
        command = generator.option("command")
        try:
            words = shlex.split(command)
        except ValueError as exc:
            raise self._failed(f"cannot split its command {command!r}: {exc}") from None
        if generator.option("output_dir"):
            # the original Perun's form: the command writes into a directory of its own choice
            self.directory = (self.cwd / generator.option("output_dir")).resolve()
        elif not any("{dir}" in word for word in words):
            words.append("{dir}")
        argv = [word.replace("{dir}", str(self.directory)) for word in words]
        try:
            outcome = run_process(argv, cwd=self.cwd, timeout=generator.option("timeout"), merge_stderr=True,
                                  cancelled=getattr(self.ctx, "cancelled", None), tail_lines=20)
        except FileNotFoundError:
            raise self._failed(f"its command was not found: {argv[0]}") from None
        except OSError as exc:
            raise self._failed(f"its command cannot be started: {exc.strerror or exc}") from None
        if outcome.timed_out:
            raise self._failed(f"its command timed out after {generator.option('timeout'):g} s", outcome.stdout_tail)
        if outcome.exit_status != 0:
            raise self._failed(f"its command {describe_status(outcome.exit_status)}", outcome.stdout_tail,
                               outcome.exit_status)
        return self._collected()

    def _collected(self) -> list[Workload]:
        file_format = self.generator.option("file_format")
        pattern = None
        if file_format:
            before, _, after = file_format.partition("{size}")
            pattern = re.compile(re.escape(before) + r"([+-]?\d+(?:\.\d+)?)" + re.escape(after))
        found = []
        for path in sorted(p for p in self.directory.rglob("*") if p.is_file()):
            if pattern is None:
                size: int | float | None = path.stat().st_size
            else:
                match = pattern.fullmatch(path.name)
                size = _number(match.group(1)) if match else None
                if size is None:
                    continue
            found.append(Workload(shlex.quote(str(path)), size, path.name))
        if not found:
            what = f"no files named like '{file_format}'" if file_format else "no files"
            raise self._failed(f"its command wrote {what} into the workload directory")
        if len(found) > MAX_WORKLOADS:
            raise self._failed(f"its command wrote {len(found)} files; at most {MAX_WORKLOADS} are allowed")
        return sorted(found, key=lambda w: (w.size, w.label))

    def _failed(self, reason: str, tail: str = "", status: int | None = None) -> WorkloadGenerationFailed:
        return WorkloadGenerationFailed(getattr(self.ctx, "label", "") or self.generator.id, self.generator.id,
                                        reason, status, tail)


@contextlib.contextmanager
def generated_workloads(generator: Generator, cwd: Path, ctx: Any = None) -> Iterator[list[Callable[[], Workload]]]:
    """The workloads of ``generator``, in size order, as functions that make each one when it is due.

    Text files are written by their function (into a temporary directory
    removed when the block ends, the file of the previous workload removed
    when the next one is made); an external command runs on entering.
    Raises :class:`WorkloadGenerationFailed` when an external command fails
    or writes nothing usable.
    """
    option = generator.option
    scratch: Path | None = None
    try:
        if generator.type in ("textfile", "external"):
            scratch = Path(tempfile.mkdtemp(prefix=f"perun-workloads-{_safe(generator.id)}-"))
        makers: list[tuple[int | float, Callable[[], Workload]]] = []
        if generator.type == "singleton":
            value = option("value")
            size = option("size")
            if size is None:
                size = _number(value)
            workload = Workload(str(value), 1 if size is None else size, str(value))
            makers.append((workload.size, lambda w=workload: w))
        elif generator.type == "integer":
            for number in steps(option("min"), option("max"), option("step", 1)):
                makers.append((number, lambda n=number: Workload(str(n), n, str(n))))
        elif generator.type == "string":
            for length in steps(option("min_len"), option("max_len"), option("step_len", 1)):
                def make_string(length: int = length) -> Workload:
                    rng = _seeded(generator, length)
                    text = "".join(rng.choices(_ALPHANUMERIC, k=length))
                    return Workload(shlex.quote(text), length, str(length))
                makers.append((length, make_string))
        elif generator.type == "textfile":
            assert scratch is not None
            previous: list[Path] = []
            shapes = [(lines, chars)
                      for lines in steps(option("min_lines"), option("max_lines"), option("step_lines", 1))
                      for chars in steps(option("min_chars"), option("max_chars"), option("step_chars", 1))]
            for lines, chars in shapes:
                def make_file(lines: int = lines, chars: int = chars, directory: Path = scratch) -> Workload:
                    for old in previous:
                        with contextlib.suppress(OSError):
                            old.unlink()
                    previous.clear()
                    path = directory / f"{_safe(generator.id)}-{lines}x{chars}.txt"
                    data = _text(generator, lines, chars)
                    path.write_bytes(data)
                    previous.append(path)
                    return Workload(shlex.quote(str(path)), len(data), f"{lines}x{chars}")
                makers.append((lines * (chars + 1), make_file))
        else:
            assert scratch is not None
            for workload in _External(generator, cwd, scratch, ctx).run():
                makers.append((workload.size, lambda w=workload: w))
        makers.sort(key=lambda pair: pair[0])
        yield [make for _, make in makers]
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:40] or "gen"


# -- merging -------------------------------------------------------------------------------------

def _sized_table(table: Any, size: int | float, also: str | None = None) -> Any:
    """A copy of ``table`` whose every resource has ``structure-unit-size`` (``size`` where it had none), and
    the key ``also`` too (an external generator's ``size_key``: the original Perun's name of it, ``n``)."""

    keys, columns = table.columns()
    keys, columns = list(keys), [list(column) for column in columns]
    count = len(table)
    for key in dict.fromkeys(k for k in (SIZE_KEY, also) if k):
        if key in keys:
            index = keys.index(key)
            columns[index] = [size if value is MISSING else value for value in columns[index]]
        else:
            keys.append(key)
            columns.append([size] * count)
    sparse = any(value is MISSING for column in columns for value in column)
    return ResourceTable.from_columns(count, keys, columns, sparse=sparse)


def with_sizes(profile: Any, workload: Workload, generator: Generator) -> Any:
    """``profile`` of one generated workload, as a profile of its own (``profile_for_each_workload``)."""

    also = generator.option("size_key")

    def region(snapshot: Snapshot) -> Snapshot:
        return Snapshot(_sized_table(snapshot.resources, workload.size, also), list(snapshot.models),
                        dict(snapshot.meta), snapshot.has_models_key)

    header = {**profile.header, "workload": f"{generator.id}:{workload.label}", "workload_size": workload.size,
              "generator": generator_spec(generator)}
    return Profile(header=header, collector_info=dict(profile.collector_info),
                   postprocessors=list(profile.postprocessors), snapshots=[region(s) for s in profile.snapshots],
                   global_region=None if profile.global_region is None else region(profile.global_region),
                   origin=profile.origin, extra=dict(profile.extra))


def merge_profiles(runs: Sequence[tuple[Any, int | float]], workload: str, generator: Generator | None = None) -> Any:
    """One profile from the profiles of runs over workloads of the given sizes.

    Snapshots are concatenated in run order and so are the resources of the
    ``global`` regions (whose numeric ``timestamp`` values are summed).  Every
    resource carries its run's size as ``structure-unit-size`` unless it
    had one; amounts and sizes thus always pair up.  The header is the first
    run's, with ``workload`` set to ``workload`` and ``workload_sizes`` listing
    the sizes; collector info and origin are the first run's.  ValueError for
    no runs.
    """

    if not runs:
        raise ValueError("nothing to merge: no runs")
    first = runs[0][0]
    snapshots: list[Snapshot] = []
    global_keys: list[str] = []
    global_columns: dict[str, list] = {}
    global_count = 0
    global_meta: dict[str, Any] | None = None
    global_models: list[dict] = []
    also = generator.option("size_key") if generator is not None else None
    for profile, size in runs:
        for snapshot in profile.snapshots:
            snapshots.append(Snapshot(_sized_table(snapshot.resources, size, also), list(snapshot.models),
                                      dict(snapshot.meta), snapshot.has_models_key))
        region = profile.global_region
        if region is None:
            continue
        sized = _sized_table(region.resources, size, also)
        keys, columns = sized.columns()
        for key in keys:
            if key not in global_columns:
                global_keys.append(key)
                global_columns[key] = [MISSING] * global_count
        for key in global_keys:
            column = columns[keys.index(key)] if key in keys else [MISSING] * len(sized)
            global_columns[key].extend(column)
        global_count += len(sized)
        global_models.extend(region.models)
        if global_meta is None:
            global_meta = dict(region.meta)
        else:
            for key, value in region.meta.items():
                old = global_meta.get(key)
                if isinstance(old, (int, float)) and isinstance(value, (int, float)) and key in ("timestamp", "time"):
                    global_meta[key] = old + value
    global_region = None
    if global_meta is not None:
        columns = [global_columns[key] for key in global_keys]
        sparse = any(value is MISSING for column in columns for value in column)
        global_region = Snapshot(ResourceTable.from_columns(global_count, global_keys, columns, sparse=sparse),
                                 global_models, global_meta)
    header = {**first.header, "workload": workload, "workload_sizes": [size for _, size in runs]}
    # the first run's alone would understate how often the runs together waited for a core
    header.pop("preemption", None)
    preemption = _summed_preemption([profile.header for profile, _ in runs])
    if preemption is not None:
        header["preemption"] = preemption
    if generator is not None:
        header["generator"] = generator_spec(generator)
    return Profile(header=header, collector_info=dict(first.collector_info), postprocessors=[],
                   snapshots=snapshots, global_region=global_region, origin=first.origin, extra=dict(first.extra))


def _summed_preemption(headers: Sequence[Any]) -> dict | None:
    """The preemptions and the time off the CPU of every run together (a check weighs the calls of all the runs
    against them); None unless every run counted them."""
    records = [header.get("preemption") if isinstance(header, dict) else None for header in headers]
    if not records or not all(isinstance(r, dict) for r in records):
        return None
    try:
        return {"count": sum(int(r["count"]) for r in records),
                "wait_seconds": round(sum(float(r["wait_seconds"]) for r in records), 6)}
    except (KeyError, TypeError, ValueError):
        return None


# -- running a job over generated workloads -----------------------------------------------------

def collect_generated(job: Any, generator: Generator, ctx: Any, origin: str, store: Callable[[Any], None]) -> None:
    """Collect ``job`` once per workload of ``generator``; hand the profile(s) to ``store``.

    Each run collects ``job`` with the workload replaced by the generated
    one (postprocessors are not applied per run).  Merged (the default): the
    merged profile goes through the job's postprocessors and to ``store``
    once.  Per workload: each run's profile is postprocessed and stored as
    soon as it is collected.  Raises :class:`CollectionError` (a failed run
    fails the whole job; profiles already stored stay) and
    :class:`WorkloadGenerationFailed`.
    """

    runs: list[tuple[Any, int | float]] = []
    with generated_workloads(generator, Path(ctx.cwd), ctx) as makers:
        total = len(makers)
        for index, make in enumerate(makers, 1):
            ctx.check_cancelled()
            workload = make()
            ctx.emit(WorkloadStarted(ctx.job, index, total, generator.id, workload.label, workload.size))
            single = replace(job, workload=workload.argument)
            # errors of this run name the generated workload, not the generator
            profile = collect_job(single, replace(ctx, label=single.label), origin, postprocess=False)
            if generator.profile_for_each_workload:
                store(postprocess_job(job, with_sizes(profile, workload, generator), ctx))
            else:
                runs.append((profile, workload.size))
    if not generator.profile_for_each_workload:
        merged = merge_profiles(runs, job.workload, generator)
        store(postprocess_job(job, merged, ctx))


def measure_generated(job: Any, generator: Generator, ctx: Any, origin: str, label: str | None = None) -> Any:
    """One profile of ``job`` over the workloads of ``generator``, as :func:`collect_generated` makes it.

    Without postprocessors: for measuring a profile's job again (confirmation,
    explanation).  ``label`` keeps to the one workload of that label (a
    profile made with ``profile_for_each_workload``).  Raises
    :class:`CollectionError`, :class:`WorkloadGenerationFailed`, and
    ValueError when no workload has ``label``.
    """

    runs: list[tuple[Any, int | float]] = []
    with generated_workloads(generator, Path(ctx.cwd), ctx) as makers:
        for make in makers:
            ctx.check_cancelled()
            workload = make()
            if label is not None and workload.label != label:
                continue
            single = replace(job, workload=workload.argument)
            profile = collect_job(single, replace(ctx, label=single.label), origin, postprocess=False)
            if label is not None:
                return with_sizes(profile, workload, generator)
            runs.append((profile, workload.size))
    if not runs:
        raise ValueError(f"generator '{generator.id}' makes no workload '{label}'")
    return merge_profiles(runs, job.workload, generator)
