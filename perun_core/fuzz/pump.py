"""Pumping: one character or short unit of an input repeated many times, at a place where a parser decides.

A superlinear cost shows only once the slow part is long: a quadratic scan of
a run of 50 characters costs nothing next to a program's start-up, of 5000 it
costs seconds.  Growing a run a little at a time (the growth rules of
:mod:`.textrules`) needs every step to be measurably slower than the last,
which the start-up's noise hides; pumping goes to a large count at once.

The places are the *sites* of an input: its punctuation, quotes, brackets
and other characters that are not letters or digits (where parsers branch)
and the first letter of each word, spread over the whole input.  At a site the input is pumped in three ways,
the shapes behind most published complexity bugs of text parsers:

* ``in place``: the site's character repeated (``a.....b``: a run inside a word),
* ``cut``: a unit repeated from the site on and the rest of the input dropped
  (an unclosed quote full of backslashes, a structure left half-way),
* ``tail``: the site's character repeated, the rest dropped and one other
  character put after the run (``@@@@...@[``: a near miss at the end of a match).

The units besides the input's own punctuation are :data:`UNITS`: escapes,
quotes, brackets and separators that most text formats give a meaning.
:func:`pump_plan` lists every site's pumpings in a fixed order, each distinct
context before the same one again elsewhere (the search tries them first);
:class:`Pump` is the same as a random mutation rule.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator

from ..params import Param
from .textrules import char_start

__all__ = ["UNITS", "Pump", "pump_count", "pump_plan", "pump_sites"]

#: characters with a meaning in most text formats, most often behind a backtracking match first
UNITS = tuple(c.encode() for c in '\\([{"\'<@/.:;,=&%#!?*+-|~$^)]}> \t\n')
#: the units tried before the input's own: an escape, openings and quotes
FIRST_UNITS = 7
#: most sites of one input the plan visits (spread evenly over it)
MAX_SITES = 24
#: the size a pumped input is aimed at, in bytes (capped by the size limit)
TARGET_SIZE = 4096


def pump_sites(data: bytes, most: int = MAX_SITES) -> list[int]:
    """Byte offsets of the characters of ``data`` that are not letters or digits and of the first character
    of every word (at most ``most``, spread evenly over the input)."""
    text = data.decode("utf-8", "surrogateescape")
    sites = []
    at = 0
    previous = ""
    for char in text:
        width = len(char.encode("utf-8", "surrogateescape"))
        if not char.isalnum() or not previous.isalnum():
            sites.append(at)
        previous = char
        at += width
    if not sites:
        return [0] if data else []
    if len(sites) <= most:
        return sites
    step = len(sites) / most
    return [sites[int(i * step)] for i in range(most)]


def _char_at(data: bytes, at: int) -> bytes:
    end = at + 1
    while end < len(data) and data[end] & 0xC0 == 0x80:
        end += 1
    return data[at:end]


def pump_count(data: bytes, unit: bytes, limit: int) -> int:
    """How many copies of ``unit`` bring ``data`` near :data:`TARGET_SIZE` bytes (twice its size when it is
    larger already) without passing ``limit``."""
    room = min(limit, max(TARGET_SIZE, 2 * len(data))) - len(data)
    return max(2, room // max(len(unit), 1))


def pumped(data: bytes, at: int, unit: bytes, count: int, how: str, tail: bytes = b"") -> bytes:
    """``data`` with ``count`` copies of ``unit`` at ``at`` (see the module's ways: in place, cut, tail)."""
    if how == "in place":
        return data[:at] + unit * count + data[at:]
    return data[:at] + unit * count + tail


def _own_units(data: bytes) -> list[bytes]:
    """The input's own non-alphanumeric characters, in order of appearance."""
    chars = (_char_at(data, at) for at in pump_sites(data, len(data)))
    return list(dict.fromkeys(c for c in chars if not c.decode("utf-8", "surrogateescape").isalnum()))


def _before(data: bytes, at: int) -> bytes:
    """The character before offset ``at`` of ``data``, ``a`` for any letter or digit, empty at the start."""
    char = data[char_start(data, at - 1):at] if at else b""
    return b"a" if char and char.decode("utf-8", "surrogateescape").isalnum() else char


#: quotes and the brackets they close
_QUOTES = frozenset(b"\"'`")
_CLOSING = {ord("("): ord(")"), ord("["): ord("]"), ord("{"): ord("}"), ord("<"): ord(">")}


def _nesting(data: bytes, sites: list[int]) -> dict[int, tuple[int, ...]]:
    """At each site of ``data``: the quotes and brackets open there, innermost last (inside a quote, brackets
    and other quotes do not count; a closing bracket closes the innermost bracket it matches)."""
    wanted = set(sites)
    found: dict[int, tuple[int, ...]] = {}
    opened: list[int] = []
    for at, byte in enumerate(data):
        if at in wanted:
            found[at] = tuple(opened)
        if opened and opened[-1] in _QUOTES:
            if byte == opened[-1]:
                opened.pop()
        elif byte in _QUOTES or byte in _CLOSING:
            opened.append(byte)
        elif byte in _CLOSING.values() and byte in [_CLOSING.get(o) for o in opened]:
            while _CLOSING.get(opened.pop()) != byte:
                pass
    return found


def pump_plan(data: bytes, limit: int) -> Iterator[tuple[tuple[str, bytes], bytes]]:
    """Every site of ``data`` pumped: first in place; then cut and tailed in two rounds, each unit by unit (the
    first :data:`FIRST_UNITS` of :data:`UNITS`, the input's own, the rest).  The first round cuts at one site per
    distinct context (the character before the site, any letter or digit counting as one, with the quotes and
    brackets open there) and tails after every distinct punctuation character; the second cuts at the other
    sites and tails after the words' first characters.  What a parser does at a site depends on what came
    before it, and parsers decide at punctuation: a cut in a context already cut in, or a run of a letter, is
    mostly a decision already tried, so every distinct one meets every unit before any is tried again (a long
    input's many sites held the plan up for hundreds of runs).  Each comes with its kind (way, unit): once one
    of a kind hangs the program, the others mostly would too."""
    sites = pump_sites(data)
    if not sites:
        return
    units = list(dict.fromkeys([*UNITS[:FIRST_UNITS], *_own_units(data), *UNITS]))
    for at in sites:
        char = _char_at(data, at)
        yield ("in place", char), pumped(data, at, char, pump_count(data, char, limit), "in place")
    # the first site of each context; the first site of each character, punctuation in the first round
    nesting = _nesting(data, sites)
    first_cuts = sorted({(_before(data, at), nesting[at]): at for at in reversed(sites)}.values())
    firsts = sorted({_char_at(data, at): at for at in reversed(sites)}.items(), key=lambda first: first[1])
    marks = [(char, at) for char, at in firsts if not char.decode("utf-8", "surrogateescape").isalnum()]
    rounds = ((first_cuts, marks),
              ([at for at in sites if at not in first_cuts], [f for f in firsts if f not in marks]))
    for cut_sites, tailed in rounds:
        for unit in units:
            for at in cut_sites:
                yield ("cut", unit), pumped(data, at, unit, pump_count(data, unit, limit), "cut")
            for char, at in tailed:
                if unit != char:
                    yield ("tail", unit), pumped(data, at, char, pump_count(data, char, limit), "tail", unit)


class Pump:
    """The pumpings of :func:`pump_plan` drawn at random, with counts spread on a log scale."""

    name = "pump"
    summary = ("Repeat a character or unit hundreds to thousands of times at a punctuation mark, in place or "
               "cutting the rest (with one character after the run): superlinear costs show at large counts.")
    kind = "text"
    wants_dictionary = True
    params = (Param("times", "int", TARGET_SIZE, "Most copies made at once.", minimum=2, maximum=1_000_000),)

    def mutate(self, data: bytes, rng: random.Random, params: dict) -> bytes | None:
        sites = pump_sites(data, len(data))
        if not sites:
            return None
        at = rng.choice(sites)
        char = _char_at(data, at)
        tokens = [t for t in params.get("dictionary") or () if len(t) <= 4]
        count = max(2, int(2 ** rng.uniform(1, math.log2(max(params["times"], 4)))))
        how = rng.choice(("in place", "cut", "tail"))
        if how == "in place":
            return pumped(data, at, char, count, how)
        other = rng.choice([*UNITS, *tokens])
        if how == "cut":
            return pumped(data, char_start(data, at), other, count, how)
        return pumped(data, at, char, count, how, other)
