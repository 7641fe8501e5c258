"""Helpers shared by the TUI tests."""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from pathlib import Path

from gitrepo import make_repo
from textual.message import Message
from textual.notifications import Notify

from perun_core import api
from perun_core.api import CheckReport
from perun_tui.app import MainScreen, PerunApp, message_of
from perun_tui.screens.check import CheckScreen


async def settle(pilot) -> None:
    """Wait until every worker finished and the messages they sent were handled.

    A worker cancelled meanwhile (an exclusive one replaced by the next key's, which is
    likelier on a busy machine) has finished too; a worker that failed still fails the test.
    """
    from textual.worker import WorkerCancelled

    app = pilot.app
    for _ in range(3):
        for worker in list(app.workers):
            try:
                await worker.wait()
            except WorkerCancelled:
                pass
        await pilot.pause()


def rendered_text(widget) -> str:
    """What ``widget`` shows on screen now, as plain lines."""
    from textual.geometry import Region

    width, height = widget.size
    return "\n".join(strip.text for strip in widget.render_lines(Region(0, 0, width, height)))


def main_screen(app) -> MainScreen:
    for screen in app.screen_stack:
        if isinstance(screen, MainScreen):
            return screen
    raise AssertionError("no main screen")


class Recorder:
    """A ``message_hook`` that keeps every message, for asserting on what the app said."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def __call__(self, message: Message) -> None:
        self.messages.append(message)

    def of(self, kind: type) -> list:
        """Messages of ``kind`` in order, each once (a bubbling message reaches the hook at every node)."""
        unique = {id(m): m for m in self.messages if isinstance(m, kind)}
        return list(unique.values())

    def notes(self, severity: str | None = None) -> list[str]:
        """The plain text of the notifications' messages (``notify`` puts their title before them as markup)."""
        return [message_of(m.notification) for m in self.of(Notify)
                if severity is None or m.notification.severity == severity]


#: How many times its idle duration a wait may take before it counts as hung.
HANG_FACTOR = 8


async def wait_until(pilot, predicate, timeout: float = 10.0) -> None:
    """Pause until ``predicate()`` holds (a worker's message arrived); fail only when the wait has hung.

    ``timeout`` is about how long the wait may take on an idle machine; the
    guard is :data:`HANG_FACTOR` times that, so a loaded CI machine (where a
    worker may get a tenth of a core) waits for the event instead of failing
    on the clock.
    """
    import time

    deadline = time.monotonic() + timeout * HANG_FACTOR
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        await pilot.pause(0.05)


async def select_profile(pilot, tag: str, commit: int = 0):
    """Put the history cursor on the ``commit``-th commit and the profiles cursor on ``tag``."""
    from perun_tui.widgets.history import HistoryView
    from perun_tui.widgets.profiles import ProfilesTable

    app = pilot.app
    app.query_one(HistoryView).cursor = commit
    await pilot.pause()
    table = app.query_one(ProfilesTable)
    table.focus()
    table.move_cursor(row=table.get_row_index(tag))
    await pilot.pause()
    return table


def set_matrix(root, **values) -> None:
    """Write job-matrix keys (cmds, args, collectors, ...) into the repository's local.yml."""
    from perun_core.config import Config

    config = Config.load(root / ".perun" / "local.yml", kind="local")
    for key, value in values.items():
        config.set(key, value)
    config.save()


def timed_profile(amounts, origin):
    """A time profile of repeated runs of ./app (real and user seconds per run)."""
    resources = [{"amount": value * share, "type": "time", "subtype": subtype, "uid": "./app", "order": order}
                 for order, value in enumerate(amounts, 1) for subtype, share in (("real", 1.0), ("user", 0.9))]
    return {"origin": origin, "header": {"type": "time", "units": {"time": "s"}, "cmd": "./app", "params": "",
                                         "workload": "1000"},
            "collector_info": {"name": "time", "params": {"repeat": len(amounts)}}, "postprocessors": [],
            "global": {"timestamp": sum(amounts), "resources": resources, "models": []}}


def bisect_repo(tmp_path):
    """Five commits of ./app with stored time profiles; from the fourth on, four times slower."""
    root = tmp_path / "proj"
    shas = make_repo(root, [{"files": {"n.txt": f"{i}\n"}, "message": f"c{i}"} for i in range(5)])
    api.init(root)
    for i, sha in enumerate(shas):
        base = 4.0 if i >= 3 else 1.0
        path = root / ".perun" / "jobs" / f"p{i}.perf"
        path.write_text(json.dumps(timed_profile([base, base * 1.01, base * 0.99, base * 1.02, base], origin=sha)))
        api.add([str(path)], minor=sha, cwd=root)
    set_matrix(root, cmds=["./app"], workloads=["1000"], collectors=[{"name": "time"}])
    return root, shas


async def open_check_screen(pilot) -> CheckScreen:
    """The check screen, opened with ``c`` from the main screen once the app has settled."""
    await settle(pilot)
    await pilot.press("c")
    screen = pilot.app.screen
    assert isinstance(screen, CheckScreen)
    return screen


async def checked(pilot, key: str = "a", timeout: float = 60) -> CheckScreen:
    """The check screen after its check ``key`` (``a`` all, ``h`` head) has run to its end."""
    await pilot.press("c")
    screen = pilot.app.screen
    assert isinstance(screen, CheckScreen)
    await pilot.press(key)
    await wait_until(pilot, lambda: not screen.running, timeout=timeout)
    await settle(pilot)
    return screen


async def tui_check(root, key: str = "h", timeout: float = 600) -> tuple[list, str]:
    """Open the TUI on ``root``, start a check from its check screen (``h`` head, ``a`` all), wait for it.

    Returns the findings it lists and the check pane's subtitle.
    """
    app = PerunApp(root)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_check_screen(pilot)
        await pilot.press(key)
        await wait_until(pilot, lambda: not screen.running, timeout=timeout)
        return [finding for _v, _p, finding in screen.rows], str(screen.query_one("#check-pane").border_subtitle)


def perf_profile(path, stacks, root, lines):
    """A perf profile of the program built in ``root`` written to ``path``: ``stacks`` maps a stack (innermost first) of
    (function, object) to (samples, period); ``lines`` maps a function of the repository to (file, line)."""
    from perun_core.collect.perf import stack_resources
    from perun_core.profile.codec import to_json_bytes
    from perun_core.profile.model import Profile, Snapshot
    from perun_core.profile.resources import ResourceTable

    rows = stack_resources(stacks)
    for row in rows:
        if row["subtype"] == "function" and row["uid"] in lines:
            source, line = lines[row["uid"]]
            row.update(source=str(root / source), line=line)
    profile = Profile(header={"type": "time", "cmd": "./sll-bench", "units": {"time": "samples"}},
                      collector_info={"name": "perf", "params": {"mode": "record"}},
                      global_region=Snapshot(ResourceTable(rows), [], {}))
    path.write_bytes(to_json_bytes(profile))
    return path


def store_demo_explanation(root) -> None:
    """Check every commit of the demo and keep, with the findings of the slowdown's real time, the
    explanation two perf profiles of sll-bench give (pending profiles): ``x`` shows it without collecting.

    The profiles are made up and fixed (sll_search three times slower, sll_insert and the malloc it calls
    about the same), so the explanation and its flame graph are the same on every run.
    """
    from perun_core.check.explain import store_explanations
    from perun_core.check.explain_compare import explain_profiles
    from perun_core.check.explain_owned import repository_roots
    from perun_core.profile.codec import load_profile_from_file
    from perun_core.runner.worktree import WORKTREE_PREFIX
    from perun_core.storage.repository import PerunRepository

    report = api.check_all(confirm=None, cwd=root)
    version, pair, _finding = next((v, p, f) for v, p, f in report.findings()
                                   if f.result.is_degradation and not f.result.is_maybe and f.location.endswith("[real]"))
    # where explain collects: a temporary worktree, whose sources it shows relative to the repository
    worktree = Path(tempfile.gettempdir()) / f"{WORKTREE_PREFIX}demo"
    program = str(worktree / "sll-bench")
    lines = {"main": ("src/bench.c", 5), "sll_insert": ("src/sll.c", 9), "sll_search": ("src/sll.c", 20)}
    names = []
    for name, search in (("base", 400), ("target", 1300)):
        stacks = {(("sll_search", program), ("main", program)): [search, search * 1000],
                  (("sll_insert", program), ("main", program)): [300, 300000],
                  (("malloc", "/usr/lib/libc.so.6"), ("sll_insert", program), ("main", program)): [120, 120000],
                  (("main", program),): [30, 30000]}
        names.append(perf_profile(root / ".perun" / "jobs" / f"perf-sll-bench-{name}.perf", stacks, worktree,
                                  lines).name)
    repo = PerunRepository(root)
    base, target = (load_profile_from_file(repo.jobs_dir / name) for name in names)
    explanation = explain_profiles("perf", base, target, pair.baseline.minor, pair.target.minor, "./sll-bench",
                                   profiles=tuple(names), sources=tuple(f"pending:{name}" for name in names),
                                   roots=repository_roots(repo))
    assert explanation.explained, explanation.message
    explained = replace(pair, findings=tuple(replace(f, details={**f.details, "explanation": explanation})
                                             if f.location.endswith("[real]") and f.result.is_degradation else f
                                             for f in pair.findings))
    assert store_explanations(repo, CheckReport("all", (replace(version, pairs=(explained,)),))) > 0


def git_head(root) -> str:
    """The full hash of ``root``'s HEAD."""
    import subprocess

    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                          check=True).stdout.strip()


def replayed_run(root, head: str):
    """``Core.run_matrix`` replaced by the events of a finished run of two jobs at ``head`` (the clock of the run
    screen reads 3.2 s after its start from the first event on): the screen as a real run leaves it, each time
    fixed."""
    from perun_core import events as ev
    from perun_core.runner.jobs import Job, unit_config
    from perun_core.runner.run import RunResult, WrittenProfile

    jobs = [Job("./sll-bench", "--iterations 1000", workload, unit_config("collector", "time", {"repeat": 5}))
            for workload in ("workloads/small.txt", "workloads/large.txt")]
    written = [WrittenProfile(root / ".perun" / "jobs" / f"sll-bench-time-{size}.perf", head, job)
               for size, job in zip(("small", "large"), jobs)]

    def run_matrix(self, minors, on_event, cancel):
        clock[0] += 3.2
        on_event(ev.RunPlanned(2, (head,), 2, False))
        on_event(ev.VersionStarted(head, 1, 1, root, True))
        for number, (job, profile, seconds) in enumerate(zip(jobs, written, (1.4, 1.8)), start=1):
            on_event(ev.JobStarted(number, 2, head, job))
            on_event(ev.OutputLine(number, "stdout", f"inserted and searched 1000 keys of {job.workload}"))
            for index in range(1, 6):
                on_event(ev.Repetition(number, index, 5, False))
            on_event(ev.ProfileWritten(number, profile.path, head))
            on_event(ev.JobFinished(number, 2, seconds))
        on_event(ev.MeasurementAdvice(2, "the wall times of the runs vary by 21 %: repeat more (repeat: 10) or "
                                         "close other programs"))
        return RunResult((head,), 2, tuple(written))

    clock = [1000.0]
    return run_matrix, clock
