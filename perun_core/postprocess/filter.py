"""The filter: keep or drop resources by uid, type, subtype or value.

A resource *matches* when it satisfies every criterion given: its ``uid``
(a nested uid in its joined form, ``"a.c:main:22"``) is one of ``--uid``,
its ``type`` one of ``--type``, its ``subtype`` one of ``--subtype``, and
every ``--condition "KEY OP VALUE"`` holds (OP one of ``== != < <= > >=``;
KEY any resource key, flattened ones like ``uid:line`` included; a numeric
VALUE compares numbers, a quoted or non-numeric one compares text with
``==``/``!=``).  ``--mode keep`` (the default) keeps the matching resources,
``--mode drop`` removes them.  Models and everything else stay as they are.
See :mod:`perun_core.analysis.filtering` for the details.

A condition on a key no resource has, or a numeric comparison on a key
that never holds a number, is refused (it would silently match nothing).
"""

from __future__ import annotations

from typing import Any

from ..analysis.filtering import OPERATORS, filter_profile, parse_condition
from ..analysis.points import count_numbers
from ..errors import InvalidParameter
from ..profile.query import all_numerical_resource_fields_of, all_resource_fields_of
from ..units import Param, PhaseResult, UnitContext
from .common import require_resources, settings

__all__ = ["Filter", "check_conditions"]


def check_conditions(value: list[str]) -> list[str]:
    """Every condition parses (InvalidParameter naming the bad one otherwise); returned as given."""

    for text in value:
        try:
            parse_condition(text)
        except InvalidParameter as exc:
            raise ValueError(f"conditions 'KEY OP VALUE' (OP one of {' '.join(OPERATORS)}); "
                             f"in '{text}': {exc.expected}") from None
    return value


class Filter:
    name = "filter"
    kind = "postprocessor"
    summary = "Keep or drop resources by uid, type, subtype or value."
    description = (
        "Keeps the resources that match every criterion given (with --mode drop: removes them). "
        "--uid, --type and --subtype are repeatable lists of accepted values; --condition 'KEY OP VALUE' "
        "(repeatable) compares a resource's value of KEY (flattened keys such as uid:line work) with VALUE, "
        "e.g. --condition 'amount >= 10'."
    )
    params = (
        Param("uids", "list", None, "Match resources of this uid (repeatable).", flags=("-u", "--uid"),
              metavar="UID", aliases=("uid",)),
        Param("types", "list", None, "Match resources of this type (repeatable).", flags=("-t", "--type"),
              metavar="TYPE", aliases=("type",)),
        Param("subtypes", "list", None, "Match resources of this subtype (repeatable).",
              flags=("-st", "--subtype"), metavar="SUBTYPE", aliases=("subtype",)),
        Param("conditions", "list", None, "Match resources where 'KEY OP VALUE' holds, e.g. 'amount >= 10' "
              "(repeatable).", flags=("-c", "--condition"), metavar="CONDITION", aliases=("condition",),
              check=check_conditions),
        Param("mode", "choice", "keep", "Keep the matching resources, or drop them.", flags=("--mode",),
              choices=("keep", "drop")),
    )

    def postprocess(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        options = settings(self, kwargs)
        profile = kwargs["profile"]
        require_resources(profile, self.name)
        conditions = [parse_condition(text) for text in options["conditions"] or ()]
        for condition in conditions:
            _check_condition_key(profile, self.name, condition)
        kwargs["profile"] = filter_profile(
            profile, uids=options["uids"], types=options["types"], subtypes=options["subtypes"],
            conditions=conditions, mode=options["mode"],
        )
        return PhaseResult.ok(kwargs)


def _check_condition_key(profile: Any, unit: str, condition: Any) -> None:
    text = f"{condition.key} {condition.op} {condition.value!r}"
    if isinstance(condition.value, str):
        if condition.key not in all_resource_fields_of(profile):
            raise InvalidParameter(unit, "conditions", text, f"a condition on a resource key, but no resource has "
                                                             f"the key '{condition.key}'")
        return
    if count_numbers(profile, condition.key)[0] == 0:
        numeric = ", ".join(f"'{k}'" for k in all_numerical_resource_fields_of(profile)) or "(none)"
        raise InvalidParameter(unit, "conditions", text, f"a numeric resource key, but no resource has a number "
                                                         f"under '{condition.key}'; the numeric keys of this "
                                                         f"profile are {numeric}")
