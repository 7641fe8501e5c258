"""The bulk reader of ``perf script`` text against the line-by-line one, and stacks held as frame numbers in
validation and in the compact layout."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from perun_core.errors import ImportFailed, InvalidProfile
from perun_core.importers import perf, perfscan
from perun_core.importers.common import FrameIds, stack_table
from perun_core.profile.codec import decode_content, encode_columnar
from perun_core.profile.model import Profile, Snapshot
from perun_core.profile.resources import ResourceTable, StackColumn
from perun_core.profile.validate import validate_profile

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "import" / "perf.script"

# symbols and objects the line-by-line reader reads in its own way: offsets that are not offsets, spaces and
# parentheses, an empty symbol once the offset is gone, text beyond ASCII, "(deleted)" objects
_SYMBOLS = ["main", "leaf", "foo(int)", "operator()", "a b", "+0x10", "x+0x", "f+0x1+0x2", "deadbeef", "ünï",
            "[unknown]", "g  ", "std::vector<int>::push_back(int const&)", "h+0xZZ", "k\t", "0x1f", "p+0x1f"]
_OBJECTS = ["/bin/app", "[kernel.kallsyms]", "/usr/bin/app (deleted)", "", "/l i b", "ö", "[unknown]"]


def _frame(rng: random.Random) -> str:
    indent = rng.choice(["\t    ", "\t", " \t", "\t\t\t"])
    address = rng.choice(["5376eb", "ffffffff81000000", "0", "ABC", "1a2B"])
    gap = rng.choice([" ", "\t", "  "])
    offset = rng.choice(["+0x7e", "", "+0x", "+0x1f3a", "+0xg"])
    tail = rng.choice(["", "", " ", "\t"])
    return f"{indent}{address}{gap}{rng.choice(_SYMBOLS)}{offset} ({rng.choice(_OBJECTS)}){tail}"


def _text(rng: random.Random) -> bytes:
    events = ["task-clock", "cycles", "cpu-clock:u"][:rng.randint(1, 3)]
    pool = []
    for _ in range(rng.randint(1, 6)):
        period = rng.choice(["    1001001 ", "  5 ", " 12 "])
        head = rng.choice([f"app 4242 1000.001:{period}{{}}: ", f"app 1 [000] 1.5:{period}{{}}:"])
        pool.append([head, [_frame(rng) for _ in range(rng.randint(1, 5))]])
    samples = []
    for _ in range(rng.randint(1, 12)):
        head, frames = rng.choice(pool)
        samples.append("\n".join([head.format(rng.choice(events)), *frames]) + "\n")
    text = rng.choice(["", "# perf script --header\n# more\n"]) + "\n".join(samples)
    return (text if rng.random() < 0.8 else text.rstrip("\n")).encode()


def _same(data: bytes, path: Path) -> None:
    bulk = perf.parse_perf_script_text(data, path)
    lines = perf.parse_by_lines(data, path)
    assert (bulk[0].frames, dict(bulk[0]), bulk[1:]) == (lines[0].frames, dict(lines[0]), lines[1:])


def test_bulk_reading_gives_what_line_by_line_reading_gives():
    rng = random.Random(11)
    for _ in range(400):
        data = _text(rng)
        assert perfscan.scan_perf_script(data, perf._HEADER) is not None
        _same(data, Path("x.script"))
    assert perfscan.scan_perf_script(FIXTURE.read_bytes(), perf._HEADER) is not None
    _same(FIXTURE.read_bytes(), FIXTURE)


@pytest.mark.parametrize("change", [
    lambda t: t.replace(b"\n", b"\r\n"),                       # CRLF
    lambda t: t.replace(b" (/tmp/idfx/busy)", b"", 1),          # a frame without its object
    lambda t: t.replace(b"(/tmp/idfx/busy)", b"(/tmp/(x)busy)", 1),  # the last '(' is not after a space
    lambda t: t.replace(b"\n\n", b"\n  \n", 1),                 # a blank line that is not empty
    lambda t: t.replace(b"\n\t            11f7", b"\n11f7", 1),    # a frame line that is not indented
    lambda t: t + b"lonely 1 2.0: 1 task-clock:\n",             # a sample without frames
    lambda t: t.replace(b"1001001", str(2**63).encode(), 1),   # a period no sum can hold
    lambda t: t.replace(b"\t", b"\t\x0b", 1),                  # whitespace beyond spaces and tabs
    lambda t: t + b"\xff",                                      # not UTF-8
])
def test_odd_text_is_left_to_the_line_by_line_reader(change):
    data = change(FIXTURE.read_bytes())
    assert perfscan.scan_perf_script(data, perf._HEADER) is None


def test_a_truncated_file_still_names_the_line(tmp_path):
    text = FIXTURE.read_bytes()
    cut = text[:text.index(b"leaf+0x", 2000) + 4]
    path = tmp_path / "cut.script"
    path.write_bytes(cut)
    line = cut.count(b"\n") + 1
    with pytest.raises(ImportFailed, match=rf"{path.name}:{line}: expected a stack frame"):
        perf.parse_perf_script_text(cut, path)


def _stack_profile(entries: list[dict], stacks: list[list[int]], amounts: list[int]) -> Profile:
    ids = FrameIds()
    ids.frames.extend(entries)
    flat = np.array([f for s in stacks for f in s], dtype=np.int64)
    lengths = np.array([len(s) for s in stacks], dtype=np.int64)
    table = stack_table(ids, flat, lengths, amounts)
    return Profile(header={"type": "time", "units": {"time": "samples"}}, global_region=Snapshot(table, [], {}))


def _as_lists(profile: Profile) -> Profile:
    keys, columns = profile.global_region.resources.columns()
    table = ResourceTable.from_columns(len(profile.global_region.resources), keys, [list(c) for c in columns],
                                       sparse=True)
    return Profile(header=profile.header, global_region=Snapshot(table, [], {}))


@pytest.mark.parametrize("count", [3, 200])
def test_stacks_held_as_numbers_are_written_as_numbers_and_read_back_as_their_lists(count):
    rng = random.Random(count)
    entries = [{"function": f"f{i}", "object": "/bin/ä"} for i in range(12)] + [{"function": "f0", "object": "/bin/ä"}]
    stacks = list({tuple(rng.randrange(13) for _ in range(rng.randint(1, 6))) for _ in range(count)})
    profile = _stack_profile(entries, [list(s) for s in stacks], [rng.randint(1, 9) for _ in stacks])
    assert isinstance(profile.global_region.resources.raw_columns(stacks=True)[1][4], StackColumn)
    encoded = encode_columnar(profile)
    trace_column = next(c for c in json.loads(encoded)["global"]["cols"] if c["t"] == "stacks")
    assert trace_column["frames"] == entries and "absent_runs" in trace_column  # the function rows have no stack
    again = decode_content(encoded)
    assert isinstance(again.global_region.resources.raw_columns(stacks=True)[1][4], StackColumn)
    assert encode_columnar(again) == encoded
    assert again.to_dict() == profile.to_dict() == decode_content(encode_columnar(_as_lists(profile))).to_dict()


@pytest.mark.parametrize("damage, reason", [
    (lambda c: c.update(frames=c["frames"][:1]), "past the frames"),
    (lambda c: c.update(starts=c["ends"], ends=c["starts"]), "outside the frame numbers"),
    (lambda c: c.update(w="x"), "unknown integer width"),
    (lambda c: c.update(frames={}), "must be a list"),
    (lambda c: c.update(absent_runs=[[0, 1]]), "values, expected"),  # one absent row: row 0
])
def test_a_damaged_stacks_column_is_refused(damage, reason):
    profile = _stack_profile([{"function": "a"}, {"function": "b"}], [[0, 1], [1], [1, 0, 1]], [3, 2, 1])
    doc = json.loads(encode_columnar(profile))
    damage(next(c for c in doc["global"]["cols"] if c["t"] == "stacks"))
    with pytest.raises(InvalidProfile) as held:
        decode_content(json.dumps(doc).encode(), path="p.perf")
    assert reason in str(held.value) and "p.perf" in str(held.value)


def test_a_bad_frame_entry_is_named_by_its_row():
    profile = _stack_profile([{"function": "ok"}, {"function": "bad", "x": math.nan}], [[0], [1, 0]], [5, 2])
    with pytest.raises(InvalidProfile) as held:
        validate_profile(profile)
    with pytest.raises(InvalidProfile) as listed:
        validate_profile(_as_lists(profile))
    assert str(held.value) == str(listed.value) and "resources[1].trace" in str(held.value)
    validate_profile(_stack_profile([{"function": "ok"}, {"function": "fine"}], [[0], [1, 0]], [5, 2]))
