"""The format strings of ``format.status`` and ``format.shortlog`` (spec 001 ch. 10).

Rendering returns styled segments ``(text, style)``; front ends map the style
names (``"degradation"``, ``"optimization"``, ``"checksum"``, ...) to colours.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..errors import ConfigError
from perun_core.api.text import commit_time, escape_controls, local_time

_TAG = re.compile(r"%([a-zA-Z_][\w.]*)(?::(\d+))?%")
STATUS_TAGS = ("type", "cmd", "args", "workload", "collector", "postprocessors", "time", "source", "checksum", "origin")
SHORTLOG_TAGS = ("checksum", "id", "stats", "changes", "desc", "date", "author", "email", "parents")

Segment = tuple[str, str]  # (text, style name; "" for plain)


@dataclass(frozen=True, slots=True)
class Token:
    literal: str | None = None
    tag: str | None = None
    width: int | None = None


def parse_format(fmt: str, known: Sequence[str], key: str) -> list[Token]:
    """Split a format string into literals and tags; unknown tags are a ConfigError."""
    tokens: list[Token] = []
    position = 0
    for match in _TAG.finditer(fmt):
        if match.start() > position:
            tokens.append(Token(literal=fmt[position : match.start()]))
        name = match.group(1)
        if name not in known:
            raise ConfigError(None, key, f"unknown tag '%{name}%'; known: {', '.join('%' + k + '%' for k in known)}")
        tokens.append(Token(tag=name, width=int(match.group(2)) if match.group(2) else None))
        position = match.end()
    if position < len(fmt):
        tokens.append(Token(literal=fmt[position:]))
    return tokens


def format_time(epoch: float) -> str:
    """When a profile was collected or registered: the viewer's time with its zone, as perun-tui shows it."""
    return local_time(epoch, seconds=True)


def format_commit_time(version) -> str:
    """A commit's time in its own zone, with the zone (as ``git log`` and perun-tui's commit pane show it)."""
    return commit_time(version.date, version.tz_offset, seconds=True)


# -- status ----------------------------------------------------------------------

def status_value(info, tag: str) -> str:
    """One ``format.status`` tag of a ProfileInfo, with control characters escaped (it comes from a profile)."""
    return escape_controls(_raw_status_value(info, tag))


def _raw_status_value(info, tag: str) -> str:
    if tag == "time":
        return format_time(info.time)
    if tag == "postprocessors":
        return "-and-".join(info.postprocessors)
    if tag == "checksum":
        return info.checksum or ""
    if tag == "origin":
        return info.origin or ""
    return str(getattr(info, tag) or "")


def status_rows(fmt: str, infos: Iterable, width: int | None = None) -> tuple[list[str], list[list[str]]]:
    """Column headers and aligned cells: the tag column, then the format's parts.

    Each tag becomes a column padded to its widest value, so the listing
    reads as a table whatever delimiters the format uses.  Rows wider than
    ``width`` leave out the columns with nothing in any row (and a delimiter
    with each), then the seconds of the times, then cut the widest columns
    with an ellipsis (a file name, commit or time never: rows with one too
    wide for the terminal stay wide).
    """
    tokens = parse_format(fmt, STATUS_TAGS, "format.status")
    infos = list(infos)
    cells = [[status_value(info, t.tag) if t.tag else (t.literal or "") for t in tokens] for info in infos]
    for i, info in enumerate(infos):
        if info.error:
            cells[i] = [info.error if t.tag == "type" else (
                "" if t.tag else (t.literal or "")) for t in tokens]
    # a profile that cannot be read has its error in one cell: the row goes on past the table, never widening it
    errors = [bool(info.error) for info in infos]
    zones = _zones_to_header(tokens, cells, errors)
    good = [row for row, bad in zip(cells, errors) if not bad]
    if width is not None and len("".join(_widest(tokens, good)).rstrip()) > width:
        tokens, cells = _fitted(tokens, cells, width, errors)
        good = [row for row, bad in zip(cells, errors) if not bad]
    headers = [f"{t.tag} {zones[id(t)]}" if id(t) in zones else t.tag or (t.literal or "") for t in tokens]
    widths = [max([len(h) if tokens[c].tag else 0 for h in headers[c : c + 1]] + [len(row[c]) for row in good])
              for c in range(len(tokens))]
    padded_headers = [(h if tokens[c].tag else " " * len(tokens[c].literal or "")).ljust(widths[c]) for c, h in enumerate(headers)]
    padded = [[row[c].ljust(widths[c]) if tokens[c].tag else row[c] for c in range(len(tokens))] for row in cells]
    return padded_headers, padded


_ZONE = re.compile(r" [+-]\d{4}$")


def _zones_to_header(tokens: list[Token], cells: list[list[str]], errors: list[bool]) -> dict[int, str]:
    """A time column whose rows share one time zone says it once, in its header (``time +0100``): the zone
    leaves its cells.  Rows of different zones (a daylight-saving change between them) keep theirs.
    Returns the zone of each such column, by the id of its token."""
    zones: dict[int, str] = {}
    for c, token in enumerate(tokens):
        if token.tag != "time":
            continue
        found = {_ZONE.search(row[c]) and row[c][-5:] for row, bad in zip(cells, errors) if not bad}
        if len(found) != 1 or None in found:
            continue
        zones[id(token)] = found.pop()
        for row, bad in zip(cells, errors):
            if not bad:
                row[c] = row[c][:-6]
    return zones


#: the tags whose values are shown whole even in a table too wide: a cut one would name nothing
_WHOLE = ("source", "checksum", "time")


def _widest(tokens: list[Token], cells: list[list[str]]) -> list[str]:
    """The widest text of each column (a tag's name as its header counts)."""
    return [max([token.tag if token.tag else token.literal or ""] + [row[c] for row in cells], key=len)
            for c, token in enumerate(tokens)]


def _minutes(text: str) -> str:
    """``2026-11-28 03:06:53`` (``+0100``) without its seconds: ``2026-11-28 03:06`` (``+0100``)."""
    return text[:16] + text[19:] if len(text) >= 19 and text[16:17] == ":" else text


def _fitted(tokens: list[Token], cells: list[list[str]], width: int,
            errors: list[bool]) -> tuple[list[Token], list[list[str]]]:
    """The columns of a status table too wide for ``width``: empty ones left out, then the widest cut (the
    rows of ``errors`` neither count nor are cut)."""
    good = [row for row, bad in zip(cells, errors) if not bad]
    keep = list(range(len(tokens)))
    for c, token in enumerate(tokens):
        if token.tag and all(not row[c].strip() for row in good):
            keep.remove(c)
            beside = c + 1 if c + 1 < len(tokens) and tokens[c + 1].tag is None else c - 1
            if beside in keep and tokens[beside].tag is None:
                keep.remove(beside)
    tokens, cells = [tokens[c] for c in keep], [[row[c] for c in keep] for row in cells]
    sizes = [len(text) for text in _widest(tokens, [row for row, bad in zip(cells, errors) if not bad])]
    excess = sum(sizes) - width
    # then the seconds of the times (the minute tells profiles apart as well, as in the TUI), never their zone
    for c, token in enumerate(tokens):
        if excess > 0 and token.tag == "time":
            cells = [row if bad else [*row[:c], _minutes(row[c]), *row[c + 1:]] for row, bad in zip(cells, errors)]
            shorter = max([len(token.tag)] + [len(row[c]) for row, bad in zip(cells, errors) if not bad])
            excess -= sizes[c] - shorter
            sizes[c] = shorter
    while excess > 0:
        # a column keeps its header and four cells at least; a file name, a commit or a time is never cut
        cuttable = [c for c, token in enumerate(tokens)
                    if token.tag and token.tag not in _WHOLE and sizes[c] > max(4, len(token.tag))]
        if not cuttable:
            break
        widest = max(cuttable, key=sizes.__getitem__)
        sizes[widest] -= 1
        excess -= 1
    cells = [row if bad else [_shorten(text, sizes[c], ellipsis=True) if tokens[c].tag and len(text) > sizes[c]
                              else text for c, text in enumerate(row)] for row, bad in zip(cells, errors)]
    return tokens, cells


# -- shortlog -------------------------------------------------------------------

def stats_text(counts) -> str:
    if counts.total == 0:
        return "---no--profiles---"
    return f"{counts.total}|{counts.memory}|{counts.mixed}|{counts.time} profiles"


def shortlog_segments(fmt: str, entry, tokens: list[Token] | None = None, width: int | None = None) -> list[Segment]:
    """Segments of one ``log --short`` line for a LogEntry; a line wider than ``width`` has its message
    shortened (with an ellipsis) by what it is too wide."""
    tokens = tokens if tokens is not None else parse_format(fmt, SHORTLOG_TAGS, "format.shortlog")
    version = entry.version
    out: list[Segment] = []
    message = -1
    for token in tokens:
        if token.literal is not None:
            out.append((token.literal, ""))
            continue
        tag = token.tag
        if tag == "changes":
            for mark in entry.changes:
                out.append((mark, "degradation" if mark == "-" else "optimization"))
            continue
        if tag in ("checksum", "id"):
            text, style = version.checksum, "checksum"
        elif tag == "stats":
            text, style = stats_text(entry.counts), ("stats" if entry.counts.total else "muted")
        elif tag == "desc":
            text, style = version.short_desc, ""
        elif tag == "date":
            text, style = format_commit_time(version), "date"
        elif tag == "author":
            text, style = version.author, "author"
        elif tag == "email":
            text, style = version.email, "author"
        else:  # parents
            digits = token.width
            text, style = ",".join(p[:digits] if digits else p for p in version.parents), "checksum"
            out.append((text, style))
            continue
        # a commit message or an author name may carry escape sequences: show them, never obey them
        text = escape_controls(text)
        if token.width is not None:
            text = _shorten(text, token.width, ellipsis=tag == "desc")
        if tag == "desc":
            message = len(out)
        out.append((text, style))
    excess = len("".join(text for text, _style in out).rstrip()) - width if width is not None else 0
    if excess > 0 and message >= 0:
        text, style = out[message]
        out[message] = (_shorten(text, max(len(text) - excess, 8), ellipsis=True), style)
    return out


def shortlog_header(fmt: str) -> str:
    """A heading line naming the columns of ``fmt``."""
    tokens = parse_format(fmt, SHORTLOG_TAGS, "format.shortlog")
    names = {"checksum": "minor", "id": "minor", "stats": "(a|m|x|t profiles)", "desc": "info"}
    parts = []
    for token in tokens:
        if token.literal is not None:
            parts.append(" " * len(token.literal.strip("()")) if token.literal.strip() in ("(", ")") else token.literal)
        else:
            name = names.get(token.tag or "", token.tag or "")
            parts.append(name.ljust(token.width) if token.width and token.tag != "desc" else name)
    return "".join(parts).rstrip()


def _shorten(text: str, width: int, *, ellipsis: bool) -> str:
    if len(text) <= width:
        return text
    if ellipsis and width > 1:
        return text[: width - 1] + "…"
    return text[:width]


# -- history graph ---------------------------------------------------------------

class GraphDrawer:
    """ASCII lanes for a newest-first walk, in the manner of ``git log --graph``.

    Feed commits in walk order to :meth:`row`; it returns connector lines to
    print before the commit, the prefix of the commit's own line, and
    connector lines to print after it.  Lane ``k`` sits in column ``2k``;
    connectors (``/`` and ``\\``) sit between lanes.
    """

    def __init__(self) -> None:
        self.lanes: list[str | None] = []

    def row(self, checksum: str, parents: Sequence[str]) -> tuple[list[str], str, list[str]]:
        before: list[str] = []
        if checksum in self.lanes:
            column = self.lanes.index(checksum)
        else:
            column = self._free_lane()
            self.lanes[column] = checksum
        # Other lanes that were waiting for this commit join its lane first.
        merged = [i for i, lane in enumerate(self.lanes) if lane == checksum and i != column]
        if merged:
            before.append(self._connector(merged, "/"))
            for i in merged:
                self.lanes[i] = None
            self._trim()
        prefix = " ".join("*" if i == column else ("|" if lane else " ") for i, lane in enumerate(self.lanes))
        self.lanes[column] = parents[0] if parents else None
        opened = []
        for parent in parents[1:]:
            if parent in self.lanes:
                continue
            slot = self._free_lane(after=column)
            self.lanes[slot] = parent
            opened.append(slot)
        after = [self._connector(opened, "\\")] if opened else []
        self._trim()
        return before, prefix.rstrip(), after

    def _connector(self, lanes: Sequence[int], mark: str) -> str:
        width = 2 * len(self.lanes)
        cells = [" "] * width
        for i, lane in enumerate(self.lanes):
            if lane is not None and i not in lanes:
                cells[2 * i] = "|"
        for i in lanes:
            cells[2 * i - 1] = mark
        return "".join(cells).rstrip()

    def _trim(self) -> None:
        while self.lanes and self.lanes[-1] is None:
            self.lanes.pop()

    def _free_lane(self, after: int = -1) -> int:
        for i in range(after + 1, len(self.lanes)):
            if self.lanes[i] is None:
                return i
        self.lanes.append(None)
        return len(self.lanes) - 1
