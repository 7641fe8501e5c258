"""perun-tui on terminals that cannot draw it, and its low-bandwidth mode, as the terminal sees them.

The app runs as a subprocess with its standard output on a pseudo-terminal
(or a pipe); the tests read what it writes there and wait for expected
output, never for a fixed time.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perun_tui.driver import StyleCompactor

#: how long the app may take to draw its first frame on a busy machine
TIMEOUT = 600.0  # a hang guard: a loaded CI worker may get a tenth of a core
ANY_MOTION = b"\x1b[?1003h"
BUTTONS = b"\x1b[?1000h"
_CSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]")


def _environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "LINES", "PERUN_LOW_BANDWIDTH")}
    env["TERM"] = "xterm-256color"
    env.update(extra)
    return env


class OnTerminal:
    """``perun-tui`` on a pseudo-terminal of 80x24 (textual draws on standard error)."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        self.process = subprocess.Popen([sys.executable, "-m", "perun_tui", *args], stdin=slave, stdout=slave,
                                        stderr=slave, env=env, start_new_session=True)
        os.close(slave)
        self.master = master
        self.output = b""

    def read_until(self, predicate, timeout: float = TIMEOUT) -> bytes:
        deadline = time.monotonic() + timeout
        while not predicate(self.output):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; the terminal got {self.output[-2000:]!r}")
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the app ended: the other side of the pty is closed
                    chunk = b""
                if not chunk and self.process.poll() is not None:
                    break
                self.output += chunk
        return self.output

    def finish(self, quit: bool = True) -> int:
        """Quit (``q``, unless told not to) and wait for the end; the exit status."""
        if quit and self.process.poll() is None:
            os.write(self.master, b"q")
        try:
            self.read_until(lambda _out: self.process.poll() is not None, timeout=TIMEOUT)
        finally:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait(timeout=TIMEOUT)
            os.close(self.master)
        return self.process.returncode


def _first_frame(output: bytes) -> bool:
    return b"Profiles" in _CSI.sub(b"", output)


def test_a_dumb_terminal_gets_one_line_pointing_to_perun_core(demo_repo):
    terminal = OnTerminal(["--repo", str(demo_repo)], _environment(TERM="dumb"))
    assert terminal.finish(quit=False) == 1  # it ends by itself
    err = terminal.output.decode().replace("\r\n", "\n")
    assert err.count("\n") == 1 and err.startswith("error: perun-tui cannot draw here (TERM=dumb); use perun-core")
    # nothing drawn: no alternate screen, no box drawing
    assert b"\x1b[?1049h" not in terminal.output and "╭".encode() not in terminal.output


def test_no_terminal_on_stdout_gets_the_same_line(demo_repo):
    done = subprocess.run([sys.executable, "-m", "perun_tui", "--repo", str(demo_repo)], capture_output=True,
                          text=True, env=_environment(), stdin=subprocess.DEVNULL, timeout=TIMEOUT)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("error: perun-tui cannot draw here (standard output is not a terminal)")
    assert "perun-core" in done.stderr


def test_a_bad_repository_is_still_named_first(tmp_path):
    # the repository's error says more than the terminal's
    done = subprocess.run([sys.executable, "-m", "perun_tui", "--repo", str(tmp_path)], capture_output=True,
                          text=True, env=_environment(), stdin=subprocess.DEVNULL, timeout=TIMEOUT)
    assert done.returncode == 1 and done.stderr.startswith("error: not a perun repository")


@pytest.mark.parametrize("how", ["default", "flag", "environment"])
def test_the_low_bandwidth_mode_turns_mouse_motion_tracking_off(demo_repo, how):
    args, env = ["--repo", str(demo_repo)], _environment()
    if how == "flag":
        args.append("--low-bandwidth")
    elif how == "environment":
        env["PERUN_LOW_BANDWIDTH"] = "1"
    terminal = OnTerminal(args, env)
    try:
        output = terminal.read_until(_first_frame)
    finally:
        code = terminal.finish()
    assert code == 0, terminal.output[-2000:]
    # clicks and the wheel stay on in every mode; motion without a button only by default
    assert BUTTONS in output
    assert (ANY_MOTION in output) is (how == "default")


def test_an_off_value_of_the_environment_variable_leaves_the_mode_off():
    from perun_tui.cli import low_bandwidth_environment

    assert low_bandwidth_environment({"PERUN_LOW_BANDWIDTH": "1"})
    assert low_bandwidth_environment({"PERUN_LOW_BANDWIDTH": "yes"})
    for off in ("", "0", "false", "No", "off"):
        assert not low_bandwidth_environment({"PERUN_LOW_BANDWIDTH": off})
    assert not low_bandwidth_environment({})


# -- the style compactor -------------------------------------------------------------------

def painted(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """What a terminal shows: each printed character and each erase, with the style in effect for it."""
    style: tuple[str, ...] = ()
    out = []
    position = 0
    for match in re.finditer(r"\x1b\[([0-9;?]*)([A-Za-z])", text):
        out += [(char, style) for char in text[position:match.start()]]
        position = match.end()
        params, final = match.groups()
        if final == "m":
            for part in params.split(";") if params else ["0"]:
                style = () if part in ("", "0") else (*style, part)
        elif final != "H":
            out.append((match.group(0), style))  # an erase (or anything else) may paint with the style
    out += [(char, style) for char in text[position:]]
    return out


SAMPLE = ("\x1b[3;2H\x1b[1;38;5;231;48;5;234m  commit \x1b[0m\x1b[3;79H\x1b[7;38;5;23m \x1b[0m\x1b[3;80H\r\n"
          "\x1b[4;2H\x1b[38;5;253;48;5;234m  \x1b[0m\x1b[38;5;222;48;5;234mabc\x1b[0m\x1b[38;5;253;48;5;234m \x1b[0m"
          "\x1b[38;5;253;48;5;234mPrepare\x1b[0m\x1b[5;1H\x1b[38;5;253;48;5;234m\x1b[K\x1b[0m")


def test_the_compactor_sends_less_and_paints_the_same():
    compact = StyleCompactor()
    shorter = compact(SAMPLE)
    assert len(shorter) < len(SAMPLE) * 0.8
    assert painted(shorter) == painted(SAMPLE)
    # the same style again after a reset is not sent again
    assert shorter.count("38;5;253;48;5;234") < SAMPLE.count("38;5;253;48;5;234")


TOKENS = st.one_of(
    st.sampled_from(["\x1b[0m", "\x1b[m", "\x1b[1m", "\x1b[38;5;1m", "\x1b[38;5;2;48;5;3m", "\x1b[7m",
                     "\x1b[2;5H", "\x1b[K", "\x1b[?25l", "\r\n", "\x1b(B", "\x1b[2 q"]),
    st.text(alphabet="ab ", min_size=1, max_size=3),
)


@settings(deadline=None)  # a loaded machine must not fail it by the clock
@given(st.lists(st.lists(TOKENS, max_size=12).map("".join), min_size=1, max_size=4))
def test_the_compactor_never_changes_what_is_painted(writes):
    """Over any run of writes the terminal paints every character and erase in the same style."""
    compact = StyleCompactor()
    assert painted("".join(compact(w) for w in writes)) == painted("".join(writes))


async def test_the_low_bandwidth_app_redraws_less_and_plots_without_colour(demo_repo):
    import textual.screen

    from perun_tui.app import LOW_BANDWIDTH_FPS, PerunApp
    from perun_tui.widgets.plot import ChartView

    from .helpers import select_profile, settle

    before = textual.screen.UPDATE_PERIOD
    app = PerunApp(demo_repo, low_bandwidth=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.animation_level == "none"  # scrolls jump instead of sliding through every frame
        assert textual.screen.UPDATE_PERIOD == pytest.approx(1 / LOW_BANDWIDTH_FPS)
        await select_profile(pilot, "1@i")
        await pilot.press("p")
        await settle(pilot)
        chart = app.screen.query_one(ChartView)
        assert chart.picture.plain and not any(span.style for span in chart.picture.spans)
        markers = re.findall(r"[│┤] (\S)\1 \S", chart.picture.plain)
        assert len(markers) == 3 and len(set(markers)) == 3  # the series still differ, by shape
    assert textual.screen.UPDATE_PERIOD == before  # given back when the app ends


_PROBE = """
import sys, types
from perun_tui import cli

class Probe:
    '''stands for the app: reports the frame rate textual loaded with, instead of drawing'''
    return_code = 0

    def __init__(self, **options):
        pass

    def run(self):
        import textual.constants, textual.screen
        print(textual.constants.MAX_FPS, textual.screen.UPDATE_PERIOD)

cli.cannot_draw = lambda *args, **kwargs: None  # no terminal here; the app is not drawn anyway
sys.modules["perun_tui.app"] = types.SimpleNamespace(PerunApp=Probe)
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.parametrize(("argv", "environ", "fps"), [
    (["--low-bandwidth"], {}, "10"),
    ([], {"PERUN_LOW_BANDWIDTH": "1"}, "10"),
    (["--low-bandwidth"], {"TEXTUAL_FPS": "4"}, "4"),  # a lower rate asked for stays
    ([], {}, "60"),
])
def test_perun_tui_gives_textual_its_frame_rate_before_textual_loads(demo_repo, argv, environ, fps):
    """The supported way: TEXTUAL_FPS in the environment, read by textual when perun-tui first imports it."""
    env = {k: v for k, v in os.environ.items() if k not in ("TEXTUAL_FPS", "PERUN_LOW_BANDWIDTH")} | environ
    shown = subprocess.run([sys.executable, "-c", _PROBE, *argv, str(demo_repo)], env=env, capture_output=True,
                           text=True, timeout=600)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split() == [fps, repr(1 / int(fps))]


def test_a_textual_without_the_frame_period_it_knows_fails_loudly(monkeypatch):
    """An app built after textual loaded changes textual's frame period itself: only if it has the expected shape."""
    import textual.screen

    from perun_tui.app import cap_loaded_frame_rate

    monkeypatch.setattr(textual.screen, "UPDATE_PERIOD", 1 / 30)  # not 1 / TEXTUAL_FPS: textual changed
    with pytest.raises(RuntimeError, match="UPDATE_PERIOD"):
        cap_loaded_frame_rate(10)
