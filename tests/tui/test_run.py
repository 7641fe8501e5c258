"""Pilot tests of the run screen: the job matrix of the demo repository, run for real, at 80x24 (and one run
replayed from fixed events, for the layout at 40x12)."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from textual.widgets import DataTable, Static

from perun_core import api
from perun_tui.app import MainScreen, PerunApp
from perun_tui.modals.details import ProfileDetailsScreen
from perun_tui.core import Core
from perun_tui.messages import RunDone, RunEvent, RunOutput, RunRepetition
from perun_tui.widgets.profiles import ProfilesTable
from perun_tui.screens import run
from perun_tui.screens.run import RunScreen

from .helpers import Recorder, git_head, rendered_text, replayed_run, set_matrix, settle, wait_until


def pending_files(root: Path) -> set[str]:
    return {p.name for p in (root / ".perun" / "jobs").iterdir()}


def processes_running(needle: str) -> list[int]:
    """Pids whose command line contains ``needle`` (arguments separated by spaces)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if needle in cmdline:
            found.append(int(entry.name))
    return found


async def test_running_the_matrix_shows_live_progress_and_links_the_new_profiles(demo_repo, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    set_matrix(demo_repo, cmds=["true", sys.executable], args=["-c 'print(\"hello from the job\")'"],
               collectors=[{"name": "time", "params": {"repeat": 2}}])
    before = pending_files(demo_repo)
    recorder = Recorder()
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("R")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunScreen)
        assert screen.query_one("#run-pane").border_title.startswith("Run · job matrix for HEAD ")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert screen.status == "ok"

        started = [m.event for m in recorder.of(RunEvent) if type(m.event).__name__ == "JobStarted"]
        assert [(e.job, e.total) for e in started] == [(1, 2), (2, 2)]
        assert {(m.index, m.total) for m in recorder.of(RunRepetition)} <= {(1, 2), (2, 2)}
        # output lines are no messages of their own: a RunOutput says the screen has new ones to take
        assert {m.job for m in recorder.of(RunOutput)} == {1, 2}
        assert "hello from the job" in rendered_text(screen.query_one("#run-output", Static))
        assert len(recorder.of(RunDone)) == 1

        table = screen.query_one("#run-jobs", DataTable)
        assert table.row_count == 2
        assert [str(table.get_cell(str(job), "status")) for job in (1, 2)] == ["ok", "ok"]
        new = pending_files(demo_repo) - before
        assert len(new) == 2 and set(screen.links) == {1, 2}
        assert "done in" in rendered_text(screen.query_one("#run-current", Static))

        # enter on the second job's row shows its profile: selected in the profiles pane, its details open over it
        table.move_cursor(row=1)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ProfileDetailsScreen)
        assert app.screen.info.source == screen.links[2].source
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        profiles = app.query_one(ProfilesTable)
        assert app.focused is profiles
        assert profiles.current.source == screen.links[2].source
        assert profiles.current.cmd == sys.executable
    assert not list(tmp_path.glob("perun-worktree-*"))


async def test_escape_cancels_the_run_and_nothing_is_left_behind(demo_repo, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    marker = "41.3759"  # a sleep no other test runs
    set_matrix(demo_repo, cmds=["sleep"], args=[marker], collectors=[{"name": "time"}])
    before = pending_files(demo_repo)
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("R")
        screen = app.screen
        assert isinstance(screen, RunScreen)
        await wait_until(pilot, lambda: screen.job == 1 and processes_running(f"sleep {marker}"))
        assert list(tmp_path.glob("perun-worktree-*"))  # HEAD runs in a worktree of its own

        # the UI handles keys while the collector runs (press returns once the key was handled; a UI blocked by
        # the collection would hang here until the sleep ends, and the run would no longer be running)
        table = screen.query_one("#run-jobs", DataTable)
        table.focus()
        await pilot.press("down")
        assert screen.running and processes_running(f"sleep {marker}")

        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert screen.status == "interrupted"
        assert str(table.get_cell("1", "status")) == "cancelled"
        assert "cancelled" in rendered_text(screen.query_one("#run-current", Static))
        await pilot.press("escape")  # now it closes
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen))
    assert not processes_running(f"sleep {marker}")
    assert not list(tmp_path.glob("perun-worktree-*"))
    assert pending_files(demo_repo) == before


def perun_files(root: Path) -> dict[str, int]:
    """The files under .perun with their sizes: a cancelled run must leave them as they were.

    The caches the browsing panes fill (``.perun/cache``) are left out, except
    for temporary files, which nothing may leave anywhere.
    """
    return {str(p.relative_to(root)): p.stat().st_size for p in (root / ".perun").rglob("*")
            if p.is_file() and (p.parent.name != "cache" or p.name.endswith(".tmp"))}


def flooding_matrix(root: Path, marker: str) -> None:
    """A job whose program prints lines as fast as it can, for as long as it is let."""
    set_matrix(root, cmds=["sh"], args=[f"-c 'while :; do echo {marker} floods the output pane; done'"],
               collectors=[{"name": "time"}])


async def flood_started(pilot, screen: RunScreen, marker: str) -> list[int]:
    """Wait until the flood shows in the output pane; the process groups of the profiled program."""
    output = screen.query_one("#run-output", Static)
    await wait_until(pilot, lambda: marker in rendered_text(output), timeout=60)
    groups = set()
    for pid in processes_running(f"echo {marker}"):  # the shell and its spawn helper
        try:
            groups.add(os.getpgid(pid))
        except ProcessLookupError:
            pass
    assert len(groups) == 2  # the helper's session and the run's group of its own
    return sorted(groups)


def group_gone(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # the id was reused by someone else's group
        return True
    return False


async def app_exited(app) -> None:
    """Return once the app was told to exit (its return code is set)."""
    while app.return_code is None:
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("key", ["escape", "ctrl+c"])
async def test_cancelling_a_run_whose_program_floods_its_output_kills_it(demo_repo, tmp_path, monkeypatch, key):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    marker = f"flood-{key}-5b20e"
    flooding_matrix(demo_repo, marker)
    before = perun_files(demo_repo)
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("R")
        screen = app.screen
        assert isinstance(screen, RunScreen)
        groups = await flood_started(pilot, screen, marker)
        output = screen.query_one("#run-output", Static)
        assert output.content_region.height <= len(screen._output_tail) <= 40  # only a bounded tail is kept

        # keys are still handled while the flood goes on
        table = screen.query_one("#run-jobs", DataTable)
        table.focus()
        await pilot.press("down")
        assert screen.running and not screen.finished.is_set()

        await pilot.press(key)
        # the worker's end (bounded: a hang fails here instead of hanging the suite)
        assert await asyncio.to_thread(screen.finished.wait, 60), "the run did not stop"
        assert all(group_gone(group) for group in groups)
        assert processes_running(f"echo {marker}") == []
        await wait_until(pilot, lambda: not screen.running)
        assert screen.status == "interrupted"
        assert str(table.get_cell("1", "status")) == "cancelled"
    assert not list(tmp_path.glob("perun-worktree-*"))
    assert perun_files(demo_repo) == before


async def test_quitting_during_a_flooding_run_stops_it_before_the_app_ends(demo_repo, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    marker = "flood-quit-83d1a"
    flooding_matrix(demo_repo, marker)
    before = perun_files(demo_repo)
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("R")
        screen = app.screen
        assert isinstance(screen, RunScreen)
        groups = await flood_started(pilot, screen, marker)
        await pilot.press("q")
        assert "quitting" in rendered_text(screen.query_one("#run-current", Static)) or screen.finished.is_set()
        await asyncio.wait_for(app_exited(app), 60)
    # the app ended only after the worker did: nothing of the run is left when the terminal is back
    assert screen.finished.is_set()
    assert all(group_gone(group) for group in groups)
    assert processes_running(f"echo {marker}") == []
    assert not list(tmp_path.glob("perun-worktree-*"))
    assert perun_files(demo_repo) == before


async def test_a_run_that_cannot_start_is_a_notification(demo_repo):
    recorder = Recorder()
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("R")  # the demo's local.yml has no job matrix
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert app.screen.status == "error"
        assert any("no commands" in note for note in recorder.notes("error"))
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen) and app.is_running


async def test_a_failed_job_shows_its_whole_reason_in_the_output_pane(demo_repo, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    set_matrix(demo_repo, cmds=["sh"], args=["-c 'echo the disk is full >&2; exit 3'"],
               collectors=[{"name": "time", "params": {"repeat": 1}}])
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("R")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await settle(pilot)
        screen = app.screen
        assert screen.status == "failed"
        output = screen.query_one("#run-output", Static)
        assert output.border_title == "output of job 1: failed"
        text = " ".join(rendered_text(output).split("\n", 1)[1].split())  # without the border's title
        assert "the disk is full failed: the profiled command exited with status 3" in text
        assert "time: sh" not in text  # the job's row names it; the reason does not repeat it


async def test_marked_commits_are_run_each_in_its_worktree(demo_repo, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    set_matrix(demo_repo, cmds=["true"], collectors=[{"name": "time"}])
    with api.open_repository(demo_repo) as repo:
        shas = [e.version.checksum for e in api.log(None, repo=repo)][1:3]
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("down", "space", "space")  # marks the 2nd and 3rd commit
        assert list(app.query_one("#history").marked) == shas
        await pilot.press("R")
        await app.workers.wait_for_complete()
        await settle(pilot)
        screen = app.screen
        assert screen.status == "ok"
        assert screen.query_one("#run-pane").border_title == "Run · job matrix for 2 marked commits"
        assert {link.minor for link in screen.links.values()} == set(shas)
        assert not app.query_one("#history").marked  # the marks were used up


async def test_the_output_pane_shows_the_last_lines_for_the_rows_the_advice_leaves_it(demo_repo, monkeypatch):
    """A run's advice takes rows of the output pane: the pane shows the last lines of the job's output for the rows
    it has left, at 40x12 and after resizes (the snapshot test_run_screen[40x12] showed the first lines of a tail
    cut for the taller pane, "── run 1 of 5", when the advice came after the output)."""
    run_matrix, clock = replayed_run(demo_repo, git_head(demo_repo))
    monkeypatch.setattr(Core, "run_matrix", run_matrix)
    monkeypatch.setattr(run, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    app = PerunApp(demo_repo)
    async with app.run_test(size=(40, 12)) as pilot:
        await settle(pilot)
        await pilot.press("R")
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and not app.screen.running)
        await settle(pilot)
        output = app.screen.query_one("#run-output")
        for size in ((40, 12), (80, 24), (40, 12)):
            if size != app.size:
                await pilot.resize_terminal(*size)
                await settle(pilot)
            shown = str(output.render()).splitlines()
            # the last lines, as many as the pane has rows for (more would show the first of them)
            assert shown[-1] == "── run 5 of 5" and len(shown) <= output.content_region.height, (size, shown)


async def test_measurement_advice_names_the_tui_field_not_the_command_line_flag(demo_repo, monkeypatch):
    """The run's advice said 'repeat more (-r N), use --clock cpu with pytrace': options of another front end."""
    from perun_core.api import run_events as ev

    run_matrix, clock = replayed_run(demo_repo, git_head(demo_repo))
    monkeypatch.setattr(Core, "run_matrix", run_matrix)
    monkeypatch.setattr(run, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    app = PerunApp(demo_repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("R")
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and not app.screen.running)
        await settle(pilot)
        screen = app.screen
        screen.post_message(RunEvent(ev.MeasurementAdvice(1, "advice: the wall times of the runs vary by 21 % (CV): "
                                                          "repeat more (-r N), use --clock cpu with pytrace, or "
                                                          "callgrind (instruction counts) in CI")))
        await settle(pilot)
        shown = rendered_text(screen.query_one("#run-advice", Static))
        assert "-r N" not in shown and "--clock" not in shown
        assert "repeat" in shown and "clock: cpu" in shown and "(e, the job matrix)" in shown
