"""Progress events of push, fetch and pull (front ends render them; nothing here prints)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PushRetried", "RemoteContacted", "TransferProgress", "TransferStarted"]


@dataclass(frozen=True, slots=True)
class RemoteContacted:
    """The remote answered; ``has_profiles`` tells whether it holds perun refs already."""

    remote: str
    url: str
    has_profiles: bool


@dataclass(frozen=True, slots=True)
class TransferStarted:
    """A phase with ``total`` steps begins: preparing, sending, receiving or importing."""

    phase: str
    total: int


@dataclass(frozen=True, slots=True)
class TransferProgress:
    """``done`` of ``total`` steps of ``phase`` are done (reported at most every few percent)."""

    phase: str
    done: int
    total: int


@dataclass(frozen=True, slots=True)
class PushRetried:
    """Another push landed first; the remote's profiles were merged and the push is tried again."""

    attempt: int
    reason: str
