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
    from ..profile.resources import MISSING

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
    if not edges:
        return []
    incoming: dict[str, float] = defaultdict(float)
    outgoing: dict[str, float] = defaultdict(float)
    callers_of: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for (caller, callee), weight in edges.items():
        incoming[callee] += weight
        outgoing[caller] += weight
        callers_of[callee].append((caller, weight))
    names = set(incoming) | set(outgoing) | set(exclusive_key) | set(exclusive_rows)
    if seen_exclusive_key:
        own_amount = {name: exclusive_key.get(name, 0.0) for name in names}
    elif exclusive_rows:
        own_amount = {name: exclusive_rows.get(name, 0.0) for name in names}
    else:
        own_amount = {name: max(incoming.get(name, 0.0) - outgoing.get(name, 0.0), 0.0) for name in names}

    memo: dict[str, list[tuple[tuple[str, ...], float]]] = {}

    def stacks(name: str, active: frozenset[str]) -> tuple[list[tuple[tuple[str, ...], float]], bool]:
        """(stack ending in ``name``, share of ``name``'s amount along it), and whether a cycle was cut.

        Results that no cycle cut do not depend on the way in and are remembered.
        """
        if name in memo:
            return memo[name], False
        entering = [(c, w) for c, w in callers_of.get(name, ()) if c != name]
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
                paths, caller_cut = stacks(caller, inner)
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
            memo[name] = found
        return found, cut

    lines = []
    for name in sorted(names):
        amount = own_amount.get(name, 0.0)
        if amount <= 0:
            continue
        for stack, share in stacks(name, frozenset())[0]:
            value = amount * share
            if value > 0:
                lines.append(f"{';'.join(stack)} {value:.12g}")
    return lines
