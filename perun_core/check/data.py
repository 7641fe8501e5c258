"""What the checks read from a profile: measurements and models per location.

A *location* is what a finding is about: the ``uid`` of the resources (a
function, a command, a line), or, when one uid measures several things
(the time collector records ``real``, ``user``, ``sys`` and ``max_rss`` of
one command), the uid with the subtype in brackets: ``./app [real]``.

:class:`ProfileData` reads the columns once and keeps what methods derive
(points, models) so that several methods applied to one pair of profiles do
not repeat the work.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from ..errors import InvalidParameter
from ..profile.model import Profile, Snapshot
from ..profile.query import all_models_of, resource_table

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = ["ProfileData", "RunColumns", "Sample", "config_key", "describe_config"]

#: The input size and the amount (as in :mod:`perun_core.analysis.points`; not imported from
#: there, which would load the whole analysis package with every check).
DEFAULT_X = "structure-unit-size"
DEFAULT_Y = "amount"
#: Resource keys holding the exclusive time of a function, when a collector records it.
EXCLUSIVE_KEYS = ("exclusive", "exclusive_time")
#: The per-run keys of a time profile that the busy-machine rules read (see :mod:`.noise`).
RUN_KEYS = ("uid", "subtype", "order", DEFAULT_X, "amount", "involuntary_switches")

#: The runs of one command: ``real``, ``user``, ``sys`` ... and ``switches`` (involuntary context
#: switches), each mapping a run to its value.  A run is ``(input size, order)``: a job over generated
#: workloads numbers its runs from 1 again for every size.
RunColumns = dict[str, dict[tuple[Any, int], float]]


@dataclass(frozen=True, slots=True)
class Sample:
    """The measurements of one location: amounts and, when recorded, input sizes.

    ``x`` is None when no resource of the location has a numeric size.
    """

    location: str
    uid: str
    y: numpy.ndarray
    x: numpy.ndarray | None
    exclusive: numpy.ndarray | None = None
    #: the unit of ``y`` as the profile's header names it for the location's type and subtype ("" if none)
    unit: str = ""

    @property
    def count(self) -> int:
        return len(self.y)


def config_key(profile: Any) -> tuple[str, str, str, str, tuple[str, ...]]:
    """The configuration that pairs profiles (spec §8.3): cmd, args, workload, collector, postprocessors.

    Works on a :class:`~perun_core.profile.model.Profile` and on anything
    with the same attributes (index entries, :class:`ProfileInfo`).
    """
    post = getattr(profile, "postprocessors", ())
    names = getattr(profile, "postprocessor_names", None)
    if names is not None:
        post = names
    return (str(profile.cmd or ""), str(profile.args or ""), str(profile.workload or ""),
            str(profile.collector or ""), tuple(str(p) for p in post))


def describe_config(profile: Any) -> str:
    """``collected by time+regression_analysis for cmd: '$ ./app 100'`` (the tree's header line)."""
    cmd, args, workload, collector, post = config_key(profile)
    units = "+".join([collector or "?", *post])
    command = " ".join(part for part in (cmd, args, workload) if part)
    return f"collected by {units} for cmd: '$ {command}'"


def _row_columns(profile: Profile, keys: list[str]) -> dict[str, list] | None:
    """Columns of top-level ``keys`` read straight from resource rows (a profile parsed from JSON).

    None when a region is held as columns, a key is a path, or a uid is
    nested (a dict or list): :func:`resource_table` handles those.
    """
    regions = [region.resources for _number, region in profile.regions()]
    if any(table.raw_columns() is not None for table in regions) or any(":" in key for key in keys):
        return None
    rows = [row for table in regions for row in table.rows()]
    out = {}
    for key in keys:
        try:
            # a C-level pass when every row has the key (the usual case) ...
            out[key] = list(map(itemgetter(key), rows))
        except KeyError:
            # ... else a slower one
            out[key] = [row.get(key) for row in rows]
    if set(map(type, out.get("uid", []))) & {dict, list, tuple}:
        return None
    return out


def _numbers(values: list) -> numpy.ndarray:
    import numpy as np

    kinds = set(map(type, values))
    if kinds <= {int, float}:
        return np.array(values, dtype=np.float64)
    nan = float("nan")
    return np.array([v if type(v) in (int, float) else nan for v in values], dtype=np.float64)


class ProfileData:
    """Measurements and models of one profile, grouped by location (computed lazily, once).

    ``x_key`` and ``y_key`` name the input size and the amount; ``label``
    says where the profile came from (for messages).
    """

    def __init__(self, profile: Profile, *, label: str = "", x_key: str = DEFAULT_X, y_key: str = DEFAULT_Y) -> None:
        self.profile = profile
        self.label = label
        self.x_key = x_key
        self.y_key = y_key
        self._samples: dict[str, Sample] | None = None
        self._uid_locations: dict[str, list[str]] = {}
        self._models: dict[str, list[dict]] | None = None
        self._computed_models: dict[str, list[dict]] | None = None
        self._runs: dict[str, RunColumns] | None = None

    @property
    def type(self) -> str:
        return self.profile.type

    @property
    def units(self) -> dict[str, str]:
        return self.profile.units

    def unit(self) -> str:
        """The unit of amounts when the header names exactly one (else '')."""
        units = {str(u) for u in self.units.values()}
        return units.pop() if len(units) == 1 else ""

    @classmethod
    def prepared(cls, profile: Profile, samples: dict[str, Sample], *, label: str = "",
                 runs: dict[str, RunColumns] | None = None) -> ProfileData:
        """Data whose measurements were read elsewhere (``profile`` may then lack its resources).

        ``runs`` are the per-run columns (:meth:`run_columns`); without them
        they are read from ``profile`` when asked for.
        """
        data = cls(profile, label=label)
        data._samples = dict(samples)
        data._runs = runs
        for location, sample in samples.items():
            data._uid_locations.setdefault(sample.uid, []).append(location)
        return data

    def light(self) -> ProfileData:
        """The same data without the profile's resources: everything a check reads, cheap to keep or send.

        Every holder of checked data that drops the resources (the cache of
        ``check head``/``check all``, the TUI's checks, the second process of
        ``check profiles``) goes through here, so none of them hands a check
        less than the full profile would: the samples, the stored models and
        the per-run columns that the busy-machine rules weigh.
        """
        return ProfileData.prepared(self.light_profile(), self.samples(), label=self.label, runs=self.all_runs())

    def subset(self, locations: set[str]) -> ProfileData:
        """The same profile restricted to some locations (for splitting work)."""
        data = ProfileData.prepared(self.profile, {k: v for k, v in self.samples().items() if k in locations},
                                    label=self.label, runs=self.all_runs())
        # models of a whole uid go with its locations when they all go (else neither part compares them)
        uids = {sample.uid for key, sample in self.samples().items() if key in locations}
        uids = {uid for uid in uids if set(self.locations_of_uid(uid)) <= locations}
        data._models = {k: v for k, v in self.stored_models().items() if k in locations or k in uids}
        return data

    def light_profile(self) -> Profile:
        """The profile without its resources (header, units, models): cheap to send elsewhere."""

        def bare(region: Snapshot) -> Snapshot:
            return Snapshot(models=list(region.models), meta=dict(region.meta), has_models_key=region.has_models_key)

        source = self.profile
        return Profile(header=dict(source.header), collector_info=dict(source.collector_info),
                       postprocessors=list(source.postprocessors), snapshots=[bare(s) for s in source.snapshots],
                       global_region=bare(source.global_region) if source.global_region is not None else None,
                       origin=source.origin)

    # -- measurements -------------------------------------------------------------
    def samples(self) -> dict[str, Sample]:
        """Every location with its measurements, in first-seen order."""
        if self._samples is None:
            self._samples = self._read_samples()
        return self._samples

    def locations_of_uid(self, uid: str) -> list[str]:
        self.samples()
        return self._uid_locations.get(uid, [])

    def _read_samples(self) -> dict[str, Sample]:
        import numpy as np

        wanted = ["uid", "type", "subtype", self.x_key, self.y_key]
        present: set[str] = set()
        for _number, region in self.profile.regions():
            table = region.resources
            if table.raw_columns() is None:
                # rows (parsed JSON): asking for keys() would turn the whole table into columns
                rows = table.rows()
                present.update(k for k in (*wanted, *EXCLUSIVE_KEYS) if any(k in row for row in rows))
            else:
                present.update(table.keys())
        exclusive_key = next((k for k in EXCLUSIVE_KEYS if k in present), None)
        if exclusive_key:
            wanted.append(exclusive_key)
        # flattened paths (uid:function) are not top-level keys but still readable
        keys = [k for k in wanted if k in present or ":" in k]
        table = _row_columns(self.profile, keys) or resource_table(self.profile, keys)
        count = sum(len(region.resources) for _number, region in self.profile.regions())
        if "uid" not in table or not count:
            return {}
        uids = table["uid"]
        nothing = [None] * count
        y = _numbers(table.get(self.y_key, nothing))
        x = _numbers(table[self.x_key]) if self.x_key in table else np.full(count, np.nan)
        exclusive = _numbers(table[exclusive_key]) if exclusive_key else None
        kinds, subtypes = table.get("type", nothing), table.get("subtype", nothing)
        # the usual case: one (type, subtype) for all resources, locations are the uids
        single = len(set(kinds)) == 1 and len(set(subtypes)) == 1
        if single:
            labels = uids
            seen = dict.fromkeys(uids)
            names = {uid: str(uid) for uid in seen if uid is not None}
        else:
            combos = dict.fromkeys(zip(uids, kinds, subtypes))
            per_uid: dict[Any, int] = {}
            for uid, _kind, _sub in combos:
                per_uid[uid] = per_uid.get(uid, 0) + 1
            names = {}
            for combo in combos:
                uid, kind, sub = combo
                if uid is None:
                    continue
                what = sub if sub not in (None, "") else kind
                names[combo] = str(uid) if per_uid[uid] == 1 or what in (None, "") else f"{uid} [{what}]"
            labels = list(zip(uids, kinds, subtypes))
            seen = combos
        order = [label for label in seen if label in names]
        unit_of = self._unit_finder(single, kinds[0] if single else None, subtypes[0] if single else None)
        code_of = dict.fromkeys(seen, -1)
        code_of.update((label, i) for i, label in enumerate(order))
        codes = np.fromiter(map(code_of.__getitem__, labels), dtype=np.int64, count=len(labels))
        valid = (codes >= 0) & np.isfinite(y)
        codes, y_valid, x_valid = codes[valid], y[valid], x[valid]
        ex_valid = exclusive[valid] if exclusive is not None else None
        sort = np.argsort(codes, kind="stable")
        cuts = np.cumsum(np.bincount(codes, minlength=len(order)))[:-1]
        ys = np.split(y_valid[sort], cuts)
        xs = np.split(x_valid[sort], cuts)
        exs = np.split(ex_valid[sort], cuts) if ex_valid is not None else [None] * len(order)
        samples: dict[str, Sample] = {}
        for label, y_part, x_part, ex_part in zip(order, ys, xs, exs):
            if not len(y_part):
                continue
            location = names[label]
            uid = str(label if single else label[0])
            sizes = x_part if np.isfinite(x_part).all() else None
            if ex_part is not None and not np.isfinite(ex_part).any():
                ex_part = None
            if location in samples:  # two combos that render alike: keep them together
                old = samples[location]
                y_part = np.concatenate((old.y, y_part))
                sizes = np.concatenate((old.x, sizes)) if old.x is not None and sizes is not None else None
                ex_part = None
            samples[location] = Sample(location, uid, y_part, sizes, ex_part, unit_of(label))
            self._uid_locations.setdefault(uid, [])
            if location not in self._uid_locations[uid]:
                self._uid_locations[uid].append(location)
        return samples

    def _unit_finder(self, single: bool, kind: Any, subtype: Any) -> Any:
        """A function of a location's label giving its unit: by ``type(subtype)``, else by type, else of ``y_key``.

        With ``single`` the profile has one type and subtype (``kind`` and
        ``subtype``) and the labels are uids; else labels are ``(uid, type, subtype)``.
        """
        units = self.profile.units
        own = str(units.get(self.y_key, "")) if self.y_key != DEFAULT_Y else ""

        def unit(kind: Any, subtype: Any) -> str:
            if own or self.y_key != DEFAULT_Y:
                return own
            found = units.get(f"{kind}({subtype})", units.get(str(kind)))
            if found is None and len(units) == 1:
                found = next(iter(units.values()))  # a header naming one unit under another name
            return "" if found is None else str(found)

        if single:
            fixed = unit(kind, subtype)
            return lambda _label: fixed
        return lambda label: unit(label[1], label[2])

    # -- runs ---------------------------------------------------------------------
    def run_columns(self, uid: str) -> RunColumns:
        """The runs of command ``uid`` of a time profile (see :data:`RunColumns`); {} for other profiles."""
        return self.all_runs().get(uid, {})

    def all_runs(self) -> dict[str, RunColumns]:
        """:meth:`run_columns` of every uid, read once."""
        if self._runs is None:
            self._runs = self._read_runs() if self.type == "time" else {}
        return self._runs

    def _read_runs(self) -> dict[str, RunColumns]:
        table = resource_table(self.profile, list(RUN_KEYS))
        count = len(table.get("uid", ()))
        nothing = [None] * count
        out: dict[str, RunColumns] = {}
        for uid, sub, order, size, amount, switches in zip(*(table.get(key, nothing) for key in RUN_KEYS)):
            if uid is None or type(order) is not int or type(amount) not in (int, float):
                continue
            run = (size, order)
            columns = out.setdefault(str(uid), {})
            columns.setdefault(str(sub), {})[run] = float(amount)
            if sub == "real" and type(switches) in (int, float):
                columns.setdefault("switches", {})[run] = float(switches)
        return out

    # -- models -------------------------------------------------------------------
    def stored_models(self) -> dict[str, list[dict]]:
        """Regression models stored in the profile, by location (parametric ones only)."""
        if self._models is None:
            found: dict[str, list[dict]] = {}
            stored = [model for _region, model in all_models_of(self.profile)]
            if not stored:
                # most profiles have no models: the analysis package is a costly import for nothing
                self._models = found
                return found
            # lazy: keeps `perun-core check profiles` light
            from ..analysis.regression import MODELS, canonical_model_name

            for model in stored:
                try:
                    kind = canonical_model_name(str(model.get("model", model.get("type", ""))))
                except InvalidParameter:
                    continue  # a nonparametric record (moving average, regressogram, kernel regression)
                if kind not in MODELS or not isinstance(model.get("r_square"), (int, float)):
                    continue
                uid = model.get("uid")
                if uid is None:
                    continue
                what = model.get("subtype") or model.get("resource_type")
                if what not in (None, "") and f"{uid} [{what}]" in self.samples():
                    # fitted to one kind of the uid's resources (see postprocess.common)
                    found.setdefault(f"{uid} [{what}]", []).append(model)
                    continue
                locations = self.locations_of_uid(str(uid)) or [str(uid)]
                # a model describes the whole uid: give it to its only location, or to the uid itself when
                # its resources are split (the original Perun fits real, user and sys seconds together)
                whole = locations[0] if len(locations) == 1 else str(uid)
                if len(locations) == 1 or whole not in self.samples():
                    found.setdefault(whole, []).append(model)
            self._models = found
        return self._models

    def whole_uid_sample(self, uid: str) -> Sample | None:
        """All measurements of a uid split into several locations (``./app [real]``, ...), as one sample
        located at the uid: what models fitted to the whole uid describe.  None for other uids."""
        import numpy as np

        parts = [self.samples()[loc] for loc in self.locations_of_uid(uid)]
        if len(parts) < 2 or uid in self.samples():
            return None
        sizes = [part.x for part in parts]
        units = {part.unit for part in parts}
        return Sample(uid, uid, np.concatenate([part.y for part in parts]),
                      None if any(x is None for x in sizes) else np.concatenate(sizes),
                      unit=units.pop() if len(units) == 1 else "")

    def models(self) -> dict[str, list[dict]]:
        """Models by location: the stored ones, else fitted now (all parametric kinds, ``full``).

        Locations without input sizes get no model.
        """
        stored = self.stored_models()
        if self._computed_models is None:
            self._computed_models = {}
        missing = {loc: (s.x, s.y) for loc, s in self.samples().items()
                   if loc not in stored and loc not in self._computed_models and s.x is not None and len(s.y) >= 2}
        if missing:
            # lazy: keeps `perun-core check profiles` light
            from ..analysis.regression import regression_analysis

            fitted, _skipped = regression_analysis(missing, method="full")
            for model in fitted:
                self._computed_models.setdefault(str(model["uid"]), []).append(model)
        out = dict(self._computed_models)
        out.update(stored)
        return out

    def best_models(self) -> dict[str, dict]:
        """The best model (highest r_square, ties to the simplest) of every location that has one."""
        # lazy: keeps `perun-core check profiles` light
        from ..analysis.regression import best_model

        out = {}
        for location, models in self.models().items():
            chosen = best_model(models)
            if chosen is not None:
                out[location] = chosen
        return out
