"""Call stacks from caller edges, for flame graphs of profiles that record callers, not stacks.

The pytrace collector (both modes) and callgrind record, per call or per
caller -> callee edge, who called whom and the inclusive amount along that
edge, but not whole stacks.  A flame graph needs stacks; they are rebuilt
here the way gprof-style tools do:

* the weight of an edge is the sum of ``of`` over its resources;
* a function's own (self) amount is, in this order of preference, the sum
  of the ``exclusive`` key of its rows without a caller (callgrind), the
  amounts of its rows of subtype ``exclusive`` (cProfile mode), or its
  inclusive amount (all incoming edges) less what its callees took
  (pytrace's function mode), never below zero;
* the stacks that reach a function are those of its callers, each taking
  the share of the function that its edge has of all the function's
  incoming edges.  A function nobody calls is a root.  An edge that would
  close a cycle (recursion) is left out, and its share goes to the
  function's other callers; a cycle nothing outside it calls is rooted at
  the function asked about.

The result is folded lines (``root;...;leaf amount``) like
:func:`perun_core.profile.convert.to_flame_graph_format` gives for traced
profiles.  Rebuilt stacks are an estimate when a function is called from
several places and itself calls several others: its callees are split in
the proportions of its callers.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from ..profile.resources import MISSING

if TYPE_CHECKING:  # pragma: no cover
    from ..profile.model import Profile

__all__ = ["caller_stacks"]

#: Stacks kept per function (the widest); deeper call graphs are cut there.
MAX_PATHS = 64
MAX_DEPTH = 48


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _label(value: object) -> str:
    return str(value).replace(";", ":").replace("\n", " ")


def caller_stacks(profile: Profile, of: str = "amount") -> list[str]:
    """Folded stacks rebuilt from the caller edges of ``profile`` ([] when it has none)."""
    edges, exclusive_key, exclusive_rows = _caller_edges(profile, of)
    if not edges:
        return []
    callers_of: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for (caller, callee), weight in edges.items():
        callers_of[callee].append((caller, weight))
    own_amount = _own_amounts(edges, exclusive_key, exclusive_rows)
    stacks = _Stacks(callers_of)
    lines = []
    for name in sorted(own_amount):
        amount = own_amount[name]
        if amount <= 0:
            continue
        for stack, share in stacks.ending_in(name, frozenset())[0]:
            value = amount * share
            if value > 0:
                lines.append(f"{';'.join(stack)} {value:.12g}")
    return lines


def _caller_edges(profile: Profile, of: str
                  ) -> tuple[dict[tuple[str, str], float], dict[str, float] | None, dict[str, float]]:
    """The weight of every caller -> callee edge, and the own amounts the rows without a caller record.

    Returns ``(edges, exclusive_key, exclusive_rows)``: ``exclusive_key``
    sums the ``exclusive`` key of such rows (None when no row has one),
    ``exclusive_rows`` the amounts of their rows of subtype ``exclusive``.
    """

    edges: dict[tuple[str, str], float] = defaultdict(float)
    exclusive_key: dict[str, float] = defaultdict(float)
    exclusive_rows: dict[str, float] = defaultdict(float)
    seen_exclusive_key = False
    for _, region in profile.regions():
        table = region.resources
        if not len(table) or "uid" not in table.keys():
            continue
        keys = table.keys()
        uids = table.column("uid")
        callers = table.column("caller") if "caller" in keys else [MISSING] * len(table)
        amounts = table.column(of) if of in keys else [MISSING] * len(table)
        subtypes = table.column("subtype") if "subtype" in keys else [MISSING] * len(table)
        own = table.column("exclusive") if "exclusive" in keys else [MISSING] * len(table)
        for uid, caller, amount, subtype, excl in zip(uids, callers, amounts, subtypes, own):
            if uid is MISSING:
                continue
            name = _label(uid)
            value = _number(amount)
            if caller is not MISSING and caller is not None:
                if value is not None and value > 0:
                    edges[(_label(caller), name)] += value
                continue
            if _number(excl) is not None:
                seen_exclusive_key = True
                exclusive_key[name] += max(_number(excl) or 0.0, 0.0)
            elif subtype == "exclusive" and value is not None:
                exclusive_rows[name] += max(value, 0.0)
    return edges, (exclusive_key if seen_exclusive_key else None), exclusive_rows


def _own_amounts(edges: dict[tuple[str, str], float], exclusive_key: dict[str, float] | None,
                 exclusive_rows: dict[str, float]) -> dict[str, float]:
    """Every function's own amount, by the order of preference of the module docstring."""
    incoming: dict[str, float] = defaultdict(float)
    outgoing: dict[str, float] = defaultdict(float)
    for (caller, callee), weight in edges.items():
        incoming[callee] += weight
        outgoing[caller] += weight
    names = set(incoming) | set(outgoing) | set(exclusive_key or ()) | set(exclusive_rows)
    if exclusive_key is not None:
        return {name: exclusive_key.get(name, 0.0) for name in names}
    if exclusive_rows:
        return {name: exclusive_rows.get(name, 0.0) for name in names}
    return {name: max(incoming.get(name, 0.0) - outgoing.get(name, 0.0), 0.0) for name in names}


class _Stacks:
    """The stacks that reach each function, with the share of its amount along each."""

    def __init__(self, callers_of: dict[str, list[tuple[str, float]]]) -> None:
        self.callers_of = callers_of
        self.memo: dict[str, list[tuple[tuple[str, ...], float]]] = {}

    def ending_in(self, name: str, active: frozenset[str]) -> tuple[list[tuple[tuple[str, ...], float]], bool]:
        """(stack ending in ``name``, share of ``name``'s amount along it), and whether a cycle was cut.

        ``active`` holds the functions of the stack above.  Results that no
        cycle cut do not depend on the way in and are remembered.
        """
        if name in self.memo:
            return self.memo[name], False
        entering = [(c, w) for c, w in self.callers_of.get(name, ()) if c != name]
        cut = any(c in active for c, _ in entering)
        if not entering or len(active) >= MAX_DEPTH:
            found = [((name,), 1.0)]
            cut = cut or len(active) >= MAX_DEPTH
        else:
            inner = active | {name}
            # a caller reached only through the stack above (a cycle) gives no way in: its share goes
            # to the other callers
            ways = []
            for caller, weight in entering:
                if caller in active:
                    continue
                paths, caller_cut = self.ending_in(caller, inner)
                cut = cut or caller_cut
                if paths:
                    ways.append((paths, weight))
            total = sum(w for _, w in ways)
            if total <= 0:
                found = [] if active else [((name,), 1.0)]
            else:
                found = [((*stack, name), share * weight / total) for paths, weight in ways for stack, share in paths]
                found.sort(key=lambda item: -item[1])
                found = found[:MAX_PATHS]
        if not cut:
            self.memo[name] = found
        return found, cut
