"""Comparing two call-level profiles per function: the functions that carry a time change.

:func:`explain_profiles` compares them with :func:`perun_core.diff.compare`,
whose ranking by ``contribution`` (a function's change of exclusive cost as
a share of the whole program's change) puts first the functions that add
up to most of the change; code blocks Python runs as functions of their own
count towards the function they are written in, perf sample counts get a
p-value, and native functions get the source file and line their profile
rows name.  ``directory`` receives the difference flame graph and listings.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..atomic import atomic_write_text as write_text_atomic
from ..diff import compare
from ..diff.render import build_flame, render, render_flame
from ..errors import PerunError
from ..profile.resources import MISSING
from ..runner.worktree import WORKTREE_PREFIX
from .explain_owned import Attribution, Ownership, attribute
from .explain_result import ExplainedFunction, Explanation, ThroughFunction

__all__ = ["MIN_SAMPLES", "MIN_SHARE", "TOP", "explain_profiles", "in_repository", "sample_p_value"]

#: Functions listed per explanation.
TOP = 5
#: Fewer perf samples than this on the slower side cannot localize anything.
MIN_SAMPLES = 50
#: Functions after the first are listed when they carry at least this share of the change.
MIN_SHARE = 0.01
#: Foreign functions listed under each owned one.
_THROUGH = 3
_LOCATION = re.compile(r"^(?P<file>.+?):(?P<line>\d+)\((?P<name>.*)\)$")


def _samples(profile: Any) -> int:
    """The stack samples of a perf profile."""
    total = 0
    for _, region in profile.regions():
        table = region.resources
        if not len(table) or "subtype" not in table.columns()[0]:
            continue
        for subtype, amount in zip(table.column("subtype"), table.column("amount")):
            if subtype == "samples" and isinstance(amount, (int, float)):
                total += int(amount)
    return total


def sample_p_value(baseline: float, target: float) -> float:
    """Two-sided p-value that two sample counts of equally long sampling come from one rate.

    Samples taken at a fixed frequency are Poisson counts of the time spent;
    given their sum, the target's count is binomial with p = 1/2 when the
    time did not change (normal approximation, continuity-corrected).
    """
    import math

    total = baseline + target
    if total <= 0:
        return 1.0
    z = max(abs(target - baseline) - 1.0, 0.0) / math.sqrt(total)
    return math.erfc(z / math.sqrt(2.0))


def _enclosing(anonymous: ExplainedFunction, named: list[ExplainedFunction]) -> ExplainedFunction | None:
    """The function whose body holds a comprehension, generator expression or lambda: the nearest one
    defined at or above its line in the same file."""
    best = None
    for candidate in named:
        if (candidate.file == anonymous.file and candidate.line is not None and anonymous.line is not None
                and candidate.line <= anonymous.line and (best is None or candidate.line > best.line)):  # type: ignore[operator]
            best = candidate
    return best


def _functions(comparison: Any, top: int) -> tuple[ExplainedFunction, ...]:
    """The functions carrying the change, largest share first (profiles whose ownership is not known).

    A list scan in a comprehension of ``lookup`` is ``lookup``'s change (:func:`_ranked`).
    """
    every = []
    for change in comparison.functions or ():
        file = line = None
        name = change.function
        match = _LOCATION.match(name)
        if match:
            file, line, name = match["file"], int(match["line"]), match["name"]
        elif change.object and change.object != "???":
            file = in_repository(change.object)
        every.append(ExplainedFunction(name, file, line, change.baseline_exclusive, change.target_exclusive,
                                       change.contribution, change.status))
    return _ranked(every, comparison.function_unit, top)


def _ranked(entries: list[ExplainedFunction], unit: str, top: int) -> tuple[ExplainedFunction, ...]:
    """The ``top`` entries carrying most of the change, the user's functions first (where ownership is known).

    The code blocks Python runs as functions of their own (comprehensions,
    generator expressions, lambdas) count towards the function they are
    written in, unless they are foreign code; perf sample counts get a
    p-value; after the first, entries carrying less than :data:`MIN_SHARE`
    of the change are left out.
    """
    named = [f for f in entries if f.name_is_code() and f.line is not None]
    merged: dict[int, ExplainedFunction] = {}
    for function in entries:
        owner = _enclosing(function, named) if function.is_block() and function.owned is not False else None
        into = owner if owner is not None else function
        # a function's own row is the starting point, whether it or one of its blocks comes first
        merged.setdefault(id(into), into)
        if owner is not None:
            was = merged[id(into)]
            merged[id(into)] = replace(was, baseline=was.baseline + function.baseline,
                                       target=was.target + function.target, share=was.share + function.share)
    ranked = sorted((f for f in merged.values() if f.change != 0 and f.share > 0),
                    key=lambda f: (f.owned is False, -f.share))[:top]
    if unit == "samples":
        ranked = [replace(f, p_value=sample_p_value(f.baseline, f.target)) for f in ranked]
    # functions that moved less than 1 % of the change are noise next to the ones that did
    return tuple(f for n, f in enumerate(ranked) if n == 0 or f.share >= MIN_SHARE)


def _charged_functions(comparison: Any, sides: tuple[Attribution, Attribution], top: int
                       ) -> tuple[ExplainedFunction, ...]:
    """The user's functions carrying the change with the foreign cost charged to them, largest share first,
    then the foreign functions whose cost no owned function is above (see :mod:`.explain_owned`)."""
    base, target = sides
    total_change = target.total - base.total
    if not total_change:
        return ()
    entries = []
    for name in dict.fromkeys([*base.charged, *target.charged]):
        through = []
        below = [base.through.get(name, {}), target.through.get(name, {})]
        for foreign in dict.fromkeys([*below[0], *below[1]]):
            through.append(ThroughFunction(foreign, below[0].get(foreign, 0.0), below[1].get(foreign, 0.0)))
        through.sort(key=lambda t: (-abs(t.change), t.function))
        entries.append(_entry(name, base.charged.get(name), target.charged.get(name), total_change, True,
                              tuple(t for t in through[:_THROUGH] if t.change)))
    for name in dict.fromkeys([*base.unowned, *target.unowned]):
        entries.append(_entry(name, base.unowned.get(name), target.unowned.get(name), total_change, False, ()))
    return _ranked(entries, comparison.function_unit, top)


def _entry(uid: str, baseline: float | None, target: float | None, total_change: float, owned: bool,
           through: tuple[ThroughFunction, ...]) -> ExplainedFunction:
    file = line = None
    name = uid
    match = _LOCATION.match(uid)
    if match:
        file, line, name = match["file"], int(match["line"]), match["name"]
    status = "new" if baseline is None else "gone" if target is None else "changed"
    change = (target or 0.0) - (baseline or 0.0)
    return ExplainedFunction(name, file, line, baseline or 0.0, target or 0.0, change / total_change, status,
                             owned=owned, through=through)


def in_repository(path: str) -> str:
    """A source path inside a temporary worktree as a path relative to the repository."""

    parts = Path(path).parts
    for index, part in enumerate(parts):
        if part.startswith(WORKTREE_PREFIX) and index + 1 < len(parts):
            return str(Path(*parts[index + 1:]))
    return path


def _source_lines(profile: Any) -> dict[str, tuple[str, int | None]]:
    """function -> (source file, line) where the profile's function rows say so (callgrind, perf)."""

    found: dict[str, tuple[str, int | None]] = {}
    for _, region in profile.regions():
        table = region.resources
        if not len(table):
            continue
        keys = table.columns()[0]
        if "source" not in keys or "uid" not in keys:
            continue
        lines = table.column("line") if "line" in keys else [MISSING] * len(table)
        for uid, source, line in zip(table.column("uid"), table.column("source"), lines):
            if source is MISSING or not isinstance(uid, str) or uid in found:
                continue
            found[uid] = (in_repository(str(source)), line if isinstance(line, int) else None)
    return found


def explain_profiles(name: str, base: Any, target: Any, base_name: str, target_name: str, label: str, *,
                     directory: Path | None = None, written: tuple[str, ...] = (),
                     reused: tuple[str, ...] = (), profiles: tuple[str, ...] = (),
                     rounds: int = 1, sources: tuple[str, ...] = (), roots: tuple[str, ...] = (),
                     notes: tuple[str, ...] = ()) -> Explanation:
    """Compare two call-level profiles of collector ``name`` per function (see the module docstring).

    ``profiles`` names the two profiles, ``sources`` says where they are
    (see :class:`Explanation`) and ``rounds`` how many runs of each side
    they merge; all are kept in the explanation.  ``roots`` are the
    directories of the user's code besides temporary worktrees (the
    repository); ``notes`` say how the collection was bounded.
    """

    kept = {"written": written, "reused": reused, "profiles": profiles, "rounds": rounds, "sources": sources,
            "notes": notes}

    if name == "perf":
        # the slower side's samples say where its extra time went (a tenfold regression's baseline may have few)
        fewest = max(_samples(base), _samples(target))
        if fewest < MIN_SAMPLES:
            how = ("explain with callgrind (--explain-with callgrind), which counts every instruction"
                   if shutil.which("valgrind") else "install valgrind to count its instructions with callgrind")
            return Explanation(collector=name, **kept,
                               message=f"the program is too short to sample ({fewest} perf samples, "
                                       f"{MIN_SAMPLES} needed); {how}")
    try:
        comparison = compare(base, target, baseline_name=base_name[:7], target_name=target_name[:7])
    except PerunError as exc:
        return Explanation(collector=name, message=exc.message, **kept)
    if not comparison.functions or comparison.total_change == 0:
        return Explanation(collector=name, **kept,
                           message=f"the {name} profiles show no change per function"
                                   + (" (the program may be too short to measure)" if name == "pytrace" else ""))
    ownership = Ownership(roots)
    # a side without a single sample is charged nothing (see diff.compare), not left unattributed
    sides = tuple(Attribution() if not profile.resource_count() else attribute(profile, ownership)
                  for profile in (base, target))
    if sides[0] is not None and sides[1] is not None:
        functions = _charged_functions(comparison, (sides[0], sides[1]), TOP)
        totals = (sides[0].total, sides[1].total)
    else:
        functions = _functions(comparison, TOP)
        totals = (comparison.baseline_total, comparison.target_total)
    where = {**_source_lines(base), **_source_lines(target)}
    functions = tuple(replace(f, file=where[f.function][0], line=where[f.function][1] or f.line)
                      if f.function in where else f for f in functions)
    if directory is not None:
        written += tuple(_write_views(comparison, directory, label, base_name, target_name))
    return Explanation(name, comparison.function_unit, totals[0], totals[1], functions, "", written, reused,
                       profiles, rounds, sources, notes)


def _write_views(comparison: Any, directory: Path, label: str, base_minor: str, target_minor: str) -> list[str]:
    """The difference flame graph (SVG and folded) where the profiles have call stacks, the HTML report
    of the difference (table, functions, bars and the flame graph where it can be drawn), and the
    per-function listing as text."""

    directory.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", label)[:60].strip("_") or "job"
    stem = f"explain-{base_minor[:7]}-{target_minor[:7]}-{stem}"
    written = []
    if comparison.has_stacks:
        flame = build_flame(comparison)
        for fmt, suffix in (("svg", ".svg"), ("folded", ".folded")):
            path = directory / f"{stem}{suffix}"
            write_text_atomic(path, render_flame(flame, fmt))
            written.append(str(path))
    page = directory / f"{stem}.html"
    write_text_atomic(page, render(comparison, "report"))
    written.append(str(page))
    report = directory / f"{stem}.txt"
    write_text_atomic(report, render(comparison, "short", width=120))
    written.append(str(report))
    return written

