"""Which views can show a profile: the traits a view needs, read once from a profile.

Every view declares ``fits``, a function of :class:`ProfileTraits` that
returns None when the view can show such a profile and otherwise the reason
it cannot, as a clause that completes "the VIEW view cannot show this
profile: ..." (``it has no call stacks or caller edges``).  Front ends ask
:func:`perun_core.api.view_fits` before they offer a view, so a key is
never offered on a profile it would fail on.

The declarations of the built-in views:

==============  ===============================================================
view            fits a profile with
==============  ===============================================================
``tableof``     any resources or models
``bars``        resources with a numeric ``amount``
``flow``        resources with a numeric ``amount``
``scatter``     resources with a numeric ``amount`` (against input sizes, or
                against the run order when there are none)
``flamegraph``  call stacks (``trace``) or caller edges (``caller``) with a
                numeric amount
``heapmap``     memory resources with an integer ``address``
==============  ===============================================================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..profile.query import all_numerical_resource_fields_of, all_resource_fields_of

from ..profile.resources import MISSING

if TYPE_CHECKING:  # pragma: no cover
    from ..profile.model import Profile

__all__ = ["ProfileTraits", "traits_of", "needs_amount", "needs_resources", "needs_calls", "needs_addresses"]

#: The key of input sizes (the structure-unit-size of the original's collectors).
SIZE_KEY = "structure-unit-size"


@dataclass(frozen=True, slots=True)
class ProfileTraits:
    """What views ask of a profile: its type, the kinds of resources and the keys present."""

    type: str
    resources: int
    #: stored models (regression fits) over all regions
    models: int
    #: resource types present (``time``, ``memory``, ``mixed`` ...)
    resource_types: frozenset[str]
    #: (type, subtype) pairs present, subtype "" when a resource has none
    kinds: frozenset[tuple[str, str]]
    keys: frozenset[str]
    numeric_keys: frozenset[str]

    @property
    def has_sizes(self) -> bool:
        return SIZE_KEY in self.numeric_keys

    @property
    def has_stacks(self) -> bool:
        return "trace" in self.keys

    @property
    def has_callers(self) -> bool:
        return "caller" in self.keys

    @property
    def has_addresses(self) -> bool:
        return "address" in self.numeric_keys


def traits_of(profile: Profile) -> ProfileTraits:
    """The :class:`ProfileTraits` of ``profile`` (one pass over its columns)."""

    kinds: set[tuple[str, str]] = set()
    models = 0
    for _, region in profile.regions():
        models += len(region.models)
        table = region.resources
        if not len(table):
            continue
        types = table.column("type") if "type" in table.keys() else [MISSING] * len(table)
        subtypes = table.column("subtype") if "subtype" in table.keys() else [MISSING] * len(table)
        for kind, subtype in set(zip(types, subtypes)):
            kinds.add(("" if kind is MISSING else str(kind), "" if subtype is MISSING else str(subtype)))
    return ProfileTraits(
        type=str(profile.type or ""),
        resources=profile.resource_count(),
        models=models,
        resource_types=frozenset(kind for kind, _ in kinds if kind),
        kinds=frozenset(kinds),
        keys=frozenset(all_resource_fields_of(profile)),
        numeric_keys=frozenset(all_numerical_resource_fields_of(profile)),
    )


Fits = Callable[[ProfileTraits], "str | None"]


def needs_resources(traits: ProfileTraits) -> str | None:
    return None if traits.resources or traits.models else "it has no resources and no models"


def needs_amount(traits: ProfileTraits) -> str | None:
    if not traits.resources:
        return "it has no resources"
    return None if "amount" in traits.numeric_keys else "its resources have no numeric amount"


def needs_calls(traits: ProfileTraits) -> str | None:
    if not traits.resources:
        return "it has no resources"
    if not (traits.has_stacks or traits.has_callers):
        return "it has no call stacks ('trace') or caller edges ('caller')"
    return None if "amount" in traits.numeric_keys else "its calls have no numeric amount"


def needs_addresses(traits: ProfileTraits) -> str | None:
    if not traits.resources:
        return "it has no resources"
    if traits.type != "memory" and "memory" not in traits.resource_types:
        return f"it is a {traits.type or 'untyped'} profile, not a memory one"
    return None if traits.has_addresses else "its allocations have no addresses"
