"""The profile format of spec 001 §2.1 as Python objects.

A profile is ``origin`` (only while pending), ``header``, ``collector_info``,
``postprocessors``, ``snapshots`` (each with ``time``, ``resources`` and
``models``) and an optional ``global`` region shaped like a snapshot.  Keys we
do not know (``chunks``, extensions of newer tools) are kept verbatim so a
round trip through :meth:`Profile.from_dict` and :meth:`Profile.to_dict` is
lossless.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidProfile
from .original_keys import with_original_keys
from .resources import ResourceTable

#: Profile types the original tool knows; others are accepted but unusual.
KNOWN_TYPES = ("time", "memory", "mixed")

_SECTION_ORDER = ("origin", "header", "collector_info", "postprocessors", "snapshots", "global")


@dataclass(eq=False)
class Snapshot:
    """One snapshot (or the ``global`` region): metadata, resources and models."""

    resources: ResourceTable = field(default_factory=ResourceTable)
    models: list[dict] = field(default_factory=list)
    #: every other key of the region (``time``, ``timestamp``, ...), in order
    meta: dict[str, Any] = field(default_factory=dict)
    #: whether the region had a ``models`` key at all (kept for lossless output)
    has_models_key: bool = True

    @property
    def time(self) -> Any:
        return self.meta.get("time", self.meta.get("timestamp"))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Snapshot):
            return NotImplemented
        return (self.meta, self.models, self.resources) == (other.meta, other.models, other.resources)

    def to_dict(self) -> dict:
        region = dict(self.meta)
        region["resources"] = self.resources.rows()
        if self.has_models_key or self.models:
            region["models"] = with_original_keys(self.models)
        return region


@dataclass(eq=False)
class Profile:
    """A performance profile; see the module docstring for its regions."""

    header: dict[str, Any]
    collector_info: dict[str, Any] = field(default_factory=dict)
    postprocessors: list[dict[str, Any]] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)
    global_region: Snapshot | None = None
    origin: str | None = None
    #: top-level keys of newer or extended formats, kept as they were
    extra: dict[str, Any] = field(default_factory=dict)
    #: the layout the profile was read from (one of :data:`perun_core.profile.layouts.LAYOUTS`); not saved
    layout: str = field(default="documented", compare=False, repr=False)

    # -- summary properties used by status, indexes and pairing -------------
    @property
    def type(self) -> str:
        return str(self.header.get("type", ""))

    @property
    def cmd(self) -> str:
        return _as_text(self.header.get("cmd", ""))

    @property
    def args(self) -> str:
        # The documented form calls them "params"; later releases say "args".
        return _as_text(self.header.get("args", self.header.get("params", "")))

    @property
    def workload(self) -> str:
        return _as_text(self.header.get("workload", ""))

    @property
    def units(self) -> dict[str, str]:
        return dict(self.header.get("units") or {})

    @property
    def collector(self) -> str:
        return str(self.collector_info.get("name", ""))

    @property
    def postprocessor_names(self) -> list[str]:
        return [str(p.get("name", "")) for p in self.postprocessors]

    def regions(self) -> Iterator[tuple[int, Snapshot]]:
        """Snapshots numbered from 0, then the global region numbered after them."""
        yield from enumerate(self.snapshots)
        if self.global_region is not None:
            yield len(self.snapshots), self.global_region

    def resource_count(self) -> int:
        return sum(len(region.resources) for _, region in self.regions())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Profile):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    # -- conversion to and from the documented form -------------------------
    @classmethod
    def from_dict(cls, data: Any, *, path: Path | str | None = None) -> Profile:
        """Validate ``data`` (parsed documented JSON) and build a profile.

        Raises :class:`InvalidProfile` naming ``path`` and the offending key.
        """
        # lazy: perun_core.profile imports this module back at load (circular)
        from .layouts import detect_layout, from_original_028, normalize_document

        layout = detect_layout(data, path)
        if layout == "columnar":
            # lazy: perun_core.profile.codec imports this module back at load (circular)
            from .codec import decode_document

            return decode_document(data, path=path)
        if layout == "original-0.28":
            data = from_original_028(data, path)
        elif layout == "flat" or _needs_normalizing(data):
            data = normalize_document(data, layout)
        header = _require(data, "header", dict, path)
        if "type" not in header:
            raise InvalidProfile(path, "header.type", "is missing")
        if not isinstance(header["type"], str) or not header["type"]:
            raise InvalidProfile(path, "header.type", f"expected a non-empty string, got {json_kind(header['type'])}")
        if "units" in header and not isinstance(header["units"], dict):
            raise InvalidProfile(path, "header.units", f"expected an object, got {json_kind(header['units'])}")
        for key in ("cmd", "params", "args", "workload"):
            if key in header and not isinstance(header[key], (str, list)):
                raise InvalidProfile(path, f"header.{key}", f"expected a string, got {json_kind(header[key])}")
        origin = data.get("origin")
        if origin is not None and not isinstance(origin, str):
            raise InvalidProfile(path, "origin", f"expected a string, got {json_kind(origin)}")
        collector_info = data.get("collector_info", {})
        if not isinstance(collector_info, dict):
            raise InvalidProfile(path, "collector_info", f"expected an object, got {json_kind(collector_info)}")
        if "name" in collector_info and not isinstance(collector_info["name"], str):
            raise InvalidProfile(path, "collector_info.name", "expected a string")
        if "params" in collector_info and not isinstance(collector_info["params"], (dict, type(None))):
            raise InvalidProfile(path, "collector_info.params", "expected an object")
        postprocessors = data.get("postprocessors", [])
        if not isinstance(postprocessors, list):
            raise InvalidProfile(path, "postprocessors", f"expected a list, got {json_kind(postprocessors)}")
        for i, unit in enumerate(postprocessors):
            if not isinstance(unit, dict):
                raise InvalidProfile(path, f"postprocessors[{i}]", f"expected an object, got {json_kind(unit)}")
        raw_snapshots = data.get("snapshots", [])
        if not isinstance(raw_snapshots, list):
            raise InvalidProfile(path, "snapshots", f"expected a list, got {json_kind(raw_snapshots)}")
        snapshots = [_snapshot_from_dict(s, f"snapshots[{i}]", path) for i, s in enumerate(raw_snapshots)]
        global_region = None
        if data.get("global") is not None:
            global_region = _snapshot_from_dict(data["global"], "global", path)
        extra = {k: v for k, v in data.items() if k not in _SECTION_ORDER}
        return cls(
            header=header,
            collector_info=collector_info,
            postprocessors=postprocessors,
            snapshots=snapshots,
            global_region=global_region,
            origin=origin,
            extra=extra,
            layout=layout,
        )

    def to_dict(self, *, with_origin: bool = True) -> dict[str, Any]:
        """The profile in the documented JSON form."""
        out: dict[str, Any] = {}
        if with_origin and self.origin is not None:
            out["origin"] = self.origin
        out["header"] = self.header
        out["collector_info"] = self.collector_info
        out["postprocessors"] = self.postprocessors
        out["snapshots"] = [s.to_dict() for s in self.snapshots]
        if self.global_region is not None:
            out["global"] = self.global_region.to_dict()
        out.update(self.extra)
        return out


def _snapshot_from_dict(region: Any, where: str, path: Path | str | None) -> Snapshot:
    if not isinstance(region, dict):
        raise InvalidProfile(path, where, f"expected an object, got {json_kind(region)}")
    resources = region.get("resources", [])
    if isinstance(resources, ResourceTable):  # converted from a columnar layout already
        meta = {k: v for k, v in region.items() if k not in ("resources", "models")}
        return Snapshot(resources, list(region.get("models") or []), meta, has_models_key="models" in region)
    if not isinstance(resources, list):
        raise InvalidProfile(path, f"{where}.resources", f"expected a list, got {json_kind(resources)}")
    if resources and set(map(type, resources)) != {dict}:  # checked in C; the loop only finds the culprit
        for i, resource in enumerate(resources):
            if type(resource) is not dict:
                raise InvalidProfile(path, f"{where}.resources[{i}]", f"expected an object, got {json_kind(resource)}")
    models = region.get("models", [])
    if not isinstance(models, list):
        raise InvalidProfile(path, f"{where}.models", f"expected a list, got {json_kind(models)}")
    for i, model in enumerate(models):
        if not isinstance(model, dict):
            raise InvalidProfile(path, f"{where}.models[{i}]", f"expected an object, got {json_kind(model)}")
    meta = {k: v for k, v in region.items() if k not in ("resources", "models")}
    return Snapshot(ResourceTable(resources), models, meta, has_models_key="models" in region)


def _needs_normalizing(data: dict) -> bool:
    """Whether a documented-form document has one of the original's variants (cheap checks only)."""
    if "collector" in data and "collector_info" not in data:
        return True
    info = data.get("collector_info")
    if isinstance(info, dict) and info.get("params") == "":
        return True
    if isinstance(data.get("global"), list):
        return True
    units = data.get("postprocessors")
    if isinstance(units, list) and any(isinstance(u, dict) and u.get("params") == "" for u in units):
        return True
    for region in [*(data.get("snapshots") or [] if isinstance(data.get("snapshots"), list) else []),
                   data.get("global")]:
        if isinstance(region, dict) and isinstance(region.get("models"), list):
            for model in region["models"]:
                if isinstance(model, dict) and ("x_start" in model or "kernel_stats" in model
                                                or "-" in str(model.get("model", ""))
                                                or (model.get("model") == "regressogram" and "bin_edges" not in model)):
                    return True
    return False


def _require(data: dict, key: str, kind: type, path: Path | str | None) -> Any:
    if key not in data:
        raise InvalidProfile(path, key, "is missing")
    value = data[key]
    if not isinstance(value, kind):
        raise InvalidProfile(path, key, f"expected {'an object' if kind is dict else kind.__name__}, got {json_kind(value)}")
    return value


def is_finite_number(value: Any) -> bool:
    """Whether ``value`` is an int or a finite float (a bool, a string or NaN is not)."""
    kind = type(value)
    return kind is int or (kind is float and math.isfinite(value))


def json_kind(value: Any) -> str:
    """What kind of JSON value ``value`` is, as error messages name it ("an object", "a number", "null")."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__)


def _as_text(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return "" if value is None else str(value)
