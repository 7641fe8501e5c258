"""A walk over every screen of perun-tui in a real terminal (tmux) at 40x12, 80x24 and 120x40.

``perun-tui`` runs in a detached tmux session on a private server (its own
socket), on a copy of the 40-commit demo repository.  The walk sends keys as
a user would and reads the screen with ``tmux capture-pane -p``; it waits for
each screen's expected text (polling, with a generous overall timeout), never
for a fixed time, so it passes on a busy machine.  On every screen it asserts:

- no text outside its border: every rounded box (``╭╮`` above, ``╰╯`` below)
  has its vertical borders in the same two columns on every row, and nothing
  but blanks is drawn right of the rightmost box on a row it spans;
- no cut key hints: every hint in the footer is a key and a whole
  description of some binding of the app;
- the expected content.

Needs the tmux binary (.ci/run installs it); skipped with the reason if it
is missing.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.tools("tmux")

SIZES = [pytest.param((40, 12), id="40x12"), pytest.param((80, 24), id="80x24"),
         pytest.param((120, 40), id="120x40")]

#: when waiting for a screen counts as hung (a loaded CI worker may get a tenth of a core)
TIMEOUT = 600.0

VERTICAL = set("│┃┤├")


def binding_descriptions() -> set[str]:
    """Every description a key hint can show: the bindings of the app, its screens and widgets."""
    import importlib
    import inspect
    import pkgutil

    import perun_tui
    from textual.binding import Binding
    from textual.dom import DOMNode

    found = {"palette"}
    for module in pkgutil.walk_packages(perun_tui.__path__, "perun_tui."):
        if module.name.endswith("__main__"):
            continue
        loaded = importlib.import_module(module.name)
        for _name, value in inspect.getmembers(loaded, inspect.isclass):
            if issubclass(value, DOMNode):
                for klass in value.__mro__:
                    for binding in getattr(klass, "BINDINGS", []) or []:
                        if isinstance(binding, Binding) and binding.description:
                            found.add(binding.description)
                        group = getattr(binding, "group", None)  # keys shown together: "s b w f m View"
                        if group is not None and group.description:
                            found.add(group.description)
    return found


class Terminal:
    """perun-tui in a tmux session of a private tmux server."""

    def __init__(self, root: Path, size: tuple[int, int], env: dict[str, str]) -> None:
        # a short path of its own: a socket's path is limited to about 100 bytes
        self.directory = tempfile.mkdtemp(prefix="perun-walk-")
        self.socket = os.path.join(self.directory, "tmux.sock")
        self.size = size
        command = " ".join(shlex.quote(part) for part in
                           # COLUMNS and LINES (pytest may set them) would pin the size a resize changes
                           ["env", "-u", "COLUMNS", "-u", "LINES", *(f"{k}={v}" for k, v in env.items()), sys.executable, "-m", "perun_tui",
                            "--repo", str(root)])
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", "walk", "-x", str(size[0]), "-y", str(size[1]),
                  command)
        self.tmux("set-option", "-t", "walk", "remain-on-exit", "on")

    def tmux(self, *args: str) -> str:
        result = subprocess.run(["tmux", "-S", self.socket, *args], capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {result.stderr.strip()}")
        return result.stdout

    def close(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True, timeout=60)
        shutil.rmtree(self.directory, ignore_errors=True)

    def screen(self, escapes: bool = False) -> str:
        return self.tmux("capture-pane", "-p", *(["-e"] if escapes else []), "-t", "walk")

    def keys(self, *keys: str) -> None:
        for key in keys:
            self.tmux("send-keys", "-t", "walk", key)

    def resize(self, width: int, height: int) -> None:
        self.size = (width, height)
        self.tmux("resize-window", "-t", "walk", "-x", str(width), "-y", str(height))

    def wait_for(self, *texts: str, gone: tuple[str, ...] = (), quiet: bool = True,
                 check: Callable[[str], bool] | None = None, wrong: tuple[str, ...] = ()) -> str:
        """The screen once it shows every one of ``texts`` and none of ``gone`` (and, with ``quiet``, no toast);
        a failure at once if it shows one of ``wrong`` (a step gone astray, which would not end soon)."""
        deadline = time.monotonic() + TIMEOUT
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            astray = [text for text in wrong if text in screen]
            assert not astray, f"{astray} on the screen, waiting for {texts}:\n{screen}"
            if (all(text in screen for text in texts) and not any(text in screen for text in gone)
                    and (not quiet or "▌" not in screen) and (check is None or check(screen))):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"waited {TIMEOUT:.0f} s for {texts} (not {gone}); the screen shows:\n{screen}")


def box_problems(screen: str, width: int) -> list[str]:
    """Rows where a rounded box's borders are out of line, or text stands right of the last box."""
    rows = [line.ljust(width) for line in screen.split("\n")]
    problems = []
    rightmost = [-1] * len(rows)
    for top, row in enumerate(rows):
        for left, char in enumerate(row):
            if char != "╭":
                continue
            right = row.find("╮", left + 1)
            if right < 0:
                problems.append(f"row {top}: ╭ at column {left} without ╮ on its right")
                continue
            bottom = next((r for r in range(top + 1, len(rows)) if rows[r][left] == "╰"), None)
            if bottom is None:
                problems.append(f"row {top}: the box at columns {left}-{right} has no bottom edge")
                continue
            if rows[bottom][right] != "╯":
                problems.append(f"row {bottom}: the box at columns {left}-{right} ends with "
                                f"{rows[bottom][right]!r} in column {right}, not ╯")
            for r in range(top, bottom + 1):
                rightmost[r] = max(rightmost[r], right)
                if top < r < bottom and (rows[r][left] not in VERTICAL or rows[r][right] not in VERTICAL):
                    problems.append(f"row {r}: the box at columns {left}-{right} shows "
                                    f"{rows[r][left]!r} and {rows[r][right]!r} where its borders belong")
    for r, right in enumerate(rightmost):
        if right >= 0 and rows[r][right + 1:].strip():
            problems.append(f"row {r}: {rows[r][right + 1:].strip()!r} right of the border in column {right}")
    return problems


def footer_problems(screen: str, descriptions: set[str]) -> list[str]:
    """Key hints of the footer (the last row) that are not whole: key, space, a known description."""
    footer = screen.rstrip("\n").split("\n")[-1]
    hints, _bar, palette = footer.partition("▏")
    problems = []
    for hint in [h.strip() for h in re.split(r" {2,}", hints) if h.strip()] + ([palette.strip()] if palette else []):
        # one key ("q Quit") or a group of keys ("s b w f m View") before a whole description
        whole = any(hint.endswith(" " + known) and hint[:-len(known)].strip() for known in descriptions)
        if not whole:
            problems.append(f"footer hint {hint!r} is cut (or unknown): {footer!r}")
    return problems


class Walk:
    """Assertions over the screens visited, collected so one run names every problem."""

    def __init__(self, terminal: Terminal) -> None:
        self.terminal = terminal
        self.descriptions = binding_descriptions()
        self.problems: list[str] = []
        self.visited: list[str] = []

    def see(self, name: str, *texts: str, footer: bool = True, **options) -> str:
        if footer:  # the footer is drawn once its keys are known: its palette key shows it is there
            options["check"] = lambda screen, check=options.get("check"): (
                "▏" in screen.rstrip("\n").split("\n")[-1] and (check is None or check(screen)))
        screen = self.terminal.wait_for(*texts, **options)
        found = self.problems_of(screen, footer)
        # a frame drawn in the middle of a relayout (just after a resize, on a busy machine) may show
        # problems the screen does not settle on: then the screen once two captures a quarter of a
        # second apart agree is the one judged (a screen without problems needs no such wait)
        deadline = time.monotonic() + TIMEOUT
        while found and time.monotonic() < deadline:
            time.sleep(0.25)
            again = self.terminal.wait_for(*texts, **options)
            if again == screen:
                break
            screen = again
            found = self.problems_of(screen, footer)
        self.visited.append(name)
        self.problems += [f"{name} at {self.terminal.size[0]}x{self.terminal.size[1]}: {p}" for p in found]
        if found:
            self.problems.append(screen)
        return screen

    def problems_of(self, screen: str, footer: bool) -> list[str]:
        found = box_problems(screen, self.terminal.size[0])
        if footer:
            found += footer_problems(screen, self.descriptions)
        return found


@pytest.fixture
def terminal_env(tmp_path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home), "PERUN_CONFIG_DIR": str(home / "perun-config"), "TZ": "UTC",
            "TERM": "xterm-256color", "COLORTERM": "truecolor", "PATH": os.environ.get("PATH", "")}


@pytest.fixture(scope="module")
def walk_template(demo_template, tmp_path_factory) -> Path:
    """The demo with a cheap job matrix and a stored explanation of its slowdown, made once for the three walks."""
    from .helpers import set_matrix, store_demo_explanation

    root = tmp_path_factory.mktemp("walk-template") / "sll"
    shutil.copytree(demo_template, root, symlinks=True)
    set_matrix(root, cmds=["true"], collectors=[{"name": "time", "params": {"repeat": 1, "warmup": 0}}])
    home = tmp_path_factory.mktemp("walk-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.setenv("PERUN_CONFIG_DIR", str(home / "perun-config"))
        store_demo_explanation(root)
    return root


@pytest.mark.parametrize("size", SIZES)
def test_every_screen_fits_its_borders_and_shows_whole_key_hints(walk_template, tmp_path, terminal_env, size):
    root = tmp_path / "sll"
    shutil.copytree(walk_template, root, symlinks=True)  # the run and the bisect add to it
    terminal = Terminal(root, size, terminal_env)
    walk = Walk(terminal)
    try:
        keys = terminal.keys
        walk.see("main", "History of main", "Profiles at", "commits ─", "registered")
        keys("/")
        terminal.wait_for("search sha", quiet=False)
        keys(*"plain", "Enter")
        walk.see("search", "Profiles at cba88d3")  # the commit that replaced the hash index by a plain scan
        keys("h")
        terminal.wait_for("Profiles at 6c8442a", quiet=False)
        keys("2")  # the focus on HEAD's profiles
        walk.see("profiles", "⏎ Details")
        keys("Down", "Enter")
        walk.see("details", "esc to close", "command", footer=False)
        keys("Escape")
        walk.see("main again", "Profiles at", gone=("esc to close",))
        keys("p")  # the cursor is on 1@i, HEAD's mixed profile
        walk.see("plot: scatter", "Plot ·", "1@i mixed", "esc Back")
        keys("b")
        walk.see("plot: bars", "Plot ·", "amount", "┤", quiet=False)
        keys("Escape")
        walk.see("main after the plot", "Profiles at", gone=("Plot ·",))
        keys("Up", "p")
        walk.see("plot: a time profile", "Plot ·", "0@i time", "esc Back")
        keys("Escape")
        walk.see("main after the bars", "Profiles at", gone=("Plot ·",))
        # a key reaches the widget focused when it arrives: wait for the footer of the new focus first
        keys("1")
        terminal.wait_for("h HEAD", quiet=False)
        keys("Down", "Down")
        terminal.wait_for("Profiles at 79b34b5", quiet=False)
        keys("2")
        terminal.wait_for("⏎ Details", quiet=False)
        keys("Down")
        keys("p")
        walk.see("plot: heap map", "Plot ·", "1@i memory", quiet=False)
        keys("f")
        walk.see("plot: flame graph", "Plot ·", "sll_insert", quiet=False)
        keys("Escape")
        walk.see("main after the flame graph", "Profiles at", gone=("Plot ·",))
        keys("h", "e")
        walk.see("matrix editor", "Job matrix", "Commands", "^s Save")
        keys("Escape")
        walk.see("main after the editor", "Profiles at", gone=("Job matrix",))
        keys("c")
        walk.see("check", "Degradation check", "Check commit")
        keys("a")
        walk.see("check: all", "degradations", "Degradation", gone=("running…",))
        keys("f", "f")
        # at 40 columns the result gives up width for the delta: "- Degrad…"
        walk.see("check: degradations", "- Degrad",
                 check=lambda screen: "Optimization" not in screen and "NoChange" not in screen)
        keys("Enter")
        walk.see("compare", "esc Back", gone=("Degradation check",))
        keys("Escape")
        walk.see("check after compare", "Degradation check", quiet=False)
        # the second degradation, the slowdown's real time: its explanation is stored (nothing is collected)
        keys("Down", "x")
        walk.see("explain", "Why?", "explained by", footer=False, wrong=("collecting",))
        keys("Escape")
        walk.see("check after explain", "Degradation check", gone=("Why?",), quiet=False)
        keys("Escape")
        walk.see("main after the check", "Profiles at", gone=("Degradation check",))
        keys("2")
        terminal.wait_for("⏎ Details", quiet=False)
        keys("m", "Down", "d")
        walk.see("difference", "Table", "Bars", "esc Back", gone=("Profiles at",))
        keys("Escape")
        walk.see("main after the difference", "Profiles at", gone=("Bars",))
        keys("R")
        walk.see("run", "Run ·", "done in", "esc Close", gone=("running",))
        keys("Escape")
        walk.see("main after the run", "Profiles at", gone=("Run ·",))
        keys("1")
        terminal.wait_for("h HEAD", quiet=False)
        keys("h", "Space", "Down", "Down", "Down", "Down", "Space")  # HEAD and fa1eeab marked (space moves down)
        terminal.wait_for("Profiles at 6a4f088", quiet=False)
        keys("C-p")
        terminal.wait_for("Search for commands", quiet=False)
        keys(*"bisect: start")
        terminal.wait_for("bisect: start", quiet=False)
        keys("Enter")
        walk.see("bisect", "Bisect ·", "degraded", "esc Close", quiet=False)  # ended: esc closes it
        keys("Escape")
        walk.see("main after the bisect", "Profiles at", gone=("Bisect ·",))
        keys("C-p")
        terminal.wait_for("Search for commands", quiet=False)
        keys(*"fuzz: start")
        terminal.wait_for("fuzz: start", quiet=False)
        keys("Enter")
        walk.see("fuzz", "Fuzz", "cmd", "esc", quiet=False)
        keys("Escape")
        walk.see("main after fuzz", "Profiles at", gone=("Fuzz",))
        keys("F1")
        walk.see("help", "Keys", "esc to close", footer=False)
        keys("Escape")
        walk.see("main after help", "Profiles at", gone=("esc to close",))
        width, height = size
        terminal.resize(36, 10)
        walk.see("too small", "too small", "40x12", footer=False)
        terminal.resize(width, height)
        walk.see("grown again", "Profiles at", gone=("too small",))
        keys("q")
        deadline = time.monotonic() + TIMEOUT
        while terminal.tmux("display", "-p", "-t", "walk", "#{pane_dead}").strip() != "1":
            assert time.monotonic() < deadline, f"q did not end perun-tui:\n{terminal.screen()}"
            time.sleep(0.1)
    finally:
        terminal.close()
    assert not walk.problems, "\n".join(walk.problems)
    assert len(walk.visited) >= 24


@pytest.mark.parametrize("variable", ["NO_COLOR=1"])
def test_no_colour_escapes_under_no_color(demo_repo, terminal_env, variable):
    """With NO_COLOR only default colours are used; bold and reverse stay (TERM=dumb: test_terminal_modes)."""
    name, _eq, value = variable.partition("=")

    def colours(env: dict[str, str]) -> set[str]:
        terminal = Terminal(demo_repo, (80, 24), env)
        try:
            terminal.wait_for("Profiles at", "registered")
            screen = terminal.screen(escapes=True)
        finally:
            terminal.close()
        # SGR parameters that pick a colour: 30-37, 38;..., 40-47, 48;..., 90-97, 100-107
        found = set()
        for params in re.findall(r"\x1b\[([0-9;:]*)m", screen):
            parts = params.replace(":", ";").split(";")
            index = 0
            while index < len(parts):
                part = parts[index]
                if part in ("38", "48"):
                    found.add(";".join(parts[index:index + (5 if parts[index + 1:index + 2] == ["2"] else 3)]))
                    index += 5 if parts[index + 1:index + 2] == ["2"] else 3
                    continue
                if part.isdigit() and (30 <= int(part) <= 37 or 40 <= int(part) <= 47 or 90 <= int(part) <= 107):
                    found.add(part)
                index += 1
        return found

    with_colour = colours(dict(terminal_env))
    assert with_colour, "the walk's terminal shows no colour at all: the comparison below would prove nothing"
    plain = colours({**terminal_env, name: value})
    assert plain == set(), f"{variable}: colour escapes {sorted(plain)[:10]}"
