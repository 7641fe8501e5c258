"""What the model-building postprocessors share: reading points, storing models.

Where models go
---------------
Every analysis fits the points of *all* regions together (a uid's
resources in different snapshots measure the same function, and this is
how views and checks read points too).  The new model records are appended
to the ``models`` of one region:

* the ``global`` region when the profile has one (the collectors of this
  tool and the complexity profiles of the original put their resources
  there);
* otherwise the first snapshot that holds resources (the only one, in the
  usual single-snapshot profile);
* otherwise the first snapshot (a new one when there is none; a profile
  without resources is refused anyway).

Models already stored stay; the ``postprocessors`` list says which runs
added which.  Every record also names the keys it was fitted on:
``per_key`` (the independent variable, ``-dp``) and ``of_key`` (``-o``).

A uid whose resources measure several things (a time profile has
``real``, ``user`` and ``sys`` seconds and ``max_rss`` bytes of one
command) is modelled once per ``(type, subtype)``; those records also carry
``resource_type`` and ``subtype``.  Checks and views match them to the same
resources.

Skipped models
--------------
A model the data cannot support (too few points, all x equal, ``ln`` of a
value <= 0, an overflow) is not stored.  The reasons are kept in the unit's
entry of the profile's ``postprocessors`` list, next to ``name`` and
``params``::

    {"name": "regression_analysis", "params": {...},
     "skipped": [{"uid": "f", "model": "power", "reason": "ln y is undefined: ..."}]}

(the key is absent when nothing was skipped).  When *no* model at all could
be stored, the postprocessor fails with those reasons instead of writing a
profile that gained nothing.

Refused input
-------------
One-line errors name what is wrong: a profile without resources, a
``per``/``of`` key that no resource has or that holds no numbers (listing
the profile's numeric keys), and ``NaN`` or infinite values of those keys.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..analysis.points import count_numbers, read_points
from ..errors import InvalidParameter, PostprocessError
from ..profile.model import Profile, Snapshot
from ..profile.query import all_numerical_resource_fields_of, all_resource_fields_of
from ..units import Param, PhaseResult

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis.points import PointsRead, Skipped

__all__ = [
    "KEY_PARAMS",
    "ORIGINAL_KEY_PARAMS",
    "check_numeric_key",
    "copy_profile",
    "depending_on_param",
    "fit_and_store",
    "model_region",
    "nothing_fitted",
    "of_param",
    "point_sets",
    "require_resources",
    "settings",
    "skipped_entries",
    "store_models",
    "tag_models",
]

#: How many distinct reasons an error message lists before "and N more".
_REASONS_SHOWN = 3


def depending_on_param(default: str = "structure-unit-size", original: tuple[str, ...] = ()) -> Param:
    """``-dp/--depending-on``; ``original`` adds the original Perun's spellings of the unit's option."""
    return Param("depending_on", "str", default, "Resource key of the independent variable (x); "
                 "a flattened key such as 'uid:line' works too.", flags=("-dp", "--depending-on", *original),
                 metavar="KEY", aliases=("per_key", "per"))


def of_param(default: str = "amount", help: str = "Resource key of the modelled, dependent variable (y).",
             original: tuple[str, ...] = ()) -> Param:
    """``-o/--of``; ``original`` adds the original Perun's spellings of the unit's option."""
    return Param("of", "str", default, help, flags=("-o", "--of", *original), metavar="KEY", aliases=("of_key",))


#: ``-dp/--depending-on`` and ``-o/--of`` with their defaults.
KEY_PARAMS = (depending_on_param(), of_param())
#: The same with the original Perun's ``-per/--per-key`` and ``-of/--of-key`` (its regressogram,
#: moving-average and kernel-regression take those; its regression-analysis takes ours).
ORIGINAL_KEY_PARAMS = (depending_on_param(original=("-per", "--per-key")), of_param(original=("-of", "--of-key")))


def copy_profile(profile: Profile, snapshots: list[Snapshot], global_region: Snapshot | None) -> Profile:
    """A new profile with ``profile``'s header, infos and origin and the given regions."""
    return Profile(
        header=dict(profile.header),
        collector_info=dict(profile.collector_info),
        postprocessors=list(profile.postprocessors),
        snapshots=snapshots,
        global_region=global_region,
        origin=profile.origin,
        extra=dict(profile.extra),
    )


def require_resources(profile: Profile, unit: str) -> None:
    """PostprocessError when no region of ``profile`` holds a resource."""
    if profile.resource_count() == 0:
        raise PostprocessError(unit, "the profile has no resources to work on")


def model_region(profile: Profile) -> int | None:
    """Where new models go (see the module docstring): a snapshot number, or None for ``global``."""
    if profile.global_region is not None:
        return None
    for number, snapshot in enumerate(profile.snapshots):
        if len(snapshot.resources):
            return number
    return 0


def store_models(profile: Profile, models: list[dict]) -> Profile:
    """A copy of ``profile`` with ``models`` appended in :func:`model_region` (resources are shared)."""

    def extended(region: Snapshot) -> Snapshot:
        return Snapshot(region.resources, [*region.models, *models], dict(region.meta), True)

    target = model_region(profile)
    snapshots = list(profile.snapshots)
    global_region = profile.global_region
    if target is None:
        assert global_region is not None
        global_region = extended(global_region)
    elif snapshots:
        snapshots[target] = extended(snapshots[target])
    else:
        snapshots = [Snapshot(models=list(models), meta={"time": "0"})]
    return copy_profile(profile, snapshots, global_region)


def tag_models(models: Iterable[dict], depending_on: str, of: str) -> list[dict]:
    """The records with ``per_key`` and ``of_key`` added (in place)."""
    out = []
    for record in models:
        record["per_key"] = depending_on
        record["of_key"] = of
        out.append(record)
    return out


def skipped_entries(skipped: Sequence[Skipped]) -> list[dict]:
    """``skipped`` as JSON-ready ``{uid, model, reason}`` dicts."""
    return [{"uid": item.uid, "model": item.model, "reason": item.reason} for item in skipped]


def nothing_fitted(unit: str, skipped: Sequence[Skipped]) -> PostprocessError:
    """The error of an analysis that could store no model at all, naming the reasons."""
    if not skipped:
        return PostprocessError(unit, "no model could be fitted: no uid has points")
    counts = Counter((item.model, item.reason) for item in skipped)
    uids = {item.uid for item in skipped}
    parts = []
    for (model, reason), count in counts.most_common(_REASONS_SHOWN):
        parts.append(f"{model}: {reason}" + (f" ({count} uids)" if len(uids) > 1 else ""))
    more = len(counts) - len(parts)
    text = "; ".join(parts) + (f"; and {more} more reason{'s' if more != 1 else ''}" if more > 0 else "")
    whom = f"uid '{next(iter(uids))}'" if len(uids) == 1 else f"any of the {len(uids)} uids"
    return PostprocessError(unit, f"no model could be fitted for {whom}: {text}")


# -- points with checks -----------------------------------------------------------------

def _list(keys: Iterable[str]) -> str:
    keys = list(keys)
    return ", ".join(f"'{key}'" for key in keys) if keys else "(none)"


def _key_error(profile: Profile, unit: str, param: str, key: str) -> InvalidParameter:
    numeric = all_numerical_resource_fields_of(profile)
    if key not in all_resource_fields_of(profile):
        problem = f"no resource has the key '{key}'"
    else:
        problem = f"'{key}' holds no numbers"
    return InvalidParameter(unit, param, key, f"a numeric resource key, but {problem}; "
                                              f"the numeric keys of this profile are {_list(numeric)}")


def point_sets(profile: Profile, unit: str, depending_on: str, of: str) -> PointsRead:
    """The points of every uid (split by kind, see below), refusing unusable input with a one-line error.

    A uid whose resources measure several things (``type``/``subtype``) is
    modelled once per thing: ``by_uid`` then holds ``uid [subtype]`` groups
    and ``kinds`` says what each one is (see
    :func:`~perun_core.analysis.points.read_points`).

    Raises PostprocessError for a profile without resources, for NaN or
    infinite values of either key and when no resource has numbers in
    both keys; InvalidParameter (naming the parameter and listing the
    profile's numeric keys) for a key that is absent or never numeric.
    """

    require_resources(profile, unit)
    found = read_points(profile, depending_on, of, split_kinds=True)
    for param, key, count in (("depending_on", depending_on, found.numbers_x), ("of", of, found.numbers_y)):
        if count == 0:
            raise _key_error(profile, unit, param, key)
    for key, bad in ((depending_on, found.nonfinite_x), (of, found.nonfinite_y)):
        if bad:
            raise PostprocessError(
                unit, f"'{key}' is NaN or infinite in {bad} resource{'s' if bad != 1 else ''}; "
                      "models cannot take such values (fix or remove those resources first)")
    if not any(len(x) for x, _y in found.by_uid.values()):
        raise PostprocessError(unit, f"no resource with a uid has numbers in both '{depending_on}' and '{of}'")
    return found


def settings(unit: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The unit's parameters from ``kwargs``, declared defaults for those missing.

    The runner passes every parameter converted; a direct call
    (``Unit().postprocess(ctx, {"profile": p})``) may leave some out.
    """
    return {param.name: kwargs.get(param.name, param.default) for param in unit.params}


def check_numeric_key(profile: Profile, unit: str, param: str, key: str) -> None:
    """InvalidParameter (listing the numeric keys) unless some resource has a number under ``key``."""

    if count_numbers(profile, key)[0] == 0:
        raise _key_error(profile, unit, param, key)


def fit_and_store(unit: Any, kwargs: dict[str, Any], analyse: Any, **options: Any) -> PhaseResult:
    """Run ``analyse(points, **options)`` on the profile's points and store the models it returns.

    The common body of the model-building units: points with checks
    (:func:`point_sets`), the records tagged with their keys and appended
    (:func:`store_models`), skipped models recorded in ``info``, and an
    error when nothing at all could be fitted.
    """
    values = settings(unit, kwargs)
    profile = kwargs["profile"]
    found = point_sets(profile, unit.name, values["depending_on"], values["of"])
    models, skipped = analyse(found.by_uid, **options)
    if not models:
        raise nothing_fitted(unit.name, skipped)
    for record in models:
        kind = found.kinds.get(record["uid"])
        if kind is not None:
            record["uid"], record["resource_type"], record["subtype"] = kind
    kwargs["profile"] = store_models(profile, tag_models(models, values["depending_on"], values["of"]))
    if skipped:
        kwargs["info"] = {"skipped": skipped_entries(skipped)}
    return PhaseResult.ok(kwargs)
