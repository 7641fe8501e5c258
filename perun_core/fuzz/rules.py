"""Mutation rules of the performance fuzzer, one registry of them.

A rule has a ``name``, a one-line ``summary``, ``params`` (a sequence of
:class:`~perun_core.params.Param`, its only declaration), ``kind`` ("text"
or "bytes": the inputs it is meant for) and ``mutate(data, rng, params)``
returning the mutated bytes, or None when it does not apply to ``data``
(a line rule on an empty input, say).  Rules work on bytes; text rules see
lines split at ``\\n`` and words split at runs of whitespace, and cut only at
the start of a code point, so valid UTF-8 stays valid.  The growth rules
(:mod:`.textrules`) and the pumping (:mod:`.pump`) are registered here too.

The text rules follow the paper's rules inspired by known performance
issues (double a line, repeat a word on a line, sort the words or numbers of
a line, prepend whitespace) plus the usual text edits; the byte rules are a
few of the classic binary ones.  Other rules are plain objects of the same
shape, added with :func:`register_rule`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from ..errors import InvalidParameter, UnitError
from ..params import Param, convert_params
from ..registry import Registry
from .textrules import TEXT_RULES, char_start

__all__ = ["RULE_KINDS", "RuleChoice", "parse_rule_specs", "register_rule", "rules"]

RULE_KINDS = ("text", "bytes")

_WORD = re.compile(rb"\S+")
_NUMBER = re.compile(rb"-?\d+")
#: longest run of digits grow-number multiplies
MAX_NUMBER_DIGITS = 64
_SEPARATORS = (b",", b";", b":", b".", b" ", b"\t", b"/", b"|", b"-", b"\n")


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _pick_line(data: bytes, rng: random.Random) -> tuple[list[bytes], int] | None:
    lines = _lines(data)
    candidates = [i for i, line in enumerate(lines) if line]
    if not candidates:
        return None
    return lines, rng.choice(candidates)


class _Rule:
    name = ""
    summary = ""
    kind = "text"
    params: tuple[Param, ...] = ()

    def mutate(self, data: bytes, rng: random.Random, params: dict[str, Any]) -> bytes | None:  # pragma: no cover
        raise NotImplementedError


class _LineRule(_Rule):
    """A rule that rewrites one non-empty line, picked at random: ``edit`` gives the lines that replace it
    (several to insert copies), or None when the line does not suit the rule."""

    def mutate(self, data, rng, params):
        picked = _pick_line(data, rng)
        if picked is None:
            return None
        lines, i = picked
        replacement = self.edit(lines[i], rng, params)
        if replacement is None:
            return None
        lines[i:i + 1] = replacement
        return b"\n".join(lines)

    def edit(self, line: bytes, rng: random.Random, params: dict[str, Any]) -> list[bytes] | None:  # pragma: no cover
        raise NotImplementedError


# -- the paper's rules -----------------------------------------------------------------------

class DoubleLine(_LineRule):
    name = "double-line"
    summary = "Double the size of a line (its content twice); long lines slow down editors and parsers."

    def edit(self, line, rng, params):
        return [line * 2]


class RepeatWord(_LineRule):
    name = "repeat-word"
    summary = "Repeat a random word of a line several times (hash tables, counters)."
    params = (Param("times", "int", 8, "Most copies added at once.", minimum=1, maximum=10_000),)

    def edit(self, line, rng, params):
        words = list(_WORD.finditer(line))
        if not words:
            return None
        word = rng.choice(words)
        copies = b" ".join([word.group()] * rng.randint(1, params["times"]))
        return [line[:word.end()] + b" " + copies + line[word.end():]]


class SortLine(_LineRule):
    name = "sort-line"
    summary = "Sort the words (numbers by value) of a line; algorithms expecting random order suffer."
    params = (Param("reverse", "bool", None, "Sort descending (default: a random direction)."),)

    def edit(self, line, rng, params):
        words = line.split()
        if len(words) < 2:
            return None
        reverse = params["reverse"] if params["reverse"] is not None else rng.random() < 0.5
        if all(_NUMBER.fullmatch(w) for w in words):
            words.sort(key=int, reverse=reverse)
        else:
            words.sort(reverse=reverse)
        return [b" ".join(words)]


class PrependWhitespace(_Rule):
    name = "prepend-whitespace"
    summary = "Prepend whitespace to a line (the regex that froze a well-known Q&A site)."
    params = (Param("count", "int", 16, "Most whitespace characters added at once.", minimum=1, maximum=1_000_000),)

    def mutate(self, data, rng, params):
        lines = _lines(data)
        i = rng.randrange(len(lines))
        lines[i] = rng.choice((b" ", b"\t")) * rng.randint(1, params["count"]) + lines[i]
        return b"\n".join(lines)


# -- the usual text edits --------------------------------------------------------------------

class RemoveLine(_Rule):
    name = "remove-line"
    summary = "Remove a line."

    def mutate(self, data, rng, params):
        lines = _lines(data)
        if len(lines) < 2:
            return None
        del lines[rng.randrange(len(lines))]
        return b"\n".join(lines)


class DuplicateLine(_LineRule):
    name = "duplicate-line"
    summary = "Insert copies of a line right after it."
    params = (Param("times", "int", 4, "Most copies added at once.", minimum=1, maximum=100_000),)

    def edit(self, line, rng, params):
        return [line] * (1 + rng.randint(1, params["times"]))


class CopyLines(_Rule):
    name = "copy-lines"
    summary = "Copy a run of consecutive lines (up to half of them) to a random place between lines."

    def mutate(self, data, rng, params):
        lines = _lines(data)
        if len(lines) < 2:
            return None
        count = rng.randint(1, max(1, len(lines) // 2))
        start = rng.randrange(len(lines) - count + 1)
        at = rng.randint(0, len(lines))
        lines[at:at] = lines[start:start + count]
        return b"\n".join(lines)


class SwapLines(_Rule):
    name = "swap-lines"
    summary = "Swap two lines."

    def mutate(self, data, rng, params):
        lines = _lines(data)
        if len(lines) < 2:
            return None
        a, b = rng.sample(range(len(lines)), 2)
        lines[a], lines[b] = lines[b], lines[a]
        return b"\n".join(lines)


class RemoveChar(_Rule):
    name = "remove-char"
    summary = "Remove a character."

    def mutate(self, data, rng, params):
        if not data:
            return None
        i = char_start(data, rng.randrange(len(data)))
        end = i + 1
        while end < len(data) and data[end] & 0xC0 == 0x80:
            end += 1
        return data[:i] + data[end:]


class DuplicateChar(_Rule):
    name = "duplicate-char"
    summary = "Repeat a character in place."
    params = (Param("times", "int", 8, "Most copies added at once.", minimum=1, maximum=1_000_000),)

    def mutate(self, data, rng, params):
        if not data:
            return None
        i = char_start(data, rng.randrange(len(data)))
        end = i + 1
        while end < len(data) and data[end] & 0xC0 == 0x80:
            end += 1
        return data[:i] + data[i:end] * rng.randint(1, params["times"]) + data[i:]


class InsertSeparator(_Rule):
    name = "insert-separator"
    summary = "Insert a separator (comma, semicolon, colon, dot, space, tab, slash, bar, dash, newline)."

    def mutate(self, data, rng, params):
        i = char_start(data, rng.randint(0, len(data)))
        return data[:i] + rng.choice(_SEPARATORS) + data[i:]


class GrowNumber(_Rule):
    name = "grow-number"
    summary = "Multiply a number in the input (sizes, counts, repetitions)."
    params = (Param("factor", "int", 10, "Most the number is multiplied by.", minimum=2, maximum=1_000_000),)

    def mutate(self, data, rng, params):
        # a run of thousands of digits (grown by other rules) is no number worth multiplying, and past Python's
        # limit on converting digits to an int (4,300) int() would raise
        numbers = [m for m in _NUMBER.finditer(data) if len(m.group()) <= MAX_NUMBER_DIGITS]
        if not numbers:
            return None
        found = rng.choice(numbers)
        value = int(found.group()) or 1
        grown = str(value * rng.randint(2, params["factor"])).encode()
        return data[:found.start()] + grown + data[found.end():]


class AppendSelf(_LineRule):
    name = "append-self"
    summary = "Append to a line a piece of its own content."

    def edit(self, line, rng, params):
        start = char_start(line, rng.randrange(len(line)))
        end = rng.randint(start + 1, len(line))
        while end < len(line) and line[end] & 0xC0 == 0x80:
            end += 1
        return [line + line[start:end]]


# -- bytes -----------------------------------------------------------------------------------

class FlipBit(_Rule):
    name = "flip-bit"
    summary = "Flip one bit."
    kind = "bytes"

    def mutate(self, data, rng, params):
        if not data:
            return None
        i = rng.randrange(len(data))
        return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:]


class RandomByte(_Rule):
    name = "random-byte"
    summary = "Overwrite a byte with a random or boundary value (0, 0x7f, 0x80, 0xff)."
    kind = "bytes"

    def mutate(self, data, rng, params):
        if not data:
            return None
        i = rng.randrange(len(data))
        value = rng.choice((0, 0x7F, 0x80, 0xFF, rng.randrange(256)))
        return data[:i] + bytes([value]) + data[i + 1:]


class InsertBytes(_Rule):
    name = "insert-bytes"
    summary = "Insert random bytes."
    kind = "bytes"
    params = (Param("count", "int", 16, "Most bytes inserted at once.", minimum=1, maximum=1_000_000),)

    def mutate(self, data, rng, params):
        i = rng.randint(0, len(data))
        return data[:i] + rng.randbytes(rng.randint(1, params["count"])) + data[i:]


class DeleteBlock(_Rule):
    name = "delete-block"
    summary = "Delete a block of bytes."
    kind = "bytes"

    def mutate(self, data, rng, params):
        if len(data) < 2:
            return None
        start = rng.randrange(len(data))
        end = rng.randint(start + 1, min(len(data), start + max(1, len(data) // 4)))
        return data[:start] + data[end:]


class DuplicateBlock(_Rule):
    name = "duplicate-block"
    summary = "Copy a block of bytes next to itself."
    kind = "bytes"

    def mutate(self, data, rng, params):
        if not data:
            return None
        start = rng.randrange(len(data))
        end = rng.randint(start + 1, min(len(data), start + max(1, len(data) // 2)))
        return data[:end] + data[start:end] + data[end:]


_BUILTINS = {
    cls.name: f"{__name__}:{cls.__name__}"
    for cls in (DoubleLine, RepeatWord, SortLine, PrependWhitespace, RemoveLine, DuplicateLine, CopyLines, SwapLines,
                RemoveChar, DuplicateChar, InsertSeparator, GrowNumber, AppendSelf,
                FlipBit, RandomByte, InsertBytes, DeleteBlock, DuplicateBlock)
}
_BUILTINS.update({cls.name: f"{TEXT_RULES[0].__module__}:{cls.__name__}" for cls in TEXT_RULES})
_BUILTINS["pump"] = "perun_core.fuzz.pump:Pump"

#: every mutation rule by name
rules = Registry("fuzz rule", "mutate", frozenset(), _BUILTINS)


def register_rule(rule: Any, *, replace: bool = False) -> Any:
    """Add a third-party rule (it needs ``name``, ``kind``, ``params`` and ``mutate``)."""
    if getattr(rule, "kind", None) not in RULE_KINDS:
        raise UnitError(f"cannot register fuzz rule {getattr(rule, 'name', rule)!r}: its kind must be text or bytes")
    return rules.register(rule, replace=replace)


class RuleChoice:
    """A rule with its converted parameters, ready to mutate."""

    __slots__ = ("name", "rule", "params")

    def __init__(self, rule: Any, params: dict[str, Any]) -> None:
        self.rule = rule
        self.name: str = rule.name
        self.params = params

    def give_dictionary(self, tokens: Sequence[bytes]) -> None:
        """Hand the tokens of the input's language to a rule that asks for them (``wants_dictionary``)."""
        if getattr(self.rule, "wants_dictionary", False):
            self.params = {**self.params, "dictionary": tuple(tokens)}

    def apply(self, data: bytes, rng: random.Random, room: int | None = None) -> bytes | None:
        """``data`` mutated, or None; a rule that asks for it (``wants_room``) learns how many bytes the result may
        add (``room``), so that it does not build what the size limit would throw away."""
        if room is not None and getattr(self.rule, "wants_room", False):
            return self.rule.mutate(data, rng, {**self.params, "room": room})
        return self.rule.mutate(data, rng, self.params)


def parse_rule_specs(specs: Sequence[str] | None, binary: bool) -> list[RuleChoice]:
    """The rules ``specs`` name (``name`` or ``name:key=value:key=value``), or the defaults.

    Without specs, text inputs get every text rule and binary inputs every
    byte rule.  Unknown rules (:class:`~perun_core.errors.UnknownUnit`) and
    bad parameters (:class:`~perun_core.errors.InvalidParameter`) raise.
    """
    chosen: list[RuleChoice] = []
    if not specs:
        wanted = "bytes" if binary else "text"
        for name in rules.names():
            rule = rules.get(name)
            if getattr(rule, "kind", "text") == wanted:
                chosen.append(RuleChoice(rule, convert_params(f"fuzz rule {name}", rule.params, None)))
        return chosen
    for spec in specs:
        name, *pairs = str(spec).strip().split(":")
        rule = rules.get(name.strip())
        given: dict[str, str] = {}
        for pair in pairs:
            key, sep, value = pair.partition("=")
            if not sep:
                known = ", ".join(p.name for p in rule.params) or "(none)"

                raise InvalidParameter(f"fuzz rule {rule.name}", pair, spec, f"key=value; {rule.name} has: {known}")
            given[key.strip()] = value.strip()
        chosen.append(RuleChoice(rule, convert_params(f"fuzz rule {rule.name}", rule.params, given)))
    return chosen
