"""The TUI's one door to perun_core: an open repository and a lock around it.

Every call into perun_core's porcelain (:mod:`perun_core.api`,
:mod:`perun_core.api.run`, :mod:`perun_core.api.check`, the views and the
configuration) made by the TUI goes through a :class:`Core`.  Workers run on
threads, and the repository (its dulwich object store above all) is not
safe for concurrent use, so each call holds ``lock``; a history walk takes
it once per chunk, so an action by the user never waits behind the whole
walk.

Long operations (running the job matrix, checks, postprocessing) do not
use the shared repository at all: they get ``cwd=root`` and open their own
instance, so a run of several minutes never holds the lock the history and
the profiles pane need.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from typing import TYPE_CHECKING, Any

from perun_core import api
from perun_core.api import MATRIX_KEYS, ProfileInfo

if TYPE_CHECKING:
    from perun_core.api import EventStream, Job, PerunRepository, PostprocessResult, RunResult, Theme, UnitInfo


class Core:
    """An open perun repository shared by the app's workers."""

    def __init__(self, repo: PerunRepository) -> None:
        self.repo = repo
        self.lock = threading.RLock()

    @classmethod
    def open(cls, path: Path | str | None = None) -> Core:
        """The nearest perun repository at or above ``path``; raises PerunError if none."""
        return cls(api.open_repository(path))

    @property
    def root(self) -> Path:
        return self.repo.root

    def close(self) -> None:
        with self.lock:
            self.repo.close()

    # -- reading -----------------------------------------------------------------
    def status(self) -> api.StatusReport:
        with self.lock:
            return api.status(repo=self.repo)

    def history(self, first_chunk: int = 200, chunk: int = 1000) -> Iterator[list[api.LogEntry]]:
        """Log entries from HEAD back, in lists: a small first one, then bigger ones."""
        with self.lock:
            entries = api.log(None, with_profiles=True, repo=self.repo)
        size = first_chunk
        while True:
            batch: list[api.LogEntry] = []
            with self.lock:
                for entry in entries:
                    batch.append(entry)
                    if len(batch) >= size:
                        break
            if batch:
                yield batch
            if len(batch) < size:
                return
            size = chunk

    def entry(self, minor: str) -> api.LogEntry:
        """The log entry (with profiles) of one commit."""
        with self.lock:
            return next(iter(api.log(minor, with_profiles=True, repo=self.repo)))

    def load(self, info: ProfileInfo, minor: str | None) -> api.LoadedProfile:
        with self.lock:
            if not info.registered and info.path is not None:
                # by its file: a pending tag counts within one commit's list, the path names it anywhere
                return api.load_profile(str(info.path), repo=self.repo)
            return api.load_profile(info.tag, minor=minor, repo=self.repo)

    # -- changing ----------------------------------------------------------------
    def register(self, info: ProfileInfo) -> list[api.AddedProfile]:
        """Register a pending profile at the commit it was collected for."""
        with self.lock:
            spec = str(info.path) if info.path is not None else info.tag  # the file names it wherever it is listed
            return api.add([spec], minor=info.origin, repo=self.repo)

    def remove(self, info: ProfileInfo, minor: str | None) -> list[api.RemovedProfile]:
        """Unlink a registered profile from ``minor``, or delete a pending one."""
        with self.lock:
            # a pending tag counts within the list of the commit it was shown under, as a registered one does
            return api.remove([info.tag], minor=minor, repo=self.repo)

    # -- views -------------------------------------------------------------------
    def view_model(self, profile: Any, view: str, params: dict[str, Any] | None = None) -> Any:
        """What view ``view`` builds from ``profile`` (a Figure, FlameGraph or HeapMapResult)."""
        return api.build_view(profile, view, params)

    def view_fits(self, profile: Any) -> list[api.ViewFit]:
        """Every view with whether it can show ``profile`` and, when not, why (a sentence part)."""
        return api.view_fits(profile)

    @staticmethod
    def share_y_scale(*figures: Any) -> list[Any]:
        """The figures with one y scale per plot position (charts compared side by side)."""
        return api.share_y_scale(*figures)

    def only_types(self, profile: Any, types: list[str]) -> Any:
        """``profile`` with only the resources of these types (a new profile; the given one is unchanged)."""
        return api.only_types(profile, types)

    def render_view(self, view: str, model: Any, width: int, height: int, theme: Theme | None) -> str:
        """``model`` of ``view`` as (ANSI) text of ``width`` x ``height`` through the plotting adapter."""
        return api.render_view(view, model, width=width, height=height, theme=theme)

    @staticmethod
    def one_plot(figure: Any, index: int) -> Any:
        """A figure holding only plot ``index`` of ``figure`` (scatter draws one uid at a time)."""
        return api.one_plot(figure, index)

    @staticmethod
    def theme(series: tuple, heat: tuple, text: tuple | None, axes: tuple | None, background: tuple | None,
              on_block: tuple) -> Theme:
        return api.Theme(series=series, heat=heat, text=text, axes=axes, background=background, on_block=on_block)

    def summary(self, profile: Any) -> api.ProfileSummary:
        """Statistics of a loaded profile for the details screen (numpy: call it in a worker)."""
        return api.summary(profile)

    # -- units and the job matrix ----------------------------------------------------
    def units(self, kind: str) -> list[UnitInfo]:
        """Registered collectors (``kind="collector"``) or postprocessors with their parameters."""
        # lazy: keeps the TUI's first frame light
        from perun_core.api import run as api_run

        return api_run.units(kind)

    @property
    def local_config_path(self) -> Path:
        return self.repo.local_config_path

    def matrix(self) -> dict[str, Any]:
        """The job-matrix keys of ``.perun/local.yml`` as they are on disk, unvalidated (so a broken one can be repaired)."""
        with self.lock:
            return api.read_matrix(repo=self.repo)

    def validate_matrix(self, values: dict[str, Any]) -> tuple[list[Job], str]:
        """The jobs the matrix ``values`` expand to, and a warning when it cannot run yet (see api.validate_matrix)."""
        with self.lock:
            return api.validate_matrix(values, repo=self.repo)

    def save_matrix(self, values: dict[str, Any], keys: tuple[str, ...] = MATRIX_KEYS) -> Path:
        """Write the matrix ``keys`` into local.yml (empty ones are removed), keeping everything else."""
        with self.lock:
            return api.save_matrix(values, keys, repo=self.repo)

    def check_local_config(self) -> None:
        """Read local.yml validating every known key (after an outside edit); raises ConfigError."""
        with self.lock:
            api.check_local_config(repo=self.repo)

    def editor(self) -> str:
        """The command line of the user's editor: $VISUAL, $EDITOR, then ``general.editor``."""
        return api.editor_command(scope="local", cwd=self.root)

    def reload_config(self) -> None:
        """Forget the cached configuration (after local.yml changed)."""
        with self.lock:
            self.repo.reload_config()

    # -- long operations, each on its own repository instance -------------------------
    def run_matrix(self, minors: list[str], on_event: Callable[[Any], None], cancel: threading.Event) -> RunResult:
        """Run the job matrix for the commits ``minors`` on this (worker) thread.

        ``on_event`` gets every event on this thread, output lines included, so
        a program that floods its output is handled at the rate it writes,
        with nothing queued; setting ``cancel`` (from any thread) kills the
        profiled process group, removes the worktree and raises Interrupted.
        """
        # lazy: keeps the TUI's first frame light
        from perun_core.api import run as api_run

        return api_run.run_matrix(minor_versions=list(minors), raise_on_failure=False, on_event=on_event,
                                  cancel=cancel, cwd=self.root)

    def postprocess(self, info: ProfileInfo, minor: str | None, postprocessor: str,
                    params: dict[str, Any]) -> PostprocessResult:
        """Postprocess a profile into a new pending one."""
        # lazy: keeps the TUI's first frame light
        from perun_core.api import run as api_run

        if info.registered:
            return api_run.postprocess(info.tag, postprocessor, params, minor=minor, cwd=self.root)
        spec = str(info.path) if info.path is not None else info.tag
        return api_run.postprocess(spec, postprocessor, params, cwd=self.root)

    def stream_check(self, what: str, *, revision: str | None = None, baseline: str | None = None,
                     target: str | None = None, minor: str | None = None) -> EventStream:
        """Run ``check head`` / ``check all`` (from ``revision``) or ``check profiles``; iterate the events."""
        # lazy: keeps the TUI's first frame light
        from perun_core.api import check as api_check
        # lazy: keeps the TUI's first frame light
        from perun_core.api import run as api_run

        # confirm=None: time-based changes are confirmed by interleaved re-runs when the job matrix has time jobs
        if what == "head":
            return api_run.stream(api_check.check_head, revision, confirm=None, cwd=self.root)
        if what == "all":
            return api_run.stream(api_check.check_all, revision, confirm=None, cwd=self.root)
        # check_profiles has no ``cancel``; it compares two profiles and is quick
        return api_run.stream(_without_cancel(api_check.check_profiles), baseline, target, minor=minor,
                              cwd=self.root)

    def stored_check(self, minor: str) -> Any:
        """The findings stored by the last check of ``minor`` (None when never checked)."""
        # lazy: keeps the TUI's first frame light
        from perun_core.api import check as api_check

        with self.lock:
            return api_check.stored_check(minor, repo=self.repo)

    def load_ref(self, ref: Any) -> api.LoadedProfile:
        """A profile a check report names (a ``ProfileRef``): registered at its commit, pending or a file."""
        with self.lock:
            if ref.kind == "index" and ref.minor:
                return api.load_profile(ref.source, minor=ref.minor, repo=self.repo)
            return api.load_profile(ref.source, repo=self.repo)

    def load_spec(self, spec: str, minor: str | None) -> api.LoadedProfile:
        """A profile looked up by a spec (a tag at ``minor``, a pending tag, a path)."""
        with self.lock:
            return api.load_profile(spec, minor=minor, repo=self.repo)


def _without_cancel(function: Any) -> Any:
    def call(*args: Any, cancel: Any = None, **kwargs: Any) -> Any:
        return function(*args, **kwargs)

    return call
