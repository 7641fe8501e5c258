"""Mutation rules that fit text: they cut and copy whole code points and grow the shapes slow parsers choke on.

Every rule here keeps valid UTF-8 valid: positions are moved back to the
start of a code point (a byte that is not ``10xxxxxx``) before cutting.  The
growth rules make the shapes behind most published complexity bugs in text
processing: a substring repeated many times, a long run of one character
(a multi-byte one too), nested delimiters, a quote, comment or escape opened
and never closed, an input cut short in the middle of a structure, and tokens
of the input's own language (the dictionary: words, punctuation and
non-ASCII characters of the seeds, plus the tokens of ``--dict FILE`` and the
string literals of ``--source DIR``, see :mod:`.dictionary`).

The dictionary reaches a rule through its parameters: a rule with
``wants_dictionary`` gets the tokens under the ``dictionary`` key.
"""

from __future__ import annotations

import itertools
import math
import random
import re
from collections import Counter
from collections.abc import Iterable

from ..params import Param

__all__ = ["char_start", "seed_dictionary"]

#: pairs of delimiters that nest
_PAIRS = ((b"(", b")"), (b"[", b"]"), (b"{", b"}"), (b"<", b">"), (b'"', b'"'), (b"'", b"'"))
#: openings that a parser has to look for the end of
_OPENINGS = (b'"', b"'", b"`", b"\\", b"(", b"[", b"{", b"<", b"/*", b"<!--", b"&", b"%", b"${")
_WORD = re.compile(r"\w{1,32}")
_PUNCT_RUN = re.compile(r"[^\w\s]{1,4}")
#: most tokens taken from --dict and --source together
_MAX_EXTRA = 1024


def char_start(data: bytes, i: int) -> int:
    """``i`` moved back to the first byte of the code point it falls in (UTF-8 continuation bytes skipped)."""
    while 0 < i < len(data) and data[i] & 0xC0 == 0x80:
        i -= 1
    return i


def _char_end(data: bytes, i: int) -> int:
    """The index just after the code point starting at ``i``."""
    i += 1
    while i < len(data) and data[i] & 0xC0 == 0x80:
        i += 1
    return i


def _position(data: bytes, rng: random.Random) -> int:
    """A random code-point boundary of ``data`` (its end included)."""
    return char_start(data, rng.randint(0, len(data)))


def _char_at(data: bytes, rng: random.Random) -> tuple[int, int] | None:
    if not data:
        return None
    start = char_start(data, rng.randrange(len(data)))
    return start, _char_end(data, start)


def _times(rng: random.Random, most: int) -> int:
    """A count between 2 and ``most``, spread evenly on a log scale (small and large growth equally often)."""
    if most <= 2:
        return 2
    return max(2, min(most, int(2 ** rng.uniform(1, math.log2(most)))))


def seed_dictionary(inputs: Iterable[bytes], extra: Iterable[bytes] = ()) -> list[bytes]:
    """Tokens of the seeds' language: their non-alphanumeric and non-ASCII characters, short punctuation runs,
    their most frequent words, then ``extra`` (a ``--dict`` file's lines)."""
    chars: Counter[bytes] = Counter()
    words: Counter[bytes] = Counter()
    for data in inputs:
        # tokens are cut from the decoded text, so none of them splits a code point
        text = data.decode("utf-8", "replace")
        for ch in text:
            if not ch.isalnum() or ord(ch) > 127:
                chars[ch.encode("utf-8")] += 1
        words.update(m.group().encode("utf-8") for m in _WORD.finditer(text))
        words.update(m.group().encode("utf-8") for m in _PUNCT_RUN.finditer(text))
    tokens = [t for t, _ in chars.most_common(96)] + [t for t, _ in words.most_common(128)]
    # the given tokens (the user's, the program's own literals) have a cap of their own: the seeds' words never
    # crowd them out
    tokens.extend(list(dict.fromkeys(extra))[:_MAX_EXTRA])
    return list(dict.fromkeys(t for t in tokens if t and t != "\ufffd".encode()))


class _TextRule:
    name = ""
    summary = ""
    kind = "text"
    params: tuple[Param, ...] = ()


class RepeatSubstring(_TextRule):
    name = "repeat-substring"
    summary = "Repeat a substring (up to 16 characters) many times in place: repeated units feed quadratic scans."
    params = (Param("times", "int", 64, "Most copies made at once.", minimum=2, maximum=1_000_000),)

    def mutate(self, data, rng, params):
        picked = _char_at(data, rng)
        if picked is None:
            return None
        start, end = picked
        for _ in range(rng.randint(0, 15)):
            if end >= len(data):
                break
            end = _char_end(data, end)
        unit = data[start:end]
        return data[:start] + unit * _times(rng, params["times"]) + data[end:]


class GrowRun(_TextRule):
    name = "grow-run"
    summary = "Grow the run of one character (any code point) by a factor: long runs make regexes backtrack."
    params = (Param("factor", "int", 8, "Most the run is multiplied by.", minimum=2, maximum=1_000_000),)

    def mutate(self, data, rng, params):
        picked = _char_at(data, rng)
        if picked is None:
            return None
        start, end = picked
        char = data[start:end]
        width = end - start
        while start >= width and data[start - width:start] == char:
            start -= width
        while data[end:end + width] == char:
            end += width
        run = (end - start) // width
        return data[:start] + char * (run * _times(rng, params["factor"])) + data[end:]


class NestDelimiters(_TextRule):
    name = "nest-delimiters"
    summary = "Insert nested delimiters ((( ... ))) at a point, closed or left open: depth makes parsers recurse."
    params = (Param("depth", "int", 64, "Most levels added at once.", minimum=2, maximum=1_000_000),)

    def mutate(self, data, rng, params):
        present = [pair for pair in _PAIRS if pair[0] in data] or list(_PAIRS)
        opening, closing = rng.choice(present)
        depth = _times(rng, params["depth"])
        at = _position(data, rng)
        inner = b""
        if rng.random() < 0.5:
            # around a piece of the input: the closings go after it
            end = _position(data, rng)
            at, end = min(at, end), max(at, end)
            inner = data[at:end]
            rest = data[end:]
        else:
            rest = data[at:]
        closings = closing * depth if rng.random() < 0.5 else b""
        return data[:at] + opening * depth + inner + closings + rest


class OpenUnclosed(_TextRule):
    name = "open-unclosed"
    summary = "Open a quote, comment, bracket or escape and never close it (or drop a closing one)."

    def mutate(self, data, rng, params):
        closers = [m.start() for m in re.finditer(rb"[\"'`)\]}>]", data)]
        if closers and rng.random() < 0.3:
            i = rng.choice(closers)
            return data[:i] + data[i + 1:]
        present = [o for o in _OPENINGS if o in data]
        opening = rng.choice(present if present and rng.random() < 0.7 else _OPENINGS)
        at = _position(data, rng)
        return data[:at] + opening + data[at:]


class Truncate(_TextRule):
    name = "truncate"
    summary = "Cut the input short at a character: a structure left half-way makes a matcher try every split."

    def mutate(self, data, rng, params):
        if len(data) < 2:
            return None
        at = char_start(data, rng.randint(1, len(data) - 1))
        return data[:at] if at > 0 else None


class InsertToken(_TextRule):
    name = "insert-token"
    summary = "Insert a token of the input's language (from the seeds or --dict), sometimes many times."
    wants_dictionary = True
    params = (Param("times", "int", 16, "Most copies inserted at once.", minimum=1, maximum=1_000_000),)

    def mutate(self, data, rng, params):
        tokens = params.get("dictionary") or seed_dictionary([data])
        if not tokens:
            return None
        token = rng.choice(tokens)
        count = 1 if rng.random() < 0.5 or params["times"] < 2 else _times(rng, params["times"])
        at = _position(data, rng)
        return data[:at] + token * count + data[at:]


class ReplaceToken(_TextRule):
    name = "replace-token"
    summary = "Replace a word or a run of punctuation with a token of the input's language (seeds, --dict, --source)."
    wants_dictionary = True

    def mutate(self, data, rng, params):
        tokens = params.get("dictionary") or seed_dictionary([data])
        text = data.decode("utf-8", "surrogateescape")
        spans = [m.span() for m in _WORD.finditer(text)] + [m.span() for m in _PUNCT_RUN.finditer(text)]
        if not tokens or not spans:
            return None
        start, end = rng.choice(spans)
        # positions in code points, turned into byte offsets so the rest of the input stays byte for byte
        before = len(text[:start].encode("utf-8", "surrogateescape"))
        after = before + len(text[start:end].encode("utf-8", "surrogateescape"))
        token = rng.choice(tokens)
        if token == data[before:after]:
            return None
        return data[:before] + token + data[after:]


class ReplaceChar(_TextRule):
    name = "replace-char"
    summary = "Replace a character with another one of the input's language: a near miss at the end of a match."
    wants_dictionary = True

    def mutate(self, data, rng, params):
        picked = _char_at(data, rng)
        if picked is None:
            return None
        start, end = picked
        singles = [t for t in params.get("dictionary") or () if len(t.decode("utf-8", "replace")) == 1]
        choices = singles or [b"!", b"x", b" ", b"\\"]
        other = rng.choice(choices)
        if other == data[start:end]:
            return None
        return data[:start] + other + data[end:]


def _alphabet(char: str) -> str:
    """The characters of ``char``'s class (digits, lower-case or upper-case ASCII letters), "" for any other."""
    for alphabet in ("0123456789", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"):
        if char in alphabet:
            return alphabet
    return ""


def _variants(item: str, count: int, rng: random.Random) -> list[str] | None:
    """``count`` distinct variants of ``item``, all differing from it: a counter written into the same few
    letter or digit positions of every copy (drawn at random, each keeping its class), so the variants keep the
    item's shape and length and differ only where the counter runs."""
    positions = [i for i, char in enumerate(item) if _alphabet(char)]
    if not positions:
        return None
    rng.shuffle(positions)
    chosen: list[int] = []
    room = 1
    while positions and room <= count:
        chosen.append(positions.pop())
        room *= len(_alphabet(item[chosen[-1]]))
    count = min(count, room - 1)
    # the item cut at the counter's positions: a variant joins the pieces around its own characters, so a long
    # item (a whole line) is not copied character by character for each variant
    ordered = sorted(range(len(chosen)), key=lambda k: chosen[k])
    cuts = [chosen[k] for k in ordered]
    pieces = [item[start + 1:end] for start, end in zip([-1] + cuts, cuts + [len(item)])]
    alphabets = [_alphabet(item[at]) for at in chosen]
    variants = []
    for number in range(1, count + 1):
        digits = []
        rest = number
        for at, alphabet in zip(chosen, alphabets):
            rest, digit = divmod(rest, len(alphabet))
            digits.append(alphabet[(alphabet.index(item[at]) + digit) % len(alphabet)])
        parts = [pieces[0]]
        for k, piece in zip(ordered, pieces[1:]):
            parts += [digits[k], piece]
        variants.append("".join(parts))
    return variants


class RepeatVaried(_TextRule):
    name = "repeat-varied"
    summary = ("Add after a word or line many distinct variants of it (a counter in a few of its letters or "
               "digits), or put them in place of the words or lines after it: many similar keys fill one hash "
               "bucket or one comparison chain.")
    params = (Param("times", "int", 4096, "Most variants added at once.", minimum=1, maximum=1_000_000),)
    wants_room = True

    def mutate(self, data, rng, params):
        text = data.decode("utf-8", "surrogateescape")
        # a whole line half the time (records, keys with values), else a word; the copies are separated as the
        # item is separated from what follows it
        lines = rng.random() < 0.5 and "\n" in text.rstrip("\n")
        spans = [m.span() for m in re.finditer(r"[^\n]+" if lines else r"\S+", text)]
        if not spans:
            return None
        index = rng.randrange(len(spans))
        start, end = spans[index]
        separator = "\n" if lines else text[end:end + 1] if end < len(text) and text[end].isspace() else " "
        count = _times(rng, params["times"]) if params["times"] >= 2 else 1
        following = spans[index + 1:index + 1 + count]
        # in place of the items after it: an input at the size limit can still trade copies for variants
        in_place = bool(following) and rng.random() < 0.5
        room = params.get("room")  # in bytes, as the size limit counts: an item's code points may take several
        size = len(text[start:end].encode("utf-8", "surrogateescape"))
        if in_place:
            if room is not None:
                # a variant put in place of a shorter item grows the input by the difference
                grown = itertools.accumulate(size - len(text[first:last].encode("utf-8", "surrogateescape"))
                                             for first, last in following)
                following = following[:sum(1 for _ in itertools.takewhile(lambda total: total <= room, grown))]
            count = len(following)
        elif room is not None:
            # no more copies than the size limit keeps
            count = min(count, room // (size + len(separator)))
        if count < 1:
            return None
        variants = _variants(text[start:end], count, rng)
        if variants is None:
            return None
        if in_place:
            pieces, at = [], 0
            for (first, last), variant in zip(following, variants):
                pieces += [text[at:first], variant]
                at = last
            return "".join(pieces + [text[at:]]).encode("utf-8", "surrogateescape")
        added = "".join(separator + variant for variant in variants)
        return (text[:end] + added + text[end:]).encode("utf-8", "surrogateescape")


TEXT_RULES = (RepeatSubstring, RepeatVaried, GrowRun, NestDelimiters, OpenUnclosed, Truncate, InsertToken, ReplaceToken,
              ReplaceChar)
