"""The demo's build on a thread of its own, so perun-tui shows the demo while its profiles are collected.

``perun-tui --demo`` on a directory without a complete demo starts a
:class:`DemoBuild` (:func:`perun_core.api.build_demo`) before the app: the
app opens as soon as the repository exists (its history written, a second
or two), shows the running phases of the build at the bottom of the main
screen and re-reads the commits as their profiles land.  Quitting stops
the build; the core then removes the unfinished demo, and the next
``perun-tui --demo`` builds it again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from perun_core import api
from perun_core.errors import Interrupted

__all__ = ["DemoBuild"]


class DemoBuild:
    """One build of the demo at ``where`` on a daemon thread; its state is read by the front end.

    ``listener`` (see :meth:`listen`) is called on the build's thread after
    each step, when the repository is ready and when the build ends; it must
    not block (the app posts a message).
    """

    def __init__(self, where: Path | str) -> None:
        self.where = Path(where)
        self.cancel = threading.Event()
        self.ready = threading.Event()  # the repository opens (or the build ended before it did)
        self.done = threading.Event()
        self.root: Path | None = None
        self.error: BaseException | None = None
        #: the last step of each phase seen, in the order the phases began, with the number of that step
        self.phases: dict[str, tuple[int, str]] = {}
        self._steps = 0
        self.started = time.monotonic()
        self.seconds: float | None = None  # how long the build took, once it ended
        self._listener: Callable[[], None] | None = None
        self._guard = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="demo-build", daemon=True)

    def start(self) -> DemoBuild:
        self._thread.start()
        return self

    def listen(self, listener: Callable[[], None] | None) -> None:
        """Call ``listener`` (on the build's thread) after every change from now on; None stops that."""
        with self._guard:
            self._listener = listener

    @property
    def running(self) -> bool:
        return not self.done.is_set()

    @property
    def stopped(self) -> bool:
        """Whether the build ended because it was cancelled."""
        return isinstance(self.error, Interrupted) and self.cancel.is_set()

    def elapsed(self) -> float:
        return self.seconds if self.seconds is not None else time.monotonic() - self.started

    def running_steps(self, count: int = 2) -> list[str]:
        """The last step of each of the ``count`` phases heard from last, in the order they began.

        Two by default: the time and the trace phases run side by side.
        """
        with self._guard:
            recent = sorted(self.phases.values())[-count:]
            return [step for number, step in self.phases.values() if (number, step) in recent]

    def wait_ready(self) -> Path:
        """Wait until the repository opens; its root.  Raises what ended the build before it did."""
        self.ready.wait()
        if self.root is None:
            assert self.error is not None
            raise self.error
        return self.root

    def stop(self) -> None:
        """Cancel the build and wait until it has ended (and removed the unfinished demo)."""
        self.cancel.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            built = api.build_demo(self.where, progress=self._step, cancel=self.cancel, on_ready=self._ready)
            if self.root is None:  # another build made it while this one waited: never "ready", simply built
                self.root = built
        except BaseException as error:  # noqa: BLE001 - handed to the front end, which reports it
            self.error = error
        finally:
            self.seconds = time.monotonic() - self.started
            self.done.set()
            self.ready.set()
            self._changed()

    def _step(self, step: str) -> None:
        phase = api.demo_phase(step)
        with self._guard:
            self._steps += 1
            self.phases[phase] = (self._steps, step)
        self._changed()

    def _ready(self, root: Path) -> None:
        self.root = root
        self.ready.set()
        self._changed()

    def _changed(self) -> None:
        with self._guard:
            listener = self._listener
        if listener is not None:
            listener()
