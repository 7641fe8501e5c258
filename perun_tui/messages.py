"""Messages the workers and panes send each other, as dataclasses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message

from perun_core.api import LoadedProfile, LogEntry, ProfileInfo, ProfileSummary, StatusReport


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

    action: str  # "register", "unlink", "delete", "details", "plot" or "postprocess"
    info: ProfileInfo
    minor: str | None
    view: str | None = None  # for "plot": the view to open with


@dataclass
class DiffRequested(Message):
    """The profiles pane asks the screen to open the difference of two profiles (each at its commit)."""

    base: ProfileInfo
    base_minor: str | None
    target: ProfileInfo
    target_minor: str | None


@dataclass
class ProfileLoaded(Message):
    """A profile and its summary, loaded for the details screen."""

    loaded: LoadedProfile
    summary: ProfileSummary = field(repr=False)


# -- plots -------------------------------------------------------------------------------

@dataclass
class PlotProfileLoaded(Message):
    """The plot screen's profile was loaded (``error`` set when it could not be)."""

    loaded: LoadedProfile | None
    error: str = ""
    #: the views that can show it and why the others cannot (``api.ViewFit``)
    fits: list[Any] = field(default_factory=list)


@dataclass
class PlotModelBuilt(Message):
    """A view built its data from the profile: a Figure, FlameGraph or HeapMapResult (or failed)."""

    view: str
    model: Any = field(repr=False)
    error: str = ""


@dataclass
class PictureReady(Message):
    """A picture drawn in a worker for ``key`` (profile, view, state, width, height, theme)."""

    key: tuple
    picture: Any = field(repr=False)
    error: str = ""


@dataclass
class PlotStatus(Message):
    """The plot widget describes what its cursor is on (a frame, a heap cell, a uid)."""

    text: str

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, PlotStatus)


# -- runs ---------------------------------------------------------------------------------

@dataclass
class RunEvent(Message):
    """A progress event of the job-matrix run (RunPlanned, JobStarted, ProfileWritten, ...)."""

    event: Any


@dataclass
class RunRepetition(Message):
    """A repetition of the running job started; bursts keep only the latest."""

    job: int | None
    index: int
    total: int
    warmup: bool

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RunRepetition)


@dataclass
class RunOutput(Message):
    """The profiled program wrote lines the run screen has not shown yet (it takes them from the run's tail).

    One is on its way at a time, however many lines were written meanwhile.
    """

    job: int | None

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RunOutput)


@dataclass
class RunDone(Message):
    """The run ended: ``status`` ok, failed, interrupted or error (then ``error`` says why)."""

    status: str
    result: Any = field(default=None, repr=False)
    error: str = ""


@dataclass(frozen=True)
class ProfileLink:
    """A profile a run or a postprocessing produced, to be shown in the profiles pane."""

    minor: str | None
    source: str
    registered: bool = False


# -- the job matrix and postprocessing ---------------------------------------------------------

@dataclass
class MatrixLoaded(Message):
    """local.yml was read: the matrix ``values``, the units to choose from, and a problem of the file."""

    values: dict[str, Any]
    collectors: list[Any] = field(repr=False)
    postprocessors: list[Any] = field(repr=False)
    problem: str = ""


@dataclass
class MatrixChecked(Message):
    """The edited matrix was validated: the jobs it expands to, or why it is invalid."""

    generation: int
    jobs: list[Any] = field(repr=False)
    error: str = ""
    warning: str = ""


@dataclass
class MatrixSaved(Message):
    """The matrix was written to local.yml (or ``error`` says why not)."""

    values: dict[str, Any]
    error: str = ""


@dataclass
class PostprocessDone(Message):
    """Postprocessing finished: the new pending profile, or the error."""

    link: ProfileLink | None
    error: str = ""


# -- degradation checks ---------------------------------------------------------------------

@dataclass
class CheckProgress(Message):
    """What the running check does now (one line); bursts keep only the latest."""

    text: str

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, CheckProgress)


@dataclass
class CheckDone(Message):
    """A check ended: its report (a CheckReport, or the stored VersionReport), or why it did not."""

    what: str
    report: Any = field(default=None, repr=False)
    status: str = "ok"
    error: str = ""
    stored: bool = False


@dataclass
class CompareLoaded(Message):
    """The baseline and target profiles of a finding, loaded (or the error)."""

    baseline: Any = field(default=None, repr=False)
    target: Any = field(default=None, repr=False)
    error: str = ""
