"""The porcelain of units (collectors and postprocessors): their names, declarations and requirements.

Light on purpose: ``perun-core collect --help`` lists the collectors
through it without loading the runner.  Running units is :mod:`.run`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..params import convert_params

from ..units import registry

__all__ = ["get_unit", "unit_names", "unit_params", "unit_requirements"]


def unit_names(kind: str) -> list[str]:
    """The names of the registered collectors (``kind="collector"``) or postprocessors."""

    return registry(kind).names()


def get_unit(kind: str, name: str) -> Any:
    """The registered unit ``name`` of ``kind`` (its ``params``, ``summary`` ...); raises UnknownUnit."""

    return registry(kind).get(name)


def unit_params(kind: str, name: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` (from YAML or the command line) converted by unit ``name``'s declared parameters.

    Raises UnknownUnit and InvalidParameter naming the unit, key and value.
    """

    return convert_params(name, get_unit(kind, name).params, dict(values))


def unit_requirements(kind: str, name: str) -> Any:
    """What unit ``name`` needs on this machine and whether it is here (a ``UnitCheck``); raises UnknownUnit."""
    # lazy: the requirement checks bring subprocess and shutil, which naming or running a unit does not need
    from ..units.requirements import check_unit

    return check_unit(kind, name)
