"""The bulk readers of stack files: numbering byte tokens with numpy, and folded files read without a string per frame."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perun_core.importers import foldedscan, stacks, tokens
from perun_core.profile.resources import MISSING, ResourceTable, StackColumn


def _bounds(pieces: list[bytes]) -> tuple[bytes, np.ndarray, np.ndarray]:
    sizes = np.array([len(p) for p in pieces], dtype=np.int64)
    ends = np.cumsum(sizes)
    return b"".join(pieces), ends - sizes, ends


def _numbered(data: bytes, starts: np.ndarray, ends: np.ndarray, calls: int = 1) -> tuple[list[bytes], np.ndarray]:
    """The tokens' texts by number and each token's number, the tokens fed in ``calls`` calls, each with its own
    copy of its part of the text (the tables keep what they compare with)."""
    numbering = tokens.TokenNumbers()
    cuts = np.linspace(0, len(starts), calls + 1).astype(int)
    numbers = []
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        before = numbering.count
        base = int(starts[lo]) if hi > lo else 0
        part = bytes(data[base:int(ends[hi - 1])] if hi > lo else b"")
        got, firsts = numbering.number(part, starts[lo:hi] - base, ends[lo:hi] - base)
        numbers.append(got)
        # a new number goes to the first token of its text, in this call
        assert got[firsts].tolist() == list(range(before, numbering.count))
        for new, first in enumerate(firsts.tolist(), start=before):
            assert new not in got[:first].tolist()
    return numbering.tokens(), np.concatenate(numbers) if numbers else np.zeros(0, dtype=np.int64)


@pytest.mark.parametrize("rounds, chunk", [(((16, 42), (20, 21), (22, 0)), 1 << 21), (((16, 42), (20, 21), (22, 0)), 7),
                                           (((2, 62), (2, 60), (2, 0)), 5), (((0, 0),), 1 << 21)])
@pytest.mark.parametrize("calls", [1, 3])
def test_equal_tokens_share_a_number_and_different_ones_never_do(monkeypatch, rounds, chunk, calls):
    # tiny bucket tables force every token through the collision rounds and the dict; small chunks and several
    # calls make equal tokens of later chunks meet the token an earlier chunk left in their bucket
    monkeypatch.setattr(tokens, "_ROUNDS", rounds)
    monkeypatch.setattr(tokens, "_CHUNK", chunk)
    rng = random.Random(5)
    for _ in range(40):
        words = [bytes(rng.choice(b"ab;x\xff\x00") for _ in range(rng.randint(0, 40))) for _ in range(rng.randint(1, 30))]
        seq = [rng.choice(words) for _ in range(rng.randint(1, 200))]
        data, starts, ends = _bounds(seq)
        found, numbers = _numbered(data, starts, ends, calls)
        assert len(found) == len(set(seq)) and set(found) == set(seq)
        assert [found[n] for n in numbers.tolist()] == seq


def test_tokens_that_differ_only_in_the_middle_are_told_apart():
    seq = [b"x" * 20 + b"a" + b"y" * 20, b"x" * 20 + b"b" + b"y" * 20, b"x" * 20 + b"a" + b"y" * 20]
    data, starts, ends = _bounds(seq)
    found, numbers = _numbered(data, starts, ends)
    assert numbers.tolist()[0] == numbers.tolist()[2] != numbers.tolist()[1] and len(found) == 2


def _random_folded(rng: random.Random) -> bytes:
    names = ["a", "bb", "main", "x y", "ü", "f()~s.c~3", "longname_" * 3, "n" * 17]
    lines = []
    for _ in range(rng.randint(1, 40)):
        stack = ";".join(rng.choice(names) for _ in range(rng.randint(1, 7)))
        lines.append(f"{stack} {rng.randint(0, 10 ** rng.randint(1, 12))}")
    return ("\n".join(lines) + "\n").encode()


def test_bulk_folded_reader_agrees_with_the_line_by_line_one():
    rng = random.Random(11)
    for _ in range(200):
        data = _random_folded(rng)
        fast = foldedscan.scan_folded(data)
        slow = stacks._scan_lines([data], [Path("x.folded")])
        assert fast is not None
        assert fast.names == slow.names
        assert fast.flat.tolist() == slow.flat.tolist()
        assert fast.lengths.tolist() == slow.lengths.tolist()
        assert fast.values.tolist() == slow.values.tolist()
        assert fast.lines == slow.lines


@pytest.mark.parametrize("text", ["a;b 1.5\n", "a;b 1\r\n", "a;b 1\n\na 2\n", "a;b 1\nc\n", "a 1;2\n", "a;b -3\n",
                                  "a;b 1", " 4\n", "a;b 1234567890123456789\n"])
def test_bulk_folded_reader_leaves_unusual_files_to_the_line_reader(text):
    assert foldedscan.scan_folded(text.encode()) is None


def test_stack_column_reads_as_trace_lists_sharing_frames():
    frames = [{"function": "leaf"}, {"function": "main"}]
    column = StackColumn(frames, np.array([0, 1, 1]), np.array([0, 2]), np.array([2, 3]), 3)
    table = ResourceTable.from_columns(3, ["uid", "trace"], [["leaf", "main", "f"], column], sparse=True)
    assert table.stacks() is column
    traces = table.column("trace")
    assert traces[:2] == [[frames[0], frames[1]], [frames[1]]] and traces[2] is MISSING
    assert traces[0][1] is frames[1]
    assert [row.get("trace") for row in table.rows()] == [traces[0], traces[1], None]


def test_perf_symbols_lose_their_offset_as_the_regular_expression_cuts_it():
    from perun_core.importers.perf import _OFFSET, _without_offset

    rng = random.Random(3)
    parts = ["+0x", "+", "0x", "1f", "g", " ", "a", "F", "x", "+0x1F", "\t"]
    for _ in range(20000):
        symbol = "".join(rng.choice(parts) for _ in range(rng.randint(0, 6)))
        assert _without_offset(symbol) == (_OFFSET.sub("", symbol.strip()) or "[unknown]")
    assert _without_offset(" main+0x1a ") == "main" and _without_offset("+0x10") == "[unknown]"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.lists(st.sampled_from(["a", "bb", "x y", " ", "", "#", "7", "ü", "t\t", "\x1f", "n\u00a0", "z "]), min_size=1, max_size=5),
                          st.sampled_from([" ", "", "  ", ";", " ;", "\t ", " \t"]), st.sampled_from(["3", "12", "", "x", "1 2", "0"])),
                min_size=1, max_size=8))
def test_bulk_folded_reader_reads_a_file_as_the_line_reader_does_or_leaves_it_to_it(lines):
    """Whatever the spaces, ';' and values of the lines: the one-pass scan gives the line reader's stacks, or
    None (then the line reader reads the file and names a bad line)."""
    data = "".join(f"{';'.join(frames)}{gap}{value}\n" for frames, gap, value in lines).encode()
    fast = foldedscan.scan_folded(data)
    try:
        slow = stacks._scan_lines([data], [Path("x.folded")])
    except Exception:  # a line the reader refuses: the scan must not have read the file either
        assert fast is None
        return
    if fast is not None:
        assert (fast.names, fast.flat.tolist(), fast.lengths.tolist(), fast.values.tolist(), fast.lines) == \
            (slow.names, slow.flat.tolist(), slow.lengths.tolist(), slow.values.tolist(), slow.lines)
