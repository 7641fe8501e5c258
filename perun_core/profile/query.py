"""Queries over profiles: resources, their flattened items, and models (spec §2.4).

Every function taking a ``profile`` accepts either a :class:`Profile` or a
plain dict in the documented JSON form.

Flattening
----------
Resources may nest dicts (``uid``) and lists (``trace``).  A resource is
flattened into ``(key, value)`` items by these rules, applied recursively:

* a scalar value is kept as it is under its key;
* a dict value ``d`` under key ``k`` yields first ``k`` with the *joined*
  value of ``d`` and then every item of ``d`` with keys prefixed by ``k:``
  (so ``uid`` gives ``uid``, ``uid:source``, ``uid:function``, ``uid:line``);
* a list value under key ``k`` yields only ``k`` with its joined value; the
  elements of a list are reached with ``::`` paths (``trace::function``) in
  :func:`all_key_values_of` and :func:`unique_resource_values_of`.

Joined values are strings: a dict joins the joined forms of its values with
``:`` in the dict's own key order (``{"source": "a.c", "function": "main",
"line": 22}`` becomes ``"a.c:main:22"``); a list joins the joined forms of its
elements with ``,`` (a trace becomes ``"malloc:unreachable:0,main:a.c:22"``
for entries ordered function, source, line).

Key paths
---------
A key passed to :func:`all_key_values_of`, :func:`unique_resource_values_of`,
:func:`unique_model_values_of` and :func:`resource_table` is a top-level key,
or a path: ``:`` steps into a nested dict, ``::`` steps into every element
of a list.  A key that exists verbatim at the top level always wins over its
reading as a path.  The value found at the end of a path is given in joined
form when it is a dict or a list.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from .model import Profile
from .resources import MISSING, ResourceTable

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = [
    "all_items_of",
    "all_key_values_of",
    "all_models_of",
    "all_numerical_resource_fields_of",
    "all_resource_fields_of",
    "all_resources_of",
    "as_profile",
    "flatten_value",
    "numeric_column",
    "resource_table",
    "unique_model_values_of",
    "unique_resource_values_of",
]

_MISSING_TYPE = type(MISSING)
_NUMERIC_TYPES = frozenset((int, float))
_NESTED_TYPES = (dict, list, tuple)


def as_profile(profile: Profile | dict) -> Profile:
    """``profile`` itself, or the :class:`Profile` built from a documented-JSON dict.

    Raises :class:`~perun_core.errors.InvalidProfile` for anything else.
    """
    if isinstance(profile, Profile):
        return profile
    return Profile.from_dict(profile)


# -- flattening ----------------------------------------------------------------

def flatten_value(value: Any) -> Any:
    """The joined form of ``value``: dicts join with ``:``, lists with ``,``; scalars as they are."""
    if isinstance(value, dict):
        return ":".join(map(str, map(flatten_value, value.values())))
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, map(flatten_value, value)))
    return value


def all_items_of(resource: dict) -> Iterator[tuple[str, Any]]:
    """Flattened ``(key, value)`` items of one resource (see the module docstring).

    Items come in the resource's key order; a nested dict yields its own joined
    value before the items inside it.  ``uid: {"source": "a.c", "function":
    "main", "line": 22}`` yields ``("uid", "a.c:main:22")``, ``("uid:source",
    "a.c")``, ``("uid:function", "main")`` and ``("uid:line", 22)``.
    """
    for key, value in resource.items():
        yield from _items_under(str(key), value)


def _items_under(key: str, value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        yield key, flatten_value(value)
        for sub_key, sub_value in value.items():
            yield from _items_under(f"{key}:{sub_key}", sub_value)
    elif isinstance(value, (list, tuple)):
        yield key, flatten_value(value)
    else:
        yield key, value


def _split_path(key: str) -> list[str]:
    # "trace::function" -> ["trace", "", "function"]: an empty step means
    # "every element of the list here".
    return key.split(":")


def _walk(node: Any, steps: list[str], index: int, out: list) -> None:
    while index < len(steps):
        step = steps[index]
        if step == "":
            if isinstance(node, (list, tuple)):
                rest = index + 1
                if rest == len(steps):
                    out.extend(map(flatten_value, node))
                else:
                    for item in node:
                        _walk(item, steps, rest, out)
            return
        if isinstance(node, dict) and step in node:
            node = node[step]
            index += 1
        else:
            return
    out.append(flatten_value(node))


def all_key_values_of(resource: dict, key: str) -> list:
    """Every value (not necessarily unique) of ``key`` in one resource or model.

    ``key`` may be a path with ``:`` (nested dict) and ``::`` (every list
    element) steps, e.g. ``all_key_values_of(res, "trace::function")`` gives
    the functions of the whole trace in order.  Dicts and lists found at the
    end of the path are given in joined form.  A missing key gives ``[]``.
    """
    if key in resource:
        return [flatten_value(resource[key])]
    out: list = []
    _walk(resource, _split_path(key), 0, out)
    return out


# -- iteration over profiles ----------------------------------------------------

def all_resources_of(profile: Profile | dict) -> Iterator[tuple[int, dict]]:
    """``(snapshot number, resource)`` for every resource, not flattened.

    Snapshots come in order, numbered from 0; resources of the ``global``
    region follow, numbered ``len(snapshots)``.  Resources are shared with
    the profile: copy one before changing it.
    """
    for number, region in as_profile(profile).regions():
        for resource in region.resources.rows():
            yield number, resource


def all_models_of(profile: Profile | dict) -> Iterator[tuple[int, dict]]:
    """``(position, model)`` for the models of every region, numbered in one sequence from 0."""
    position = 0
    for _, region in as_profile(profile).regions():
        for model in region.models:
            yield position, model
            position += 1


def _unique(values: Iterable, seen: dict) -> None:
    for value in values:
        if value not in seen:
            seen[value] = None


def unique_model_values_of(profile: Profile | dict, key: str) -> list:
    """Unique values of ``key`` (a key path) over all models, in first-seen order."""
    seen: dict = {}
    for _, model in all_models_of(profile):
        _unique(all_key_values_of(model, key), seen)
    return list(seen)


# -- column-wise flattening ------------------------------------------------------

def _kinds(values: list) -> set:
    kinds = set(map(type, values))
    kinds.discard(_MISSING_TYPE)
    return kinds


def _flatten_list(values: list) -> list:
    """Joined form of every value; shared nested objects are joined once."""
    cache: dict[int, Any] = {}
    out = []
    append = out.append
    for value in values:
        if isinstance(value, _NESTED_TYPES):
            ident = id(value)
            flat = cache.get(ident)
            if flat is None:
                flat = cache[ident] = flatten_value(value)
            append(flat)
        else:
            append(value)
    return out


def _distinct_dicts(values: list) -> list[dict]:
    # Columns decoded from the store share one dict object between equal
    # cells; keying by id() visits each such object once (and runs in C).
    by_id = dict(zip(map(id, values), values))
    return [v for v in by_id.values() if isinstance(v, dict)]


def _flat_columns(key: str, values: list, *, with_values: bool = True) -> Iterator[tuple[str, list | None, set]]:
    """Flattened columns under one top-level column.

    Yields ``(flat key, values, kinds)``: ``values`` holds the flattened values
    (``MISSING`` where absent; ``None`` when ``with_values`` is false) and
    ``kinds`` the set of types of the present flattened values.
    """
    kinds = _kinds(values)
    if not kinds.intersection(_NESTED_TYPES):
        yield key, values if with_values else None, kinds
        return
    flat_kinds = {str if k in _NESTED_TYPES else k for k in kinds}
    yield key, _flatten_list(values) if with_values else None, flat_kinds
    if dict not in kinds:
        return
    dicts = _distinct_dicts(values)
    sub_keys: dict = {}
    for d in dicts:
        for sub_key in d:
            sub_keys.setdefault(sub_key, None)
    if not with_values:
        # Keys and kinds only: the distinct dicts stand for all the rows.
        values = dicts
    for sub_key in sub_keys:
        sub_values = [v.get(sub_key, MISSING) if type(v) is dict else MISSING for v in values]
        yield from _flat_columns(f"{key}:{sub_key}", sub_values, with_values=with_values)


def _region_flat_columns(table: ResourceTable, *, with_values: bool = True) -> Iterator[tuple[str, list | None, set]]:
    keys, columns = table.columns()
    for key, values in zip(keys, columns):
        yield from _flat_columns(str(key), values, with_values=with_values)


def all_resource_fields_of(profile: Profile | dict) -> list[str]:
    """Unique flattened resource keys (see :func:`all_items_of`) in first-seen order.

    Regions are visited in order; within a region keys come in first-seen
    column order, each nested dict key directly followed by its sub-keys.
    """
    seen: dict[str, None] = {}
    for _, region in as_profile(profile).regions():
        for key, _values, _kinds_ in _region_flat_columns(region.resources, with_values=False):
            seen.setdefault(key, None)
    return list(seen)


def all_numerical_resource_fields_of(profile: Profile | dict) -> list[str]:
    """Flattened resource keys whose every present value is an ``int`` or ``float`` (``bool`` is not).

    Same order as :func:`all_resource_fields_of`; a key with a single
    non-numeric value anywhere in the profile is left out.
    """
    numeric: dict[str, bool] = {}
    for _, region in as_profile(profile).regions():
        for key, _values, kinds in _region_flat_columns(region.resources, with_values=False):
            ok = bool(kinds) and kinds <= _NUMERIC_TYPES
            numeric[key] = numeric.get(key, True) and ok
    return [key for key, ok in numeric.items() if ok]


def _path_column(table: ResourceTable, key: str) -> tuple[list, bool, bool]:
    """Values of ``key`` in one region: ``(values, multi, missing)``.

    For a top-level key or a path without ``::``: one flattened value per
    resource.  For a path with ``::`` (``multi``): one list of values per
    resource.  ``MISSING`` marks resources lacking the key; ``missing`` is
    false when there can be none.
    """
    keys = table.columns()[0]
    if key in keys:
        values = table.column(key)
        if _kinds(values).intersection(_NESTED_TYPES):
            values = _flatten_list(values)
        return values, False, table.sparse
    steps = _split_path(key)
    multi = "" in steps
    if steps[0] not in keys:
        return [MISSING] * len(table), multi, True
    top = table.column(steps[0])
    rest = steps[1:]
    cache: dict[int, Any] = {}
    out = []
    append = out.append
    for value in top:
        if value is MISSING:
            append(MISSING)
            continue
        ident = id(value)
        found = cache.get(ident)
        if found is None:
            hits: list = []
            _walk(value, rest, 0, hits)
            if multi:
                found = hits
            else:
                found = hits[0] if hits else MISSING
            if isinstance(value, _NESTED_TYPES):
                # only nested objects can be shared between rows
                cache[ident] = found
        append(found)
    return out, multi, True


def unique_resource_values_of(profile: Profile | dict, key: str) -> list:
    """Unique values of ``key`` (a key path) over all resources, in first-seen order.

    With a ``::`` path every element value counts, e.g. ``"trace::function"``
    gives every function seen in any trace.  Dicts and lists are given in
    joined form.
    """
    seen: dict = {}
    for _, region in as_profile(profile).regions():
        values, multi, _missing = _path_column(region.resources, key)
        if multi:
            for hits in values:
                if hits is not MISSING:
                    _unique(hits, seen)
        else:
            for value in dict.fromkeys(values):
                if value is not MISSING and value not in seen:
                    seen[value] = None
    return list(seen)


# -- tables for analysis ---------------------------------------------------------

def resource_table(profile: Profile | dict, keys: list[str]) -> dict[str, list]:
    """Columns of the given flattened keys over all resources of all regions.

    Regions are concatenated in :meth:`Profile.regions` order.  A resource
    lacking a key has ``None`` there.  A plain path gives one (joined) value
    per resource; a path with ``::`` gives one list of values per resource.
    The pseudo-key ``snapshots`` gives each resource's region number unless
    the resources themselves have a ``snapshots`` key.  Top-level keys are
    read straight from the stored columns, so this is fast on big profiles.
    """
    prof = as_profile(profile)
    out: dict[str, list] = {key: [] for key in keys}
    for number, region in prof.regions():
        table = region.resources
        present = table.columns()[0]
        for key in out:
            column = out[key]
            if key == "snapshots" and key not in present:
                column.extend([number] * len(table))
                continue
            values, _multi, missing = _path_column(table, key)
            if missing:
                values = [None if v is MISSING else v for v in values]
            column.extend(values)
    return out


def numeric_column(profile: Profile | dict, key: str) -> numpy.ndarray:
    """``key`` over all resources as a float64 array; NaN where absent or not a number.

    ``bool`` values and numeric-looking strings count as not a number.
    """
    import numpy as np

    values = resource_table(profile, [key])[key]
    kinds = set(map(type, values))
    if kinds <= _NUMERIC_TYPES:
        return np.array(values, dtype=np.float64)
    nan = float("nan")
    return np.array([v if type(v) in _NUMERIC_TYPES else nan for v in values], dtype=np.float64)
