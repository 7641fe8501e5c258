"""The one cache format of ``.perun/cache``: whole documents are read back, anything else is ignored,
and an entry standing for a file is out of date as soon as the file is replaced."""

from __future__ import annotations

import os

import pytest
from conftest import run_cli, time_profile, write_pending

from perun_core import cachefile


def test_a_document_reads_back_what_was_written(tmp_path):
    path = tmp_path / "nested" / "c.json"
    payload = {"a": [1, 2.5, "ü"], "b": None}
    assert cachefile.write(path, cachefile.encode(3, payload, name="rows", start="abc"))
    assert cachefile.read(path, 3, name="rows", start="abc") == payload
    assert cachefile.read(tmp_path / "missing.json", 3) is None


@pytest.mark.parametrize("damage", ["flip", "truncate", "version", "label", "name", "garbage", "empty"])
def test_a_damaged_or_foreign_document_is_ignored(tmp_path, damage):
    path = tmp_path / "c.json"
    data = bytearray(cachefile.encode(1, {"key": list(range(50))}, start="x"))
    expect = {"version": (2, {"start": "x"}, "entries"), "label": (1, {"start": "y"}, "entries"),
              "name": (1, {"start": "x"}, "commits")}
    if damage == "flip":
        data[len(data) // 2] ^= 0x01
    elif damage == "truncate":
        data = data[: len(data) - 3]
    elif damage == "garbage":
        data = bytearray(b"\x00\xffnot a cache")
    elif damage == "empty":
        data = bytearray()
    path.write_bytes(bytes(data))
    version, labels, name = expect.get(damage, (1, {"start": "x"}, "entries"))
    assert cachefile.read(path, version, name=name, **labels) is None


def test_a_lone_surrogate_is_kept_escaped(tmp_path):
    payload = {"name\udcff": "x"}
    assert cachefile.decode(cachefile.encode(1, payload), 1) == payload


def test_a_replaced_file_has_another_signature_even_with_the_same_size_and_time(tmp_path):
    first = tmp_path / "f"
    first.write_bytes(b"aaaa")
    before = cachefile.file_signature(first)
    other = tmp_path / "g"
    other.write_bytes(b"bbbb")
    os.utime(other, ns=(before[1], before[1]))
    os.replace(other, first)  # as every atomic write does
    after = cachefile.file_signature(first)
    assert after[:2] == before[:2] and after != before
    assert cachefile.file_signature(tmp_path / "missing") is None


def test_status_sees_a_pending_profile_replaced_within_one_timestamp(perun_repo):
    """The pending-metadata cache is keyed by the whole signature: a same-size replacement with the same
    mtime (a rewrite within one tick of a coarse clock) is not served from the cache."""
    root, (_, head) = perun_repo
    path = write_pending(root, "p.perf", time_profile(head, cmd="./aaaa"))
    os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    first = run_cli("status", cwd=root)
    assert first.returncode == 0 and "./aaaa" in first.stdout, first.stderr
    assert (root / ".perun" / "cache" / "pending-meta.json").is_file()
    replacement = root / "replacement.perf"
    replacement.write_text(path.read_text().replace("./aaaa", "./bbbb"))
    assert replacement.stat().st_size == path.stat().st_size
    os.utime(replacement, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    os.replace(replacement, path)
    again = run_cli("status", cwd=root)
    assert again.returncode == 0 and "./bbbb" in again.stdout and "./aaaa" not in again.stdout, again.stdout
