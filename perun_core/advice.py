"""The settings that advice names, each in the words of every front end.

A note may advise a setting: a noisy run ``use --clock cpu with pytrace``,
a flame graph that leaves stacks out ``see --format folded``.  The sentence
is written once, in the core, with the command line's name of the setting
(:attr:`Setting.cli`); a front end that is not the command line shows it
through :func:`in_words_of`, which puts its own name of each setting (its
key or form field) in place of the command line's.  ``tui-dialog`` is the
terminal UI's explain dialog: a graph drawn below the ranked functions,
with no table or height of its own to point to.  So text stored by
earlier runs reads right in either front end too.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CLOCK_CPU", "FOLDED", "HEIGHT", "REPEAT", "REPEAT_N", "SETTINGS", "Setting", "in_words_of"]


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting advice names: ``cli`` on the command line, ``tui`` in the terminal UI, ``dialog`` in its
    explain dialog (``tui`` when not given)."""

    cli: str
    tui: str
    dialog: str = ""

    def words(self, front: str) -> str:
        if front == "tui-dialog":
            return self.dialog or self.tui
        return self.tui if front == "tui" else self.cli


#: pytrace timing the calls by the CPU time of their thread
CLOCK_CPU = Setting("--clock cpu", "clock: cpu (e, the job matrix)")
#: a flame graph's stacks, all of them, as text
FOLDED = Setting("--format folded", "the table, t", "the ranked functions above")
#: a terminal flame graph cut at its height: the TUI draws as many levels as its view has rows
HEIGHT = Setting("raise --height", "a taller terminal draws more", "see the ranked functions above")
#: more repetitions of the time collector
REPEAT_N = Setting("-r N", "e: the time collector's repeat")
REPEAT = Setting("-r", "e: the time collector's repeat")

#: the longer first, so that ``-r N`` is not taken for ``-r``
SETTINGS = (CLOCK_CPU, FOLDED, HEIGHT, REPEAT_N, REPEAT)


def in_words_of(text: str, front: str) -> str:
    """``text`` with every setting it names in the words of ``front`` (``cli`` leaves it as it is, ``tui``,
    ``tui-dialog``)."""
    if front == "cli":
        return text
    for setting in SETTINGS:
        text = _replace_whole(text, setting.cli, setting.words(front))
    return text


def _replace_whole(text: str, old: str, new: str) -> str:
    """``old`` replaced where it stands as a whole (``-r`` but not ``-rf``, ``--clock cpu`` but not ``--clock cpus``)."""
    out, start = [], 0
    while (found := text.find(old, start)) >= 0:
        end = found + len(old)
        before_ok = found == 0 or not (text[found - 1].isalnum() or text[found - 1] in "-_")
        after_ok = end == len(text) or not (text[end].isalnum() or text[end] in "-_")
        out.append(text[start:found])
        out.append(new if before_ok and after_ok else old)
        start = end
    out.append(text[start:])
    return "".join(out)
