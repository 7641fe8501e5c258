"""Comparing two profiles: what changed, per resource and per function.

:func:`compare` gives a :class:`Comparison`:

* ``changes``: one :class:`Change` per uid and subtype (and caller, for
  call-edge resources) found in either profile: the baseline and target
  value, their absolute and relative difference, and an ``impact`` (the
  absolute change as a share of the baseline total of its type and
  subtype) by which the list is sorted, largest first.  The value of a
  group is the *sum* of its resources when they carry call stacks (samples,
  allocations: each is a part of the whole) and their *mean* otherwise
  (repeated measurements of one thing: runs, rounds, repetitions).  The
  porcelain gives repeated measurements in both profiles the values the
  degradation check reports instead (``levels``: the baseline's median and
  that median moved by the robust shift), so one pair reads the same change
  in ``diff`` and ``check``; repeated measurements on one side only get
  their median (the statistic the baseline's level is).
* ``functions`` (profiles with call stacks or caller edges):
  one :class:`FunctionChange` per function with its exclusive and
  inclusive cost and calls in both, functions that appear or disappear
  included, ranked by ``contribution``: the change of its exclusive cost as
  a share of the whole program's change.  Exclusive costs add up to the
  program's total, so the first functions of the ranking account for most
  of the change.

Values of a type are never mixed across units: when the two profiles give
one type different units, time units are converted to the baseline's, and
anything else is refused (:class:`~perun_core.errors.IncomparableProfiles`).
Everything is computed with numpy over columns, so profiles of a million
resources compare in well under a second.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from itertools import repeat
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import IncomparableProfiles
from ..profile.resources import MISSING
from .columns import cell_text, coded_cells, numeric_cells

if TYPE_CHECKING:  # pragma: no cover
    from ..profile.model import Profile

__all__ = ["NOISE_FLOOR", "under_noise_floor", "Change", "Comparison", "FunctionChange", "compare", "function_costs",
           "FunctionCosts"]

#: Seconds per unit of the time units profiles use.
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}

#: The noise floor: a value that moved by less than this share of its baseline (1 %) is ``same``, not
#: ``changed``.  Two measurements of one unchanged program differ by about this much (the peak memory by a
#: page or two, times by scheduling), so a smaller difference says nothing; ``diff --noise-floor`` sets it.
NOISE_FLOOR = 0.01


def under_noise_floor(absolute: float, relative: float | None, noise_floor: float) -> bool:
    """Whether a change of ``absolute`` (``relative`` to its baseline, None for no baseline) counts as ``same``.

    The one rule of the table's ``same`` and the difference flame graph's ``=``: nothing moved, or less than
    ``noise_floor`` of a baseline that is not 0.
    """
    return absolute == 0 or (relative is not None and abs(relative) < noise_floor)

#: (baseline amounts, target amounts) -> (baseline value, target value, relative change) of a group of repeated
#: measurements: the porcelain passes the degradation check's robust levels, so that a pair shows one change in
#: ``diff`` and ``check``
Levels = Callable[[list[float], list[float]], tuple[float, float, float]]


@dataclass(frozen=True, slots=True)
class Change:
    """One uid (and subtype) in the baseline and the target."""

    uid: str
    subtype: str
    type: str
    unit: str
    baseline: float | None
    target: float | None
    #: "sum", "mean", "median" (runs on one side only, when levels are given) or "robust" (the levels of
    #: :data:`Levels`) of the group's resources
    statistic: str
    baseline_count: int
    target_count: int
    impact: float
    #: relative changes smaller than this count as ``same`` (see :data:`NOISE_FLOOR`)
    noise_floor: float = NOISE_FLOOR
    #: the relative change that ``levels`` gave (statistic ``robust``), else None: computed from the values
    robust_relative: float | None = None

    @property
    def absolute(self) -> float:
        return (self.target or 0.0) - (self.baseline or 0.0)

    @property
    def relative(self) -> float | None:
        """(target - baseline) / baseline; None when there is no (or a zero) baseline."""
        if not self.baseline:
            return None
        if self.robust_relative is not None:
            return self.robust_relative
        return self.absolute / abs(self.baseline)

    @property
    def status(self) -> str:
        """``new`` (only in the target), ``gone`` (only in the baseline), ``same`` or ``changed``.

        ``same`` when the values are equal or differ by less than the noise
        floor (a share of the baseline).
        """
        if self.baseline is None:
            return "new"
        if self.target is None:
            return "gone"
        if under_noise_floor(self.absolute, self.relative, self.noise_floor):
            return "same"
        return "changed"


@dataclass(frozen=True, slots=True)
class FunctionChange:
    """One function's costs in the baseline and the target (0 where it does not occur)."""

    function: str
    object: str
    baseline_exclusive: float
    target_exclusive: float
    baseline_inclusive: float
    target_inclusive: float
    baseline_calls: int | None
    target_calls: int | None
    in_baseline: bool
    in_target: bool
    #: exclusive change / the whole program's change (signed; the ranking's key is its size)
    contribution: float

    @property
    def exclusive_change(self) -> float:
        return self.target_exclusive - self.baseline_exclusive

    @property
    def inclusive_change(self) -> float:
        return self.target_inclusive - self.baseline_inclusive

    @property
    def relative_exclusive(self) -> float | None:
        return self.exclusive_change / self.baseline_exclusive if self.baseline_exclusive else None

    @property
    def relative_inclusive(self) -> float | None:
        return self.inclusive_change / self.baseline_inclusive if self.baseline_inclusive else None

    @property
    def status(self) -> str:
        if not self.in_baseline:
            return "new"
        if not self.in_target:
            return "gone"
        return "same" if self.exclusive_change == 0 and self.inclusive_change == 0 else "changed"


@dataclass(frozen=True, slots=True)
class FunctionCosts:
    """Per-function costs of one profile: name -> (exclusive, inclusive, calls or None, object)."""

    type: str
    unit: str
    costs: dict[str, tuple[float, float, int | None, str]]
    total: float
    #: where they came from: "function rows", "cprofile rows", "call rows" or "stacks"
    source: str


@dataclass(frozen=True)
class Comparison:
    """The difference of two profiles; see the module docstring."""

    baseline_name: str
    target_name: str
    type: str
    changes: tuple[Change, ...]
    functions: tuple[FunctionChange, ...] | None = None
    function_unit: str = ""
    #: the whole program's exclusive cost in both (functions only)
    baseline_total: float = 0.0
    target_total: float = 0.0
    #: units converted to the baseline's: {type: (target unit, baseline unit)}
    converted: dict[str, tuple[str, str]] = field(default_factory=dict)
    baseline: Profile | None = field(default=None, repr=False, compare=False)
    target: Profile | None = field(default=None, repr=False, compare=False)
    #: relative changes smaller than this count as ``same`` (see :data:`NOISE_FLOOR`), in the table and the flame graph
    noise_floor: float = NOISE_FLOOR

    @property
    def overlapping_uids(self) -> bool:
        """Whether the uid rows overlap (a caller's amount holds its callees', a ``caller -> callee`` row repeats
        part of it) and so, unlike the functions (split exclusively), add up to no program total."""
        return any(p is not None and _has_stacks(p, ("caller",)) for p in (self.baseline, self.target))

    @property
    def has_stacks(self) -> bool:
        """Whether both profiles carry call stacks, or caller edges to rebuild them from (callgrind, pytrace):
        a difference flame graph can be drawn."""
        return self.baseline is not None and self.target is not None and _has_stacks(self.baseline) \
            and _has_stacks(self.target)

    def sides_without_stacks(self) -> list[tuple[str, Profile | None]]:
        """``(name, profile)`` of each side with no call stacks (nor caller edges), baseline first."""
        sides = ((self.baseline_name, self.baseline), (self.target_name, self.target))
        return [(name, profile) for name, profile in sides if profile is None or not _has_stacks(profile)]

    @property
    def total_change(self) -> float:
        return self.target_total - self.baseline_total

    def top_functions(self, count: int = 10) -> list[FunctionChange]:
        return list((self.functions or ())[:count])


# -- reading columns: diff/columns.py -----------------------------------------------------

def _unit_of(profile: Profile, kind: str, subtype: str) -> str:
    units = profile.units
    return str(units.get(f"{kind}({subtype})", units.get(kind, "")))


def _has_stacks(profile: Profile, keys: tuple[str, ...] = ("trace", "caller")) -> bool:
    for _, region in profile.regions():  # a resource with a call stack or a caller (of ``keys``)
        table = region.resources
        if len(table):
            present = table.columns()[0]
            if any(key in present and any(v is not MISSING and v for v in table.column(key)) for key in keys):
                return True
    return False


def _groups(profile: Profile, values: dict[tuple[str, str, str], list[float]] | None = None,
            ) -> dict[tuple[str, str, str], tuple[float, int, str, bool]]:
    """(type, subtype, uid) -> (sum, count, unit, carries stacks) of the numeric ``amount`` of every resource.

    ``values``, when given, gets the amounts of the resources without a call stack, by group.
    """
    import numpy as np

    out: dict[tuple[str, str, str], list] = {}
    for _, region in profile.regions():
        table = region.resources
        if not len(table):
            continue
        keys = table.columns()[0]
        if "amount" not in keys or "uid" not in keys:
            continue
        amounts, numeric = numeric_cells(table.column("amount"))
        uids = table.column("uid")
        if "caller" in keys:
            uids = [u if c is MISSING else f"{cell_text(c)} -> {cell_text(u)}"
                    for u, c in zip(uids, table.column("caller"))]
        uid_names, uid_codes = coded_cells(uids, convert=True)
        type_names, type_codes = coded_cells(table.column("type") if "type" in keys else [""] * len(table),
                                             convert=True)
        sub_names, sub_codes = coded_cells(table.column("subtype") if "subtype" in keys else [""] * len(table),
                                      convert=True)
        kind_names = [f"{t}\0{'' if s is MISSING else s}" for t in type_names for s in sub_names]
        kind_codes = type_codes * len(sub_names) + sub_codes
        traced = np.zeros(len(table), dtype=bool)
        if "trace" in keys:
            traced = np.fromiter(map(operator.is_not, table.column("trace"), repeat(MISSING)), dtype=bool,
                                 count=len(table))
        width = len(uid_names)
        combined = kind_codes[numeric] * width + uid_codes[numeric]
        if len(kind_names) * width <= 4 * len(table) + 1024:  # few enough codes to count them directly
            counts = np.bincount(combined, minlength=len(kind_names) * width)
            group_names = np.flatnonzero(counts)
            counts = counts[group_names]
            sums = np.bincount(combined, weights=amounts[numeric])[group_names]
            stacks = np.bincount(combined, weights=traced[numeric].astype(np.float64))[group_names] > 0
        else:
            group_names, group_codes = np.unique(combined, return_inverse=True)
            sums = np.bincount(group_codes, weights=amounts[numeric])
            counts = np.bincount(group_codes)
            stacks = np.bincount(group_codes, weights=traced[numeric].astype(np.float64)) > 0
        if values is not None:
            plain = ~traced[numeric]
            codes, amounts_of = combined[plain], amounts[numeric][plain]
            order = np.argsort(codes, kind="stable")
            codes, amounts_of = codes[order], amounts_of[order]
            starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]) if len(codes) else codes
            for start, end in zip(starts.tolist(), [*starts[1:].tolist(), len(codes)]):
                code = int(codes[start])
                kind, _, subtype = kind_names[code // width].partition("\0")
                values.setdefault((kind, subtype, uid_names[code % width]), []).extend(amounts_of[start:end].tolist())
        for code, total, count, has_stack in zip(group_names.tolist(), sums.tolist(), counts.tolist(),
                                                 stacks.tolist()):
            kind, _, subtype = kind_names[code // width].partition("\0")
            key = (kind, subtype, uid_names[code % width])
            entry = out.get(key)
            if entry is None:
                out[key] = [total, count, _unit_of(profile, kind, subtype), has_stack]
            else:
                entry[0] += total
                entry[1] += count
                entry[3] = entry[3] or has_stack
    return {key: tuple(value) for key, value in out.items()}  # type: ignore[misc]


def _median(values: dict[tuple[str, str, str], list[float]] | None, key: tuple[str, str, str],
            scale: float = 1.0) -> float | None:
    import numpy as np

    found = (values or {}).get(key)  # None: the side lacks the group
    return float(np.median(found)) * scale if found else None


def _scale(baseline_unit: str, target_unit: str, kind: str, names: tuple[str, str]) -> float:
    if baseline_unit == target_unit:
        return 1.0
    if baseline_unit in TIME_UNITS and target_unit in TIME_UNITS:
        return TIME_UNITS[target_unit] / TIME_UNITS[baseline_unit]
    raise IncomparableProfiles(names[0], names[1], f"'{kind}' is in {baseline_unit or 'no unit'} in the baseline "
                                                   f"and in {target_unit or 'no unit'} in the target")


# -- per-function costs ----------------------------------------------------------------------

def function_costs(profile: Profile) -> FunctionCosts | None:
    """Exclusive and inclusive cost and calls per function, or None for profiles without stacks or calls.

    From the ``function`` resources of sampling and callgrind profiles,
    the ``exclusive``/``inclusive`` resources of cProfile runs, the
    per-call resources of tracers (``exclusive`` and ``caller``), or else
    from the call stacks (``trace``) of the resources.
    """
    costs = _Costs(profile)
    for _, region in profile.regions():
        table = region.resources
        if not len(table):
            continue
        keys = table.columns()[0]
        if "uid" not in keys or "amount" not in keys:
            continue
        columns = _CostColumns(table, keys)
        if columns.function_rows or columns.cprofile:
            costs.add_function_rows(columns)
        elif columns.exclusive is not None and "caller" in keys:
            costs.add_call_rows(columns)
        elif "trace" in keys:
            costs.add_traces(columns, table)
    return costs.result()


class _CostColumns:
    """The columns of one region that per-function costs are read from (None where a key is absent)."""

    def __init__(self, table: Any, keys: list[str]) -> None:
        self.subtypes = table.column("subtype") if "subtype" in keys else [MISSING] * len(table)
        self.types = table.column("type") if "type" in keys else [MISSING] * len(table)
        self.amounts = table.column("amount")
        self.exclusive = table.column("exclusive") if "exclusive" in keys else None
        self.calls = table.column("calls") if "calls" in keys else None
        self.objects = table.column("object") if "object" in keys else None
        self.uids = table.column("uid")
        present = set(dict.fromkeys(self.subtypes))
        self.function_rows = "function" in present and self.exclusive is not None
        self.cprofile = {"exclusive", "inclusive"} <= present


class _Costs:
    """Per-function costs gathered region by region: rows by name (exclusive, inclusive, calls, object)."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.rows: dict[str, list] = {}
        self.source = ""
        self.kind = ""
        self.unit = ""
        self.stacks: list[tuple[Any, float]] = []

    def _note_kind(self, kind: Any, subtype: Any) -> None:
        self.kind = self.kind or cell_text(kind)
        self.unit = self.unit or _unit_of(self.profile, self.kind, cell_text(subtype))

    def add_function_rows(self, c: _CostColumns) -> None:
        """``function`` rows (sampling, callgrind) or ``exclusive``/``inclusive`` rows (cProfile)."""

        self.source = "function rows" if c.function_rows else "cprofile rows"
        for i, (subtype, uid, amount) in enumerate(zip(c.subtypes, c.uids, c.amounts)):
            if type(amount) not in (int, float):
                continue
            if c.function_rows and subtype == "function":
                assert c.exclusive is not None
                own = c.exclusive[i] if type(c.exclusive[i]) in (int, float) else 0
                entry = self.rows.setdefault(cell_text(uid), [0.0, 0.0, None, ""])
                entry[0] += own
                entry[1] += amount
            elif c.cprofile and subtype in ("exclusive", "inclusive"):
                entry = self.rows.setdefault(cell_text(uid), [0.0, 0.0, None, ""])
                entry[0 if subtype == "exclusive" else 1] += amount
            else:
                continue
            self._note_kind(c.types[i], subtype)
            if c.calls is not None and type(c.calls[i]) is int and (c.function_rows or subtype == "exclusive"):
                entry[2] = (entry[2] or 0) + c.calls[i]
            if c.objects is not None and c.objects[i] is not MISSING and not entry[3]:
                entry[3] = cell_text(c.objects[i])

    def add_call_rows(self, c: _CostColumns) -> None:
        """Per-call rows of tracers: ``exclusive`` and ``caller``, one call each."""
        assert c.exclusive is not None
        self.source = "call rows"
        for i, (uid, amount, own) in enumerate(zip(c.uids, c.amounts, c.exclusive)):
            if type(amount) not in (int, float) or type(own) not in (int, float):
                continue
            entry = self.rows.setdefault(cell_text(uid), [0.0, 0.0, 0, ""])
            entry[0] += own
            entry[1] += amount
            entry[2] += 1
            self._note_kind(c.types[i], c.subtypes[i])

    def add_traces(self, c: _CostColumns, table: Any) -> None:
        """The amount of every distinct trace (by identity), for :meth:`result` to spread over its functions."""
        import numpy as np

        values, numeric = numeric_cells(table.column("exclusive" if c.exclusive is not None else "amount"))
        codes: dict[int, int] = {}
        unique: list[Any] = []
        which = np.full(len(table), -1, dtype=np.int64)
        for i, trace in enumerate(table.column("trace")):
            if not numeric[i] or trace is MISSING or not trace or values[i] <= 0 or c.subtypes[i] == "free":
                continue
            number = codes.get(id(trace))
            if number is None:
                number = codes[id(trace)] = len(unique)
                unique.append(trace)
            which[i] = number
            if not self.kind:
                self.kind = cell_text(c.types[i])
                self.unit = _unit_of(self.profile, self.kind, cell_text(c.subtypes[i]))
        keep = which >= 0
        per_trace = np.bincount(which[keep], weights=values[keep], minlength=len(unique)).tolist()
        self.stacks += list(zip(unique, per_trace))

    def _from_stacks(self) -> None:
        self.source = "stacks"
        for trace, amount in self.stacks:
            names = [cell_text(entry.get("function", entry.get("func", entry.get("name", "?"))))
                     if isinstance(entry, dict) else str(entry) for entry in trace]
            leaf = self.rows.setdefault(names[0], [0.0, 0.0, None, ""])
            leaf[0] += amount
            for name in dict.fromkeys(names):
                self.rows.setdefault(name, [0.0, 0.0, None, ""])[1] += amount
            first = trace[0]
            if isinstance(first, dict) and not leaf[3] and first.get("object"):
                leaf[3] = str(first["object"])

    def result(self) -> FunctionCosts | None:
        if not self.rows and self.stacks:
            self._from_stacks()
        if not self.rows:
            return None
        costs = {name: (e[0], e[1], e[2], e[3]) for name, e in self.rows.items()}
        return FunctionCosts(self.kind, self.unit, costs, float(sum(e[0] for e in costs.values())), self.source)


def _compare_functions(base: FunctionCosts, target: FunctionCosts, names: tuple[str, str]
                       ) -> tuple[list[FunctionChange], float, float]:
    if base.type != target.type:
        raise IncomparableProfiles(names[0], names[1], f"their functions cost {base.type or 'no type'} "
                                                       f"({base.unit or 'no unit'}) and {target.type or 'no type'} "
                                                       f"({target.unit or 'no unit'})")
    scale = _scale(base.unit, target.unit, base.type or target.type, names)
    total_change = target.total * scale - base.total
    found = []
    for name in dict.fromkeys([*base.costs, *target.costs]):
        b = base.costs.get(name)
        t = target.costs.get(name)
        t_excl = t[0] * scale if t else 0.0
        t_incl = t[1] * scale if t else 0.0
        b_excl = b[0] if b else 0.0
        change = t_excl - b_excl
        contribution = change / total_change if total_change else (0.0 if change == 0 else float("inf"))
        found.append(FunctionChange(name, (t or b)[3] if (t or b) else "", b_excl, t_excl, b[1] if b else 0.0, t_incl,
                                    b[2] if b else None, t[2] if t else None, b is not None, t is not None,
                                    contribution))
    # by the size of the exclusive change, then of the inclusive change, then by name
    found.sort(key=lambda f: (-abs(f.exclusive_change), -abs(f.inclusive_change), f.function))
    return found, base.total, target.total * scale


# -- the comparison ---------------------------------------------------------------------------

def compare(baseline: Profile, target: Profile, *, baseline_name: str = "baseline", target_name: str = "target",
            functions: bool = True, noise_floor: float = NOISE_FLOOR, levels: Levels | None = None) -> Comparison:
    """Compare ``target`` with ``baseline``; see the module docstring.

    ``noise_floor`` is the share of the baseline below which a change is
    ``same`` (:data:`NOISE_FLOOR`).  ``levels``, when given, gives the values
    of a group of repeated measurements found in both profiles in place of
    their means (statistic ``robust``; see :data:`Levels`).

    Raises :class:`IncomparableProfiles` when a type is in units that
    cannot be converted into each other.
    """
    names = (baseline_name, target_name)
    base_values: dict[tuple[str, str, str], list[float]] | None = {} if levels is not None else None
    target_values: dict[tuple[str, str, str], list[float]] | None = {} if levels is not None else None
    base_groups = _groups(baseline, base_values)
    target_groups = _groups(target, target_values)
    base_units: dict[str, str] = {}
    target_units: dict[str, str] = {}
    for (kind, subtype, _), (_, _, unit, _) in base_groups.items():
        base_units.setdefault(f"{kind}({subtype})", unit)
    for (kind, subtype, _), (_, _, unit, _) in target_groups.items():
        target_units.setdefault(f"{kind}({subtype})", unit)
    scales = {key: _scale(base_units[key], unit, key, names) for key, unit in target_units.items() if key in base_units}
    converted = {key: (target_units[key], base_units[key]) for key, s in scales.items() if s != 1.0}

    def value(entry: tuple[float, int, str, bool] | None, stat: str, scale: float = 1.0) -> float | None:
        if entry is None:
            return None
        total, count = entry[0], entry[1]
        return (total if stat == "sum" else total / count) * scale

    totals: dict[tuple[str, str], float] = {}
    changes_raw = []
    for key in dict.fromkeys([*base_groups, *target_groups]):
        kind, subtype, uid = key
        b = base_groups.get(key)
        t = target_groups.get(key)
        stat = "sum" if (b and b[3]) or (t and t[3]) else "mean"
        scale = scales.get(f"{kind}({subtype})", 1.0)
        bv, tv = value(b, stat), value(t, stat, scale)
        # one measurement a side is its own level (a caller edge of callgrind); the check gives it the same
        if stat == "mean" and levels is not None and b and t and (b[1] > 1 or t[1] > 1) and base_values \
                and target_values:
            bv, tv, robust = levels([*base_values[key]], [v * scale for v in target_values[key]])
            stat = "robust"
        elif stat == "mean" and levels is not None and ((b and b[1] > 1) or (t and t[1] > 1)):
            # runs on one side only: their median, as the levels give the baseline (one profile, one figure)
            bv, tv = _median(base_values, key), _median(target_values, key, scale)
            stat = "median"
        unit = b[2] if b else t[2]  # type: ignore[index]
        changes_raw.append((kind, subtype, uid, unit, bv, tv, stat, b[1] if b else 0, t[1] if t else 0,
                            robust if stat == "robust" else None))
        group = (kind, subtype)
        totals[group] = totals.get(group, 0.0) + abs(bv if bv is not None else (tv or 0.0))
    changes = []
    for kind, subtype, uid, unit, bv, tv, stat, bn, tn, robust in changes_raw:
        whole = totals.get((kind, subtype)) or 1.0
        impact = abs((tv or 0.0) - (bv or 0.0)) / whole
        changes.append(Change(uid, subtype, kind, unit, bv, tv, stat, bn, tn, impact, noise_floor, robust))
    changes.sort(key=lambda c: (-c.impact, c.type, c.subtype, c.uid))
    result_functions = None
    function_unit = ""
    base_total = target_total = 0.0
    if functions:
        base_costs = function_costs(baseline)
        target_costs = function_costs(target)
        # a sampled side with no sample at all (a run too short for the sampler) costs nothing per function;
        # without this, a baseline of 0 samples against a target of 300 would show no change per function
        if base_costs is None and target_costs is not None and not baseline.resource_count():
            base_costs = FunctionCosts(target_costs.type, target_costs.unit, {}, 0.0, target_costs.source)
        elif target_costs is None and base_costs is not None and not target.resource_count():
            target_costs = FunctionCosts(base_costs.type, base_costs.unit, {}, 0.0, base_costs.source)
        if base_costs is not None and target_costs is not None:
            listed, base_total, target_total = _compare_functions(base_costs, target_costs, names)
            result_functions = tuple(listed)
            function_unit = base_costs.unit
    return Comparison(baseline_name, target_name, baseline.type or target.type, tuple(changes), result_functions,
                      function_unit, base_total, target_total, converted, baseline, target, noise_floor)
