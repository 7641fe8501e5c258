#!/usr/bin/env python3
"""Responsiveness of perun-tui: first frame, profiles pane, keys during a run.

Three targets of the TUI issue, on a repository of ``--commits`` (10,000)
commits built with ``tests/gitrepo.py:fast_linear_history``, one profile
registered on every 10th commit, one to five on every other commit of the
newest 40, and three pending profiles:

* ``first_frame`` (target 1.0 s): the real ``perun-tui`` started in a
  pseudo-terminal of ``--size`` (120x40), from just before the fork until
  the output holds the HEAD row of the history (its sha followed by its
  date, ANSI sequences stripped) -- **the headline**, including interpreter
  start-up, imports, opening the repository, ``status`` and the first
  history chunk.  Also reported: the first byte, the first frame of the main
  screen (its "History" border), the whole history loaded ("10000
  commits"), and the CPU time of the process when the first frame arrived.
  The same in-process (``run_test``, headless: the compositor renders every
  frame, only the write to the terminal is skipped) from constructing the
  app to the first frame that painted a commit row, plus the import time of
  ``perun_tui.app`` in a fresh interpreter.
* ``profiles_pane`` (target 0.1 s): with the history loaded, ``--moves``
  (40) key presses, down then up over the newest commits (every other one
  has profiles), each sent as the terminal driver sends it.  Measured per
  press: until the profiles table holds the newly selected commit's
  profiles (``handled``), and until the first frame after that and after
  the table measured its new rows (``painted``, what the user sees); split
  by commits with and without profiles.
* ``keys_during_run`` (target 0.1 s): ``R`` runs the job matrix for HEAD
  (``sh -c`` jobs with the time collector: four quick ones, so the jobs
  table has rows, then one that lasts minutes); while the last one runs,
  ``--keys`` (30) up/down presses on the jobs table, each measured until the
  table's cursor moved (``handled``) and until the next frame (``painted``).
  Two programs: ``quiet`` (``sleep``) and ``chatty`` (a shell loop printing
  lines as fast as it can, so the runner turns a flood of output into
  events while the keys are pressed).  Escape then cancels the run.

Times are wall clock (``time.perf_counter``) in seconds: median, min, max
and n (latencies also p90 and the share within the target); as in the other
benchmarks the targets apply to the median, but look at max and p90 too (a
slow key press is what the user notices).  CPU time is the process's user +
system time (all its threads).  The machine's load average at start and end
is in ``machine``: the runs share 2 cores with whatever else runs, so
compare medians, and rerun when max is far above median.

Run::

    .venv/bin/python benchmarks/tui.py > tui.json
    .venv/bin/python benchmarks/tui.py --quick            # 1,000 commits, few runs: a smoke test
    .venv/bin/python benchmarks/tui.py --only profiles_pane -n 3 --workdir /tmp/tui-bench

One JSON object goes to stdout, progress notes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import json
import os
import pty
import re
import select
import signal
import statistics
import struct
import sys
import tempfile
import termios
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # gitrepo.fast_linear_history
sys.path.insert(0, str(ROOT / "benchmarks"))

from harness import note, session, venv_bin_with  # noqa: E402
from run import build_history, time_profile_dict, write_pending  # noqa: E402

SCENARIOS = ("first_frame", "profiles_pane", "keys_during_run")

#: Targets from the issue (seconds).
TARGETS = {"first_frame": 1.0, "profiles_pane": 0.1, "keys_during_run": 0.1}

#: profiles on the newest commits: every other one of these gets one to five
NEAR_HEAD = 40

#: the jobs of the run: quick ones first (rows to move the cursor over), the long one last
QUICK_JOBS = 4
PROGRAMS = {
    "quiet": "sleep 600",
    "chatty": "while :; do echo perun benchmark output line; done",
}

_ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1bP[^\x1b]*\x1b\\|\x1b[()][0-9A-Za-z]|\x1b[=>78M]")


def stats(samples: list[float]) -> dict[str, Any]:
    return {
        "median": round(statistics.median(samples), 4),
        "min": round(min(samples), 4),
        "max": round(max(samples), 4),
        "n": len(samples),
    }


def with_target(samples: list[float], target: float) -> dict[str, Any]:
    out = stats(samples)
    ordered = sorted(samples)
    out["p90"] = round(ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], 4)
    out["within_target"] = round(sum(1 for x in samples if x <= target) / len(samples), 3)
    out["ok"] = out["median"] <= target
    return out


# -- the repository -------------------------------------------------------------------

def build_repository(root: Path, commits: int) -> dict[str, Any]:
    """10k commits, a profile on every 10th, one to five on every other of the newest, 3 pending."""
    from perun_core.profile.model import Profile
    from perun_core.storage.repository import PerunRepository

    marker = root / ".perun" / f"bench-tui-{commits}"
    if marker.exists():
        note(f"reusing the repository in {root}")
        return json.loads(marker.read_text())
    started = time.perf_counter()
    note(f"building {commits} commits in {root}")
    shas = build_history(root, commits)
    newest_first = shas[::-1]
    plan: dict[str, int] = {sha: 1 for sha in shas[::10]}
    for i, sha in enumerate(newest_first[:NEAR_HEAD]):
        plan[sha] = (i // 2) % 5 + 1 if i % 2 == 0 else 0
    plan = {sha: count for sha, count in plan.items() if count}
    note(f"registering {sum(plan.values())} profiles on {len(plan)} commits")
    cmds = ("./sort", "./search", "./hash", "./tree", "./graph")
    seed = 0
    with PerunRepository(root) as repo:
        for sha, count in plan.items():
            for k in range(count):
                cmd = cmds[k % len(cmds)]
                profile = Profile.from_dict(time_profile_dict(cmd, None, seed))
                repo.register(sha, profile, f"{cmd[2:]}-[input.txt]-{seed}.perf", 1_700_000_000.0 + seed)
                seed += 1
    write_pending(root, shas[-1], 3)
    info = {
        "commits": commits,
        "registered_profiles": seed,
        "commits_with_profiles": len(plan),
        "pending_profiles": 3,
        "head": shas[-1],
        "newest": newest_first[:NEAR_HEAD + 1],
        "profiles_at": {sha: plan.get(sha, 0) for sha in newest_first[:NEAR_HEAD + 1]},
        "setup_s": round(time.perf_counter() - started, 2),
    }
    marker.write_text(json.dumps(info))
    return info


# -- 1. first frame of the real perun-tui in a pseudo-terminal ----------------------------

def _cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tui_in_pty(argv: list[str], cwd: Path, env: dict[str, str], size: tuple[int, int], head: str,
               commits: int, timeout: float = 60.0) -> dict[str, Any]:
    """Start ``argv`` in a pty, time what appears on it, then quit with ``q``."""
    columns, rows = size
    history_row = re.compile(re.escape(head[:7].encode()) + rb" +\d{4}-\d\d-\d\d")
    main_screen = re.compile(rb"History")
    loaded = re.compile(rb"(?<!\xe2\x80\xa6 )\b" + str(commits).encode() + rb" commits")  # not "loading… N"
    marks: dict[str, float] = {}
    cpu_at_first_frame = None
    raw = bytearray()
    started = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: size the terminal before the program looks at it
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
            os.chdir(cwd)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    deadline = started + timeout
    quit_sent = None
    status = None
    try:
        while True:
            now = time.perf_counter()
            if now > deadline:
                raise SystemExit(f"perun-tui did not show its history within {timeout} s:\n"
                                 f"{_ANSI.sub(b'', bytes(raw))[-2000:].decode(errors='replace')}")
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                seen = time.perf_counter()
                raw += chunk
                marks.setdefault("first_byte", seen - started)
                text = _ANSI.sub(b"", bytes(raw))
                if "main_screen" not in marks and main_screen.search(text):
                    marks["main_screen"] = seen - started
                if "first_frame" not in marks and history_row.search(text):
                    marks["first_frame"] = seen - started
                    cpu_at_first_frame = _cpu_seconds(pid)
                if "history_loaded" not in marks and loaded.search(text):
                    marks["history_loaded"] = seen - started
            if quit_sent is None and "first_frame" in marks and "history_loaded" in marks:
                os.write(fd, b"q")
                quit_sent = time.perf_counter()
            if quit_sent is not None:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
    finally:
        if status is None:
            with contextlib.suppress(ChildProcessError):
                done, status = os.waitpid(pid, os.WNOHANG)
                if not done:
                    os.kill(pid, signal.SIGTERM)
                    _, status = os.waitpid(pid, 0)
        os.close(fd)
    if "first_frame" not in marks:
        raise SystemExit(f"perun-tui exited before showing its history:\n"
                         f"{_ANSI.sub(b'', bytes(raw))[-2000:].decode(errors='replace')}")
    return {**marks, "cpu_at_first_frame": cpu_at_first_frame, "exit_status": status}


def subprocess_seconds(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    import subprocess

    started = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def bench_first_frame(root: Path, env: dict[str, str], venv_bin: Path, info: dict, args: argparse.Namespace) -> dict:
    argv = [str(venv_bin / "perun-tui")]
    env = {**env, "TERM": "xterm-256color", "COLORTERM": "truecolor"}
    for name in ("COLUMNS", "LINES", "TEXTUAL", "TEXTUAL_DRIVER", "TEXTUAL_FPS"):
        env.pop(name, None)
    note(f"first_frame: perun-tui in a {args.size[0]}x{args.size[1]} pty, 1 warm-up + {args.repeat} runs")
    tui_in_pty(argv, root, env, args.size, info["head"], info["commits"])  # bytecode and page cache
    runs = []
    for i in range(args.repeat):
        runs.append(tui_in_pty(argv, root, env, args.size, info["head"], info["commits"]))
        note(f"first_frame: run {i + 1}: {runs[-1]['first_frame']:.3f} s")
    python = str(venv_bin / "python")
    note("first_frame: import time of perun_tui.app in a fresh interpreter")
    imports = [subprocess_seconds([python, "-c", "import perun_tui.app"], env, root) for _ in range(args.repeat)]
    bare = [subprocess_seconds([python, "-c", "pass"], env, root) for _ in range(args.repeat)]
    note("first_frame: in-process, app constructed to first frame with commit rows")
    in_process = asyncio.run(_in_process_first_frames(root, args))
    out = {
        "process_start_to_first_frame": with_target([r["first_frame"] for r in runs], TARGETS["first_frame"]),
        "process_start_to_first_byte": stats([r["first_byte"] for r in runs]),
        "process_start_to_main_screen": stats([r["main_screen"] for r in runs]),
        "process_start_to_history_loaded": stats([r["history_loaded"] for r in runs]),
        "cpu_at_first_frame": stats([r["cpu_at_first_frame"] for r in runs if r["cpu_at_first_frame"] is not None]),
        "import_perun_tui_app": stats(imports),
        "python_pass": stats(bare),
        **in_process,
        "size": list(args.size),
        "target": TARGETS["first_frame"],
        "ok": statistics.median([r["first_frame"] for r in runs]) <= TARGETS["first_frame"],
    }
    return out


# -- in-process measurements (run_test, headless) --------------------------------------------

class Clock:
    """Hooks set on the app's classes for the benchmark: when frames were made and panes filled."""

    def __init__(self) -> None:
        self.frames: list[float] = []
        self.row_painted: float | None = None
        self.first_history_frame: float | None = None
        self.shows: list[tuple[float, str | None]] = []
        self.measured: list[float] = []  # when the profiles table sized its columns


@contextlib.contextmanager
def instrumented(clock: Clock):
    """Patch the app's classes (restored afterwards) to record frames, painted rows and filled panes."""
    from perun_tui.app import PerunApp
    from perun_tui.widgets.history import HistoryView
    from perun_tui.widgets.profiles import ProfilesPane, ProfilesTable

    display, row, show = PerunApp._display, HistoryView._row, ProfilesPane.show
    dimensions = ProfilesTable._update_dimensions

    def timed_dimensions(self, new_rows):
        dimensions(self, new_rows)
        clock.measured.append(time.perf_counter())

    def timed_display(self, screen, renderable):
        display(self, screen, renderable)
        if renderable is not None:
            now = time.perf_counter()
            clock.frames.append(now)
            if clock.first_history_frame is None and clock.row_painted is not None:
                clock.first_history_frame = now

    def timed_row(self, index, width, base):
        if clock.row_painted is None:
            clock.row_painted = time.perf_counter()
        return row(self, index, width, base)

    def timed_show(self, entry, registered, pending):
        show(self, entry, registered, pending)
        clock.shows.append((time.perf_counter(), entry.version.checksum if entry else None))

    PerunApp._display, HistoryView._row, ProfilesPane.show = timed_display, timed_row, timed_show
    ProfilesTable._update_dimensions = timed_dimensions
    try:
        yield
    finally:
        PerunApp._display, HistoryView._row, ProfilesPane.show = display, row, show
        del ProfilesTable._update_dimensions  # back to DataTable's


def first_frame_after(frames: list[float], moment: float) -> float | None:
    for frame in frames:
        if frame >= moment:
            return frame
    return None


async def wait_for(predicate, timeout: float, what: str, step: float = 0.0005) -> float:
    deadline = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        await asyncio.sleep(step)
    return time.perf_counter()


async def _settle(pilot) -> None:
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


async def _in_process_first_frames(root: Path, args: argparse.Namespace) -> dict:
    from perun_tui.app import PerunApp
    from perun_tui.widgets.history import HistoryView

    firsts, loaded, cpu = [], [], []
    for _ in range(args.repeat):
        clock = Clock()
        with instrumented(clock):
            cpu0 = time.process_time()
            started = time.perf_counter()
            app = PerunApp(root)
            async with app.run_test(size=args.size) as pilot:
                await wait_for(lambda: clock.first_history_frame is not None, 60, "the first history frame")
                cpu.append(time.process_time() - cpu0)
                firsts.append(clock.first_history_frame - started)
                view = app.query_one(HistoryView)
                done = await wait_for(lambda: not view.walking, 120, "the whole history", step=0.005)
                loaded.append(done - started)
                await _settle(pilot)
    return {
        "in_process_app_to_first_frame": stats(firsts),
        "in_process_cpu_to_first_frame": stats(cpu),
        "in_process_app_to_history_loaded": stats(loaded),
    }


# -- 2. moving the history selection --------------------------------------------------------

def _send_key(app, key: str) -> None:
    from textual import events

    event = events.Key(key, None)
    event.set_sender(app)
    app._driver.send_message(event)


async def _profiles_pane(root: Path, info: dict, args: argparse.Namespace) -> dict:
    from perun_tui.app import PerunApp
    from perun_tui.widgets.history import HistoryView
    from perun_tui.widgets.profiles import ProfilesTable

    clock = Clock()
    handled: dict[bool, list[float]] = {True: [], False: []}
    painted: dict[bool, list[float]] = {True: [], False: []}
    cpu: list[float] = []
    profiles_at = info["profiles_at"]
    with instrumented(clock):
        app = PerunApp(root)
        async with app.run_test(size=args.size) as pilot:
            view = app.query_one(HistoryView)
            await wait_for(lambda: not view.walking, 120, "the whole history", step=0.01)
            await _settle(pilot)
            view.focus()
            view.cursor = 0
            await _settle(pilot)
            table = app.query_one(ProfilesTable)
            down = min(args.moves // 2, NEAR_HEAD)
            keys = ["down"] * down + ["up"] * (args.moves - down)
            for key in keys:
                target = view.cursor + (1 if key == "down" else -1)
                expected = view.entries[target].version.checksum
                await asyncio.sleep(args.gap)
                cpu0 = time.process_time()
                sent = time.perf_counter()
                _send_key(app, key)
                await wait_for(lambda: table.minor == expected and clock.shows and clock.shows[-1][1] == expected,
                               10, f"the profiles of {expected[:7]}")
                # DataTable sizes its columns for new rows when idle: the frame that counts comes after that
                await wait_for(lambda: not table._require_update_dimensions, 10, "the table's column widths")
                shown = clock.shows[-1][0]
                ready = max([shown, *(t for t in clock.measured if t > sent)])
                await wait_for(lambda: first_frame_after(clock.frames, ready) is not None, 10, "a frame")
                frame = first_frame_after(clock.frames, ready)
                cpu.append(time.process_time() - cpu0)
                has = profiles_at.get(expected, 0) > 0
                if has:
                    # each commit lists its own pending profiles: the scenario's are HEAD's
                    pending = info["pending_profiles"] if expected == info["head"] else 0
                    assert len(table.infos) == profiles_at[expected] + pending, table.infos
                handled[has].append(shown - sent)
                painted[has].append(frame - sent)
    every = handled[True] + handled[False]
    every_painted = painted[True] + painted[False]
    target = TARGETS["profiles_pane"]
    return {
        "painted": with_target(every_painted, target),
        "handled": with_target(every, target),
        "painted_onto_commits_with_profiles": stats(painted[True]),
        "painted_onto_commits_without_profiles": stats(painted[False]),
        "cpu_per_move": stats(cpu),
        "moves": len(every),
        "target": target,
        "ok": statistics.median(every_painted) <= target,
    }


def bench_profiles_pane(root: Path, info: dict, args: argparse.Namespace) -> dict:
    note(f"profiles_pane: {args.moves} moves over the newest commits")
    return asyncio.run(_profiles_pane(root, info, args))


# -- 3. keys while a collector runs ------------------------------------------------------

def set_matrix(root: Path, program: str) -> None:
    from perun_core.config import Config

    config = Config.load(root / ".perun" / "local.yml", kind="local")
    quick = [f"-c 'sleep 0.0{i}'" for i in range(QUICK_JOBS)]
    config.set("cmds", ["sh"])
    config.set("args", [*quick, f"-c '{program}'"])
    config.set("collectors", [{"name": "time"}])
    config.save()


def _running(needle: str) -> bool:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if needle.encode() in (entry / "cmdline").read_bytes():
                    return True
    return False


async def _keys_during_run(root: Path, program: str, args: argparse.Namespace) -> dict:
    from textual.widgets import DataTable

    from perun_tui.app import MainScreen, PerunApp
    from perun_tui.widgets.history import HistoryView
    from perun_tui.screens.run import RunScreen

    clock = Clock()
    handled: list[float] = []
    painted: list[float] = []
    with instrumented(clock):
        app = PerunApp(root)
        async with app.run_test(size=args.size) as pilot:
            view = app.query_one(HistoryView)
            await wait_for(lambda: not view.walking, 120, "the whole history", step=0.01)
            await _settle(pilot)
            await pilot.press("R")
            screen = app.screen
            assert isinstance(screen, RunScreen), screen
            await wait_for(lambda: screen.job == QUICK_JOBS + 1 and _running(program), 60,
                           "the long job", step=0.02)
            table = screen.query_one("#run-jobs", DataTable)
            table.focus()
            await asyncio.sleep(0.5)  # the collector is well into its run
            cpu0, wall0 = time.process_time(), time.perf_counter()
            for i in range(args.keys):
                key = "up" if i % 2 == 0 else "down"
                before = table.cursor_row
                expected = before - 1 if key == "up" else before + 1
                await asyncio.sleep(args.gap)
                sent = time.perf_counter()
                _send_key(app, key)
                moved = await wait_for(lambda: table.cursor_row == expected, 10, f"the cursor on row {expected}")
                await wait_for(lambda: first_frame_after(clock.frames, moved) is not None, 10, "a frame")
                handled.append(moved - sent)
                painted.append(first_frame_after(clock.frames, moved) - sent)
            busy_cpu = time.process_time() - cpu0
            busy_wall = time.perf_counter() - wall0
            still_running = screen.running and _running(program)
            frames = sum(1 for frame in clock.frames if frame >= wall0)
            await pilot.press("escape")
            await wait_for(lambda: not screen.running, 60, "the run to stop", step=0.02)
            await _settle(pilot)
            status = screen.status
            await pilot.press("escape")
            await _settle(pilot)
            assert isinstance(app.screen, MainScreen)
    target = TARGETS["keys_during_run"]
    return {
        "painted": with_target(painted, target),
        "handled": with_target(handled, target),
        "cpu_s_per_wall_s": round(busy_cpu / busy_wall, 3),
        "frames_per_s": round(frames / busy_wall, 1),
        "collector_still_running": still_running,
        "run_status_after_escape": status,
        "program": f"sh -c '{program}'",
        "target": target,
        "ok": statistics.median(painted) <= target,
    }


def bench_keys_during_run(root: Path, args: argparse.Namespace) -> dict:
    out = {}
    local = root / ".perun" / "local.yml"
    jobs = root / ".perun" / "jobs"
    config, pending = local.read_text(), set(jobs.iterdir())
    try:
        for name in args.programs:
            program = PROGRAMS[name]
            note(f"keys_during_run: {args.keys} keys while '{program}' runs")
            set_matrix(root, program)
            out[name] = asyncio.run(_keys_during_run(root, program, args))
            if _running(program):
                raise SystemExit(f"'{program}' is still running after the run was cancelled")
    finally:
        # the quick jobs wrote pending profiles: the other scenarios (and a reused --workdir) must not see them
        local.write_text(config)
        for path in set(jobs.iterdir()) - pending:
            path.unlink()
    out["ok"] = all(result["ok"] for result in out.values() if isinstance(result, dict))
    return out


# -- main -------------------------------------------------------------------------------

def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--repeat", type=int, default=None,
                        help="starts of perun-tui (and of the in-process app) timed (default 7; --quick: 2)")
    parser.add_argument("--commits", type=int, default=None, help="commits in the repository (default 10000; --quick: 1000)")
    parser.add_argument("--moves", type=int, default=None, help="history moves timed (default 40; --quick: 10)")
    parser.add_argument("--keys", type=int, default=None, help="keys timed during each run (default 30; --quick: 6)")
    parser.add_argument("--gap", type=float, default=0.05, help="seconds between two timed key presses (default 0.05)")
    parser.add_argument("--size", type=lambda s: tuple(int(x) for x in s.lower().split("x")), default=(120, 40),
                        help="terminal COLUMNSxROWS (default 120x40)")
    parser.add_argument("--programs", nargs="+", choices=tuple(PROGRAMS), default=list(PROGRAMS),
                        help="profiled programs for keys_during_run (default: all)")
    parser.add_argument("--quick", action="store_true", help="small sizes and few runs: a smoke test, not a benchmark")
    parser.add_argument("--workdir", type=Path,
                        help="build the repository here and keep it; a later run reuses it (default: a temporary directory)")
    parser.add_argument("--only", nargs="+", choices=SCENARIOS, default=list(SCENARIOS),
                        help="scenarios to run (default: all)")
    args = parser.parse_args(argv)
    defaults = {"repeat": (7, 2), "commits": (10_000, 1_000), "moves": (40, 10), "keys": (30, 6)}
    for key, (full, quick) in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, quick if args.quick else full)
    if args.repeat < 1 or args.moves < 2 or args.keys < 2:
        parser.error("--repeat must be at least 1, --moves and --keys at least 2")
    if len(args.size) != 2:
        parser.error("--size is COLUMNSxROWS, e.g. 120x40")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    venv_bin = venv_bin_with("perun-tui")
    with session(args.workdir, "perun-bench-tui-") as run:
        work, env, result = run.work, run.env, run.result
        tmp = work / "tmp"
        tmp.mkdir(exist_ok=True)
        tempfile.tempdir = str(tmp)  # the run's worktrees go here, and go with it
        settings = ("repeat", "commits", "moves", "keys", "gap", "quick")
        result["config"] = {key: getattr(args, key) for key in settings} | {"size": list(args.size), "workdir": str(work)}
        result["targets"] = TARGETS
        result["scenarios"] = {}
        root = work / f"tui-repo-{args.commits}"
        info = build_repository(root, args.commits)
        result["setup"] = {key: info[key] for key in ("commits", "registered_profiles", "commits_with_profiles",
                                                      "pending_profiles", "setup_s")}
        for name in args.only:
            if name == "first_frame":
                result["scenarios"][name] = bench_first_frame(root, env, venv_bin, info, args)
            elif name == "profiles_pane":
                result["scenarios"][name] = bench_profiles_pane(root, info, args)
            elif name == "keys_during_run":
                result["scenarios"][name] = bench_keys_during_run(root, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
