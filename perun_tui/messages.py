"""Messages the workers and panes send each other, as dataclasses."""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.message import Message

from perun_core.api import LoadedProfile, LogEntry, StatusReport
from perun_core.repository import ProfileInfo

from .stats import ProfileSummary


@dataclass
class HistoryChunk(Message):
    """A batch of log entries from the history worker (newest first).

    ``generation`` counts reloads: a chunk of an abandoned walk is ignored.
    """

    entries: list[LogEntry]
    generation: int = 0


@dataclass
class HistoryDone(Message):
    """The history walk finished (``count`` entries in all)."""

    count: int
    generation: int = 0


@dataclass
class EntryRefreshed(Message):
    """One commit's entry was re-read after its profiles changed."""

    entry: LogEntry


@dataclass
class CommitHighlighted(Message):
    """The history cursor moved to ``entry`` (None while the history is empty)."""

    entry: LogEntry | None

    def can_replace(self, message: Message) -> bool:
        # Holding a cursor key sends a burst: only the last position matters.
        return isinstance(message, CommitHighlighted)


@dataclass
class StatusLoaded(Message):
    """HEAD, its profiles and the pending ones, as ``api.status`` reported them."""

    report: StatusReport


@dataclass
class ProfilesChanged(Message):
    """Profiles were registered, unlinked or deleted; ``minors`` are the commits touched."""

    minors: list[str]
    note: str = ""


@dataclass
class ProfileAction(Message):
    """The profiles pane asks the screen to act on ``info`` (at commit ``minor``)."""

    action: str  # "register", "unlink", "delete" or "details"
    info: ProfileInfo
    minor: str | None


@dataclass
class ProfileLoaded(Message):
    """A profile and its summary, loaded for the details screen."""

    loaded: LoadedProfile
    summary: ProfileSummary = field(repr=False)
