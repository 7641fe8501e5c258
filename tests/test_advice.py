"""Advice naming a setting: the command line's words stay, the TUI's replace them whole."""

from __future__ import annotations

from perun_core.advice import CLOCK_CPU, FOLDED, REPEAT, REPEAT_N, in_words_of
from perun_core.check.noise import ADVICE


def test_the_command_line_keeps_its_words_and_the_tui_gets_its_own():
    assert in_words_of(ADVICE, "cli") == ADVICE and REPEAT.cli in ADVICE and CLOCK_CPU.cli in ADVICE
    shown = in_words_of(ADVICE, "tui")
    assert CLOCK_CPU.tui in shown and REPEAT.tui in shown and "--clock" not in shown and "(-r)" not in shown


def test_only_whole_names_are_replaced_and_the_longer_first():
    assert in_words_of("rm -rf; --clock cpus", "tui") == "rm -rf; --clock cpus"
    assert in_words_of("repeat more (-r N)", "tui") == f"repeat more ({REPEAT_N.tui})"
    assert in_words_of(f"see {FOLDED.cli})", "tui") == f"see {FOLDED.tui})"
