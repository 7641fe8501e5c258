"""Typed progress events of a check, in the style of :mod:`perun_core.events`.

A check reports, in this order (``*`` repeats, ``?`` is optional)::

    CheckStarted
    ( CollectionStarted  CollectionEvent*  CollectionFinished )?
    ( VersionStarted  PairChecked*  VersionFinished )*
    CheckFinished

``CheckFinished`` always comes last, also when the check fails (its
``status`` says how).  Events are frozen dataclasses handed to ``on_event``
on the thread that runs the check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["CheckFinished", "CheckStarted", "CollectionEvent", "CollectionFinished", "CollectionStarted",
           "Event", "Notice", "PairChecked", "VersionFinished", "VersionStarted"]


@dataclass(frozen=True, slots=True)
class CheckStarted:
    """``command`` is head, all or profiles; ``versions`` how many target versions will be checked."""

    command: str
    versions: int


@dataclass(frozen=True, slots=True)
class CollectionStarted:
    """Missing profiles are collected first for these versions (-c, collect_before_check)."""

    versions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CollectionEvent:
    """An event of that collection (see :mod:`perun_core.events`)."""

    event: Any


@dataclass(frozen=True, slots=True)
class CollectionFinished:
    written: int
    failed: int


@dataclass(frozen=True, slots=True)
class VersionStarted:
    minor: str | None
    index: int
    count: int


@dataclass(frozen=True, slots=True)
class PairChecked:
    """One pair of profiles of ``minor`` was checked (``pair`` is a :class:`~perun_core.check.report.PairReport`)."""

    minor: str | None
    pair: Any
    index: int
    total: int


@dataclass(frozen=True, slots=True)
class VersionFinished:
    minor: str | None
    index: int
    count: int
    degradations: int
    optimizations: int


@dataclass(frozen=True, slots=True)
class CheckFinished:
    """The last event: ``status`` is ok, degraded, error or interrupted."""

    status: str
    pairs: int
    degradations: int
    optimizations: int
    seconds: float


Event = (CheckStarted | CollectionStarted | CollectionEvent | CollectionFinished | VersionStarted | PairChecked
         | VersionFinished | CheckFinished)


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the user should know about how the check runs (front ends show it as a warning)."""

    text: str
