"""The normalizer (spec 001 §5.1.1): amounts scaled into <0, 1> per snapshot and type.

In every snapshot (and the ``global`` region) the numeric ``amount`` of each
resource is divided by the largest absolute amount among the resources of
the same ``type`` in that region, so the largest becomes 1 (-1 if it is
negative).  Resources without a type form one group; a group whose amounts
are all zero, and amounts that are not numbers, stay as they are.  The input
profile is not modified.
"""

from __future__ import annotations

from typing import Any

from ..profile.model import Profile, Snapshot
from ..profile.resources import MISSING, ResourceTable
from ..units import PhaseResult, UnitContext

__all__ = ["Normalizer", "normalize_region"]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _group(kind: Any) -> Any:
    """A hashable key for a resource's type (None when it has none)."""
    if kind is MISSING:
        return None
    return kind if isinstance(kind, (str, int, float)) else ("unhashable", repr(kind))


def normalize_region(region: Snapshot) -> Snapshot:
    """A copy of ``region`` with normalized amounts (resources are new dicts only where needed)."""
    table = region.resources
    if not table:
        return Snapshot(ResourceTable([]), list(region.models), dict(region.meta), region.has_models_key)
    keys, columns = table.columns()
    if "amount" not in keys:
        return Snapshot(table, list(region.models), dict(region.meta), region.has_models_key)
    amounts = columns[keys.index("amount")]
    types = columns[keys.index("type")] if "type" in keys else [MISSING] * len(amounts)
    largest: dict[Any, float] = {}
    for kind, amount in zip(types, amounts):
        if _is_number(amount):
            group = _group(kind)
            largest[group] = max(largest.get(group, 0.0), abs(amount))
    scaled = []
    for kind, amount in zip(types, amounts):
        top = largest.get(_group(kind), 0.0)
        scaled.append(amount / top if _is_number(amount) and top else amount)
    new_columns = list(columns)
    new_columns[keys.index("amount")] = scaled
    normalized = ResourceTable.from_columns(len(amounts), list(keys), new_columns, sparse=table.sparse)
    return Snapshot(normalized, list(region.models), dict(region.meta), region.has_models_key)


class Normalizer:
    name = "normalizer"
    kind = "postprocessor"
    summary = "Scale the amounts of each snapshot into <0, 1>, per resource type."
    description = (
        "Divides every amount by the largest amount of the same resource type in its snapshot, "
        "so profiles of different workloads or machines become comparable in shape."
    )
    params = ()

    def postprocess(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        profile: Profile = kwargs["profile"]
        kwargs["profile"] = Profile(
            header=dict(profile.header),
            collector_info=dict(profile.collector_info),
            postprocessors=list(profile.postprocessors),
            snapshots=[normalize_region(s) for s in profile.snapshots],
            global_region=normalize_region(profile.global_region) if profile.global_region is not None else None,
            origin=profile.origin,
            extra=dict(profile.extra),
        )
        return PhaseResult.ok(kwargs)
