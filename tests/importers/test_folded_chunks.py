"""The folded reader reads a file in chunks of lines: whatever the chunk size, the result of reading it at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import run_cli
from perun_core.errors import ImportFailed
from perun_core.importers import foldedscan, stacks

#: Names that share bytes in every way the token table tells apart: short, exactly 8 and 16 bytes, long ones that
#: differ only in the middle, a space inside, a tab, non-ASCII.
_NAMES = ["a", "bb", "main", "x y", "t\tu", "ü", "12345678", "1234567812345678", "long_name_" * 3 + "A",
          "long_name_" * 3 + "B", "f()~s.c~3"]
_GOOD = st.tuples(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=6), st.integers(0, 10 ** 12)).map(
    lambda line: f"{';'.join(line[0])} {line[1]}")
#: Lines the bulk reader leaves to the line reader: blank, a comment, a fraction, and lines it refuses.
_ODD = st.sampled_from(["", "# a comment", "a;b 1.5", "a;b", "a;b x", "a;b -3", "a; 2", " a;b 4"])
_BREAKS = st.sampled_from(["\n", "\n", "\n", "\r\n"])


def _folded(lines: list[tuple[str, str]]) -> bytes:
    return "".join(line + end for line, end in lines).encode()


def _scan(data: bytes, chunk_bytes: int) -> tuple | None:
    scan = foldedscan.scan_folded(data, chunk_bytes)
    if scan is None:
        return None
    assert scan.flat.dtype.kind == "i" and scan.flat.itemsize == 4  # frame numbers in int32
    return scan.names, scan.flat.tolist(), scan.lengths.tolist(), scan.values.tolist(), scan.lines


def _read(path: Path) -> tuple:
    """What the importer makes of ``path``: the profile's stacks and functions, or its one error."""
    try:
        profile = stacks.FoldedImporter().load([path], {})
    except ImportFailed as failed:
        return ("error", str(failed))
    rows = profile.global_region.resources.rows()
    return ("profile", profile.header["tool"]["lines"],
            [(row["uid"], row["amount"], row.get("exclusive"),
              tuple((frame["function"], frame.get("object")) for frame in row.get("trace") or ())) for row in rows])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_GOOD, st.just("\n")), min_size=1, max_size=30), st.data())
def test_chunks_of_any_size_read_a_file_as_one_chunk_and_as_the_line_reader(lines, data):
    """Chunk boundaries fall anywhere (down to one line a chunk, most inside a line); lines repeat stacks."""
    text = _folded(lines)
    whole = _scan(text, len(text) + 1)
    assert whole is not None
    slow = stacks._scan_lines([text], [Path("x.folded")])
    assert whole == (slow.names, slow.flat.tolist(), slow.lengths.tolist(), slow.values.tolist(), slow.lines)
    for chunk in (1, data.draw(st.integers(1, len(text))), data.draw(st.integers(1, 64))):
        assert _scan(text, chunk) == whole


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.one_of(_GOOD, _ODD), _BREAKS), min_size=1, max_size=20), st.integers(1, 40))
def test_odd_lines_give_the_same_profile_or_the_same_one_error_in_chunks(tmp_path, monkeypatch, lines, chunk):
    """CRLF, blank lines, comments and broken lines anywhere: read in small chunks the file gives the profile (or
    the one error naming the line) that it gives read at once."""
    path = tmp_path / "odd.folded"
    path.write_bytes(_folded(lines))
    monkeypatch.setattr(foldedscan, "_CHUNK_BYTES", 1 << 30)
    whole = _read(path)
    monkeypatch.setattr(foldedscan, "_CHUNK_BYTES", chunk)
    assert _read(path) == whole
    bad = [number for number, (line, _) in enumerate(lines, start=1)
           if line in ("a;b", "a;b x", "a;b -3")]
    if bad:
        assert whole[0] == "error" and f"odd.folded:{bad[0]}: " in whole[1]


def test_a_broken_line_in_a_file_of_several_chunks_is_one_error_naming_it(perun_repo, tmp_path):
    """Through the command line: the last chunk is read first, the broken line is in the middle of the file."""
    root, _ = perun_repo
    count = 3 * foldedscan._CHUNK_BYTES // 20
    lines = [f"main;work_{i % 97};leaf_{i % 13} {i + 1}" for i in range(count)]
    lines[count // 2] = "main;work;leaf 12 apples"
    path = tmp_path / "big.folded"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size > 2 * foldedscan._CHUNK_BYTES
    done = run_cli("import", "folded", str(path), "-m", "HEAD", cwd=root)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"error: {path}:{count // 2 + 1}: expected a number after the stack, got "
                                        "'apples'"]
    assert not list((root / ".perun" / "jobs").glob("*"))  # nothing half-written


@pytest.mark.parametrize("chunk", [1, 7, 1 << 21])
def test_repeated_stacks_keep_the_first_line_in_every_chunking(chunk):
    data = b"a;b 1\nc 2\na;b 3\nc;a 4\nc 5\na;b 6\n"
    scan = foldedscan.scan_folded(data, chunk)
    # the last distinct stack first, innermost frame first; frames numbered as they first occur in that order
    assert scan.names == ["a", "c", "b"]
    assert scan.flat.tolist() == [0, 1, 1, 2, 0] and scan.lengths.tolist() == [2, 1, 2]
    assert scan.values.tolist() == [4, 7, 10] and scan.lines == 6


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.lists(_GOOD, max_size=8), st.booleans()), min_size=1, max_size=4), st.integers(1, 50))
def test_files_read_from_their_ends_in_chunks_read_as_the_joined_text(tmp_path, files, chunk):
    """Several files, some empty, some without a line break at the end, read chunk by chunk from the end (pieces
    shorter than a line too): the stacks of the files joined, each ending with a line break."""
    paths, texts = [], []
    for index, (lines, last_break) in enumerate(files):
        text = "\n".join(lines) + ("\n" if last_break and lines else "")
        paths.append(tmp_path / f"part{index}.folded")
        paths[-1].write_bytes(text.encode())
        texts.append(text if text.endswith("\n") else text + "\n")
    joined = "".join(texts).encode()
    expected = _scan(joined, len(joined) + 1)
    scan = foldedscan.scan_folded_files(paths, chunk)
    got = None if scan is None else (scan.names, scan.flat.tolist(), scan.lengths.tolist(), scan.values.tolist(),
                                     scan.lines)
    assert got == expected


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["a;b 1", "long_line;" * 4 + "c 2", "", "x 3"]), max_size=12), st.booleans(),
       st.integers(1, 40), st.integers(1, 9))
def test_chunks_from_the_end_start_at_the_first_line_after_each_step_back(tmp_path, monkeypatch, lines,
                                                                         last_break, size, peek):
    """Each chunk is read once, from the first line starting at or after a step of ``size`` back from the end
    (found by small reads, here of ``peek`` bytes) to where the chunk after it starts; joined, the text."""
    monkeypatch.setattr(foldedscan, "_PEEK", peek)
    text = ("\n".join(lines) + ("\n" if last_break and lines else "")).encode()
    path = tmp_path / "p.folded"
    path.write_bytes(text)
    with path.open("rb") as file:
        chunks = list(foldedscan._chunks_from_the_end([file], [len(text)], size))
    if not text:
        assert chunks == [b"\n"]
        return
    assert b"".join(reversed(chunks)) == (text if text.endswith(b"\n") else text + b"\n")
    assert all(chunk.endswith(b"\n") for chunk in chunks)

    def line_start(position: int) -> int:
        return 0 if position == 0 else (text.find(b"\n", position) + 1 or len(text))

    steps = range(len(text) - size, -size, -size)
    bounds = sorted({line_start(max(step, 0)) for step in steps} | {len(text)})
    assert [len(chunk) for chunk in reversed(chunks)][:-1] == [b - a for a, b in zip(bounds, bounds[1:])][:-1]
