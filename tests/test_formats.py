"""Format strings of status and log, and the history graph."""

from __future__ import annotations

import pytest

from perun_core.api import LogEntry, ProfileCounts
from perun_core.errors import ConfigError
from perun_core.cli.status_format import GraphDrawer, shortlog_segments, stats_text, status_rows
from perun_core.storage.repository import ProfileInfo
from perun_core.vcs import MinorVersion


def version(sha: str, parents=(), desc="Add a fast path. More text.") -> MinorVersion:
    return MinorVersion(sha, 1700000000, 0, "Ann Author", "ann@example.com", desc, tuple(parents))


def test_shortlog_tags():
    entry = LogEntry(version("abcdef123456" + "0" * 28, ["1" * 40, "2" * 40]), ProfileCounts(3, 1, 0, 2), [], "-+")
    fmt = "%checksum:6% (%stats%) %desc:10% %author% %email% %parents:4% %changes%"
    text = "".join(t for t, _ in shortlog_segments(fmt, entry))
    assert text == "abcdef (3|1|0|2 profiles) Add a fas… Ann Author ann@example.com 1111,2222 -+"
    styles = [s for t, s in shortlog_segments(fmt, entry) if t in "-+"]
    assert styles[-2:] == ["degradation", "optimization"]


def test_stats_without_profiles():
    assert stats_text(ProfileCounts()) == "---no--profiles---"


def test_unknown_tag_is_a_config_error():
    entry = LogEntry(version("a" * 40), ProfileCounts())
    with pytest.raises(ConfigError) as info:
        shortlog_segments("%colour%", entry)
    assert "format.shortlog" in str(info.value) and "%colour%" in str(info.value)


def test_status_rows_align_columns():
    infos = [ProfileInfo("0@p", "a.perf", 0.0, "time", "ls", "-al", "/", "time", (), False),
             ProfileInfo("1@p", "b.perf", 0.0, "memory", "./longer-binary", "", "in.txt", "memory", ("normalizer",), False)]
    headers, rows = status_rows("| %type% | %cmd% | %postprocessors% |", infos)
    # each column is as wide as its widest value or its header
    assert ["".join(r) for r in rows] == ["| time   | ls              |                |",
                                          "| memory | ./longer-binary | normalizer     |"]
    assert "".join(headers).split() == ["type", "cmd", "postprocessors"]


def test_graph_of_a_merge():
    drawer = GraphDrawer()
    history = [("m", ["a", "b"]), ("a", ["r"]), ("b", ["r"]), ("r", [])]
    lines = []
    for sha, parents in history:
        before, prefix, after = drawer.row(sha, parents)
        lines += before + [f"{prefix} {sha}"] + after
    assert lines == ["* m", "|\\", "* | a", "| * b", "|/", "* r"]
