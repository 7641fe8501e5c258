"""Recognizing the JSON layouts of profiles and bringing them to the documented form.

Perun reads profiles in every layout it or the original Perun ever wrote:

``documented``
    spec 001 §2.1 (the 0.15 documentation): ``header``, ``collector_info``,
    ``postprocessors``, ``snapshots`` (each ``{time, resources: [...],
    models}``) and an optional ``global`` region.  This is our in-memory
    model (:class:`~perun_core.profile.model.Profile`).
``original-0.28``
    what perun-toolsuite 0.28 writes: ``resources`` (resource key ->
    columns), ``resource_type_map`` (resource key -> persistent properties),
    top-level ``models``, ``machine``, ``header`` and ``postprocessors``.
    Converted by :func:`from_original_028`: every resource key gives as many
    rows as its shortest column (the original zips its columns the same way;
    a key without columns is one row of its properties), all rows and models
    go to the ``global`` region, ``machine`` and other top-level keys are kept
    as extras.
``flat``
    the oldest files the original shipped: ``type``, ``cmd``, ``param``,
    ``workload``, ``collector`` at the top level, no ``header``.
    :func:`update_flat` turns them into the documented form.
``columnar``
    our own compact layout (:mod:`perun_core.profile.codec`), tagged
    ``"perun-columnar": N``.

Variants handled on the way (all seen in the original's files): ``params``
given as ``""`` (read as ``{}``), ``collector`` instead of
``collector_info``, ``global`` given as a list of regions, ``header.params``
or ``header.args``, ``header.exitcode`` as a string, an int or a list, model
records with ``x_start``/``x_end`` or ``x_interval_start``/``x_interval_end``,
kernel-regression values named ``kernel_stats``, regressogram records without
``bin_edges`` and model kinds spelled with dashes.  Model records of the
original keep every key they had and gain the keys our evaluation reads
(``x_interval_*``, regressogram ``bin_edges``/``bin_values``, smoothed
``x``/``y``) where those can be derived.

Anything else is an :class:`~perun_core.errors.InvalidProfile` naming the
top-level keys found: a file whose layout is not recognized is never read as
an empty profile.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..errors import InvalidProfile
from .model import json_kind
from .resources import MISSING, ResourceTable

__all__ = ["COLUMNAR_TAG", "LAYOUTS", "detect_layout", "from_original_028", "normalize_document", "update_flat"]

COLUMNAR_TAG = "perun-columnar"
#: Names of the layouts :func:`detect_layout` tells apart.
LAYOUTS = ("documented", "original-0.28", "flat", "columnar")

_DOCUMENTED_KEYS = ("snapshots", "global")
_FLAT_KEYS = ("type", "cmd", "collector")


def detect_layout(doc: Any, path: Any = None) -> str:
    """Which of :data:`LAYOUTS` ``doc`` (a parsed JSON document) is; InvalidProfile when none."""
    if not isinstance(doc, dict):
        raise InvalidProfile(path, None, f"expected a JSON object, got {json_kind(doc)}")
    if COLUMNAR_TAG in doc:
        return "columnar"
    if isinstance(doc.get("resources"), dict) or "resource_type_map" in doc:
        return "original-0.28"
    if "header" not in doc and all(key in doc for key in ("type", "collector")):
        return "flat"
    if "header" in doc or any(key in doc for key in _DOCUMENTED_KEYS):
        return "documented"  # without a header: the model reports the missing key
    found = ", ".join(sorted(map(str, doc))) or "none"
    raise InvalidProfile(
        path, "header",
        f"is missing: unrecognized profile layout (top-level keys found: {found}); expected 'header' with "
        "'snapshots'/'global' (documented), 'resources' with 'resource_type_map' (original Perun 0.28), "
        f"or '{COLUMNAR_TAG}'",
    )


def normalize_document(doc: dict, layout: str) -> dict:
    """Documented-form variants of the original read as their documented equivalents (a shallow copy)."""
    doc = dict(doc)
    if layout == "flat":
        doc = update_flat(doc)
    if "collector_info" not in doc and isinstance(doc.get("collector"), dict):
        doc["collector_info"] = doc.pop("collector")
    info = doc.get("collector_info")
    if isinstance(info, dict) and isinstance(info.get("params"), str):
        # old files keep the collector's command line ('-s 0.001') or nothing ('') in params
        text = info["params"].strip()
        doc["collector_info"] = {**info, "params": {"command_line": text} if text else {}}
    header = doc.get("header")
    if isinstance(header, dict) and isinstance(header.get("units"), list):
        # an old variant lists units without naming their metrics ([null]): nothing to keep
        doc["header"] = {key: value for key, value in header.items() if key != "units"}
    units = doc.get("postprocessors")
    if isinstance(units, list):
        doc["postprocessors"] = [
            {**unit, "params": {}} if isinstance(unit, dict) and unit.get("params") == "" else unit for unit in units
        ]
    region = doc.get("global")
    if isinstance(region, list):  # an old file's "global" list of regions: they are snapshots
        doc.pop("global")
        doc["snapshots"] = [*(doc.get("snapshots") or []), *region]
    for where in _regions(doc):
        models = where.get("models")
        if isinstance(models, list) and models:
            where["models"] = [_model(m) if isinstance(m, dict) else m for m in models]
    return doc


def _regions(doc: dict) -> list[dict]:
    found = [r for r in doc.get("snapshots") or [] if isinstance(r, dict)] if isinstance(doc.get("snapshots"), list) else []
    if isinstance(doc.get("global"), dict):
        found.append(doc["global"])
    return found


def update_flat(doc: dict) -> dict:
    """The oldest layout (no ``header``; ``type``, ``cmd``, ``param``, ``workload`` on top) as documented."""
    header: dict[str, Any] = {"type": doc.pop("type")}
    for key, target in (("cmd", "cmd"), ("param", "args"), ("params", "args"), ("args", "args"),
                        ("workload", "workload"), ("units", "units")):
        if key in doc:
            header[target] = doc.pop(key)
    out: dict[str, Any] = {"header": header}
    out.update(doc)
    return out


# -- the 0.28 layout ------------------------------------------------------------------------------

def from_original_028(doc: dict, path: Any = None) -> dict:
    """A document of the original's 0.28 layout in the documented form (resources as a table).

    Returns a documented-form dict whose ``global.resources`` is a
    :class:`ResourceTable` (the caller hands it to the model as it is).
    """
    resources = doc.get("resources", {})
    type_map = doc.get("resource_type_map", {})
    if not isinstance(resources, dict):
        raise InvalidProfile(path, "resources", f"expected an object (resource key -> columns), got {json_kind(resources)}")
    if not isinstance(type_map, dict):
        raise InvalidProfile(path, "resource_type_map", f"expected an object, got {json_kind(type_map)}")
    models = doc.get("models", [])
    if not isinstance(models, list):
        raise InvalidProfile(path, "models", f"expected a list, got {json_kind(models)}")
    if "header" not in doc and all(key in doc for key in ("type", "collector")):
        doc = update_flat(dict(doc))  # the oldest files: header fields on top, resources already as 0.28 has them
        resources = {key: _seconds_read(value) for key, value in resources.items()}
    info = doc.get("collector_info")
    if isinstance(info, dict) and info.get("name") == "kperf":
        type_map = _kperf_traces(type_map)
    table = _table_028(resources, type_map, path)
    out: dict[str, Any] = {}
    if "origin" in doc:
        out["origin"] = doc["origin"]
    if "header" not in doc:
        found = ", ".join(sorted(map(str, doc)))
        raise InvalidProfile(path, "header", f"is missing (top-level keys found: {found})")
    out["header"] = doc["header"]
    out["collector_info"] = doc.get("collector_info", doc.get("collector", {}))
    out["postprocessors"] = doc.get("postprocessors", [])
    out["snapshots"] = []
    models = [_model(m) if isinstance(m, dict) else m for m in models]
    _complete_smoothed(models, table)
    out["global"] = {"time": _profile_time(type_map), "resources": table, "models": models}
    for key, value in doc.items():
        if key not in ("resources", "resource_type_map", "models", "origin", "header", "collector_info",
                       "collector", "postprocessors", "snapshots", "global"):
            out[key] = value
    return normalize_document(out, "documented")


_SECONDS = re.compile(r"\s*(-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)\s*s?\s*")


def _seconds_read(columns: Any) -> Any:
    """The oldest profiles write amounts as text (``"0.45"``; time ones with a unit, ``"0.616s"``): read as numbers."""
    amounts = columns.get("amount") if isinstance(columns, dict) else None
    if not isinstance(amounts, list) or not any(isinstance(v, str) for v in amounts):
        return columns
    read = []
    for value in amounts:
        match = _SECONDS.fullmatch(value) if isinstance(value, str) else None
        read.append(float(match.group(1)) if match else value)
    return {**columns, "amount": read}


def _kperf_traces(type_map: dict) -> dict:
    """The original's sampling profiles (its kperf collector, its ``import perf``) name each sampled stack
    by its uid, the frames root first joined by ``;``: each row gets that stack as its ``trace``
    (innermost frame first, as ours), so flame graphs and the difference views show it."""
    out = {}
    for key, props in type_map.items():
        uid = props.get("uid") if isinstance(props, dict) else None
        if isinstance(uid, str) and uid and "trace" not in props:
            # frames of imported folded stacks may end in '()', which our frame labels add themselves
            frames = [frame[:-2] if frame.endswith("()") else frame for frame in reversed(uid.split(";"))]
            props = {**props, "trace": [{"function": frame} for frame in frames]}
        out[key] = props
    return out


def _profile_time(type_map: dict) -> Any:
    for props in type_map.values():
        if isinstance(props, dict) and "time" in props:
            return props["time"]
    return "0.0"


def _table_028(resources: dict, type_map: dict, path: Any) -> ResourceTable:
    names: dict[str, int] = {}
    columns: list[list] = []
    length = 0
    for key, value in resources.items():
        if not isinstance(value, dict):
            raise InvalidProfile(path, f"resources.{key}", f"expected an object of columns, got {json_kind(value)}")
        props = type_map.get(key, {})
        if not isinstance(props, dict):
            raise InvalidProfile(path, f"resource_type_map.{key}", f"expected an object, got {json_kind(props)}")
        lists = {}
        for name, column in value.items():
            if not isinstance(column, list):
                raise InvalidProfile(path, f"resources.{key}.{name}", f"expected a list, got {json_kind(column)}")
            lists[name] = column
        count = min(map(len, lists.values())) if lists else 1
        if count == 0:
            continue
        present = set()
        for name, constant in props.items():
            if name in lists:
                continue  # a column wins over a property of the same name
            present.add(name)
            _add(names, columns, name, length, [constant] * count)
        for name, column in lists.items():
            present.add(name)
            _add(names, columns, name, length, column[:count] if len(column) != count else column)
        for name, index in names.items():
            if name not in present:
                columns[index].extend([MISSING] * count)
        length += count
    sparse = any(MISSING in column for column in columns)
    return ResourceTable.from_columns(length, list(names), columns, sparse=sparse)


def _add(names: dict[str, int], columns: list[list], name: str, length: int, values: list) -> None:
    index = names.get(name)
    if index is None:
        names[name] = len(columns)
        columns.append([MISSING] * length + list(values) if length else list(values))
    else:
        columns[index].extend(values)


# -- model records --------------------------------------------------------------------------------

def _model(record: dict) -> dict:
    """An original model record with our keys added beside its own (never removed)."""
    record = dict(record)
    kind = record.get("model")
    if isinstance(kind, str) and "-" in kind:
        record["model"] = kind.replace("-", "_")
        kind = record["model"]
    for ours, theirs in (("x_interval_start", "x_start"), ("x_interval_end", "x_end")):
        if ours not in record and theirs in record:
            record[ours] = record[theirs]
    if kind == "kernel_regression" and "bucket_stats" not in record and "kernel_stats" in record:
        record["bucket_stats"] = record["kernel_stats"]
    if isinstance(record.get("bucket_stats"), list):
        # the original's moving average writes NaN where its window is not full yet: no value there,
        # which our profiles (finite numbers only) say with null
        record["bucket_stats"] = [None if isinstance(v, float) and not math.isfinite(v) else v
                                  for v in record["bucket_stats"]]
    if kind == "regressogram" and "bin_values" not in record and isinstance(record.get("bucket_stats"), list):
        values = record["bucket_stats"]
        start, end = record.get("x_interval_start"), record.get("x_interval_end")
        if values and _finite(start) and _finite(end) and end > start and all(map(_finite, values)):
            width = (end - start) / len(values)
            record["bin_values"] = list(values)
            record["bin_edges"] = [start + width * i for i in range(len(values))] + [end]
    return record


def _complete_smoothed(models: list, table: ResourceTable) -> None:
    """Moving-average and kernel records of the original hold one value per data point
    (``bucket_stats``): our ``x``/``y`` curve is those values at the sorted ``per_key`` values.

    When the profile's points of the uid are not as many as the values (its
    resources changed after the postprocessor ran, as in some of the
    original's test files), the values are spread evenly over the record's
    ``x_start``..``x_end``, the range they were computed on."""
    wanted = [m for m in models if isinstance(m, dict) and m.get("model") in ("moving_average", "kernel_regression")
              and "x" not in m and isinstance(m.get("bucket_stats"), list)]
    if not wanted or not len(table):
        return
    uids = table.column("uid")
    for record in wanted:
        per_key = record.get("per_key", "structure-unit-size")
        xs = sorted(x for uid, x in zip(uids, table.column(per_key)) if uid == record.get("uid") and _finite(x))
        values = record["bucket_stats"]
        if len(xs) != len(values):
            start, end = record.get("x_start"), record.get("x_end")
            if not (_finite(start) and _finite(end) and len(values) > 1 and end > start):
                continue
            xs = [start + (end - start) * i / (len(values) - 1) for i in range(len(values))]
        pairs = [(x, y) for x, y in zip(xs, values) if _finite(y)]
        if pairs:
            record["x"] = [float(x) for x, _ in pairs]
            record["y"] = [float(y) for _, y in pairs]


def _finite(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)
