"""The keys the original Perun (0.28) reads in a model record, added beside ours when a profile is
written as documented JSON (the form it reads).

Its ``show scatter`` and its checks read a model's interval as ``x_start``/``x_end`` (ours is
``x_interval_start``/``x_interval_end``) and draw a regressogram from ``bucket_stats`` (one value per
bin of equal width), ``y_start`` and ``statistic_function``; without them it stops with a
``KeyError``.  Records that have those keys already, and records of other kinds, are left as they
are; nothing is ever removed, so our readers see what they wrote (:mod:`.layouts` derives our keys
from the original's the other way).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["with_original_keys"]


def _number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def _equal_bins(edges: list) -> bool:
    if len(edges) < 2 or not all(map(_number, edges)):
        return False
    width = (edges[-1] - edges[0]) / (len(edges) - 1)
    return width > 0 and all(abs((b - a) - width) <= 1e-9 * max(1.0, abs(width)) for a, b in zip(edges, edges[1:]))


def with_original_keys(models: list) -> list:
    """``models`` with the original's keys added to the records that lack them (the same list when none does)."""
    out = []
    changed = False
    for record in models:
        if not isinstance(record, dict):
            out.append(record)
            continue
        extra: dict[str, Any] = {}
        for ours, theirs in (("x_interval_start", "x_start"), ("x_interval_end", "x_end")):
            if theirs not in record and _number(record.get(ours)):
                extra[theirs] = record[ours]
        values, edges = record.get("bin_values"), record.get("bin_edges")
        if (record.get("model") == "regressogram" and "bucket_stats" not in record and isinstance(values, list)
                and values and all(map(_number, values)) and isinstance(edges, list)
                and len(edges) == len(values) + 1 and _equal_bins(edges)):
            extra["bucket_stats"] = values
            extra["y_start"] = values[0]
            extra.setdefault("statistic_function", record.get("statistic", "mean"))
            extra.setdefault("x_start", edges[0])
            extra.setdefault("x_end", edges[-1])
        if extra:
            changed = True
            record = {**record, **{k: v for k, v in extra.items() if k not in record}}
        out.append(record)
    return out if changed else models
