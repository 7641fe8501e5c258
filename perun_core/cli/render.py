"""Turning API results into terminal lines (ANSI colour only when asked)."""

from __future__ import annotations

import sys
from collections.abc import Iterator

from perun_core import api
from perun_core.api import escape_controls
from perun_core.api.text import escape_controls as _safe, format_change
from perun_core.cli.terminal import paint, paint_segments, wrap_segments
from perun_core.cli.status_format import (
    SHORTLOG_TAGS,
    GraphDrawer,
    format_commit_time,
    parse_format,
    shortlog_header,
    shortlog_segments,
    stats_text,
    status_rows,
)


def render_status(report, *, short: bool, color: bool, width: int | None = None) -> list[str]:
    """The lines of ``status``; the tables of profiles fit ``width`` columns when given."""
    head = report.head
    lines = []
    dirty = " (uncommitted changes)" if report.dirty else ""
    if short:
        lines.append(
            f"{paint(report.major, 'heading', color)}@{paint(head.checksum[:7], 'checksum', color)}{dirty}: "
            f"{len(report.registered)} registered, {len(report.pending)} pending"
        )
    else:
        lines.append(f"On major version {paint(report.major, 'heading', color)} "
                     f"(minor version: {paint(head.checksum, 'checksum', color)}){dirty}")
        parents = ", ".join(p[:7] for p in head.parents) or "none (root)"
        lines.append(f"Parents: {parents}")
        # the commit's author and message come from the repository: shown, never obeyed by the terminal
        lines.append(f"Author:  {_safe(head.author)} <{_safe(head.email)}>  {format_commit_time(head)}")
        lines.append("")
        lines.extend("    " + _safe(line) for line in head.desc.splitlines() or [""])
        lines.append("")
    lines.extend(_profile_section("Tracked profiles", report.registered, report.status_format, short, color,
                                  empty="(no tracked profiles at this minor version)", width=width))
    lines.extend(_profile_section("Pending profiles", report.pending, report.status_format, short, color,
                                  empty="(no pending profiles)", width=width))
    if report.pending_elsewhere:
        others = report.pending_elsewhere
        at = len(lines) - 1 if lines and lines[-1] == "" else len(lines)  # before the section's closing blank line
        lines.insert(at, paint(
            f"  ({others} more pending profile{'s' if others != 1 else ''} of other commits: "
            "'perun-core log' lists each under its commit)", "muted", color))
    lines.extend(_check_section(report.checks, short, color, width))
    return lines


_MARKS = {"Degradation": "-", "SevereDegradation": "-", "TotalDegradation": "-", "MaybeDegradation": "~",
          "Optimization": "+", "SevereOptimization": "+", "TotalOptimization": "+", "MaybeOptimization": "~"}


def _check_section(findings, short: bool, color: bool, width: int | None = None) -> list[str]:
    """What the last degradation check of HEAD found (nothing when it was never checked), each finding wrapped
    to ``width`` columns when given."""
    if findings is None:
        return []
    lines = [paint(f"Performance changes found by the last check ({len(findings)}):", "heading", color)]
    for record in findings[: 5 if short else None]:
        result = str(record.get("result", ""))
        style = "degradation" if "Degradation" in result else "optimization" if "Optimization" in result else ""
        rel = record.get("delta_rel")
        change = f" ({format_change(rel, record.get('from'))})" if isinstance(rel, (int, float)) else ""
        segments = [("  ", ""), (_MARKS.get(result, "?") + " " + _safe(result), style),
                    (f" at {_safe(record.get('uid', ''))}{change} [{_safe(record.get('method', ''))}] in "
                     f"{_safe(record.get('source', ''))}", "")]
        lines.extend(paint_segments(line, color)
                     for line in (wrap_segments(segments, width, cut_words=False) if width else [segments]))
    if not findings and not short:
        lines.append(paint("  (no performance changes)", "muted", color))
    return lines


def _profile_section(title: str, infos, fmt: str, short: bool, color: bool, empty: str,
                     width: int | None = None) -> list[str]:
    lines = [paint(f"{title} ({len(infos)}):", "heading", color)]
    if not infos:
        if not short:
            lines.append(paint(f"  {empty}", "muted", color))
        return lines
    tag_width = max(len("id"), *(len(i.tag) for i in infos))
    headers, rows = status_rows(fmt, infos, None if width is None else width - 3 - tag_width)
    if not short:
        # the format's own text (format.status) is escaped too: it comes from a configuration file
        lines.append(paint("  " + "id".ljust(tag_width) + " " + _safe("".join(headers).rstrip()), "muted", color))
    for info, row in zip(infos, rows):
        body = _safe("".join(row).rstrip())
        style = "error" if info.error else ""
        lines.append("  " + paint(info.tag.ljust(tag_width), "tag", color) + " " + paint(body, style, color))
    if not short:
        lines.append("")
    return lines


def render_log(revision: str | None, *, short: bool, graph: bool, limit: int | None, color: bool,
               width: int | None = None) -> Iterator[str]:
    """Lines of `log`, produced while the history is walked; a pending profile's file goes on the line under
    it where its line would be wider than ``width``."""

    with api.open_repository() as repo:
        fmt = api.log_format(repo=repo)
        tokens = parse_format(fmt, SHORTLOG_TAGS, "format.shortlog") if short else None
        entries = api.log(revision, with_profiles=not short, repo=repo)
        drawer = GraphDrawer() if graph else None
        if short:
            yield paint(_safe(shortlog_header(fmt)), "muted", color)
        for count, entry in enumerate(entries):
            if limit is not None and count >= limit:
                break
            version = entry.version
            if entry.error:
                sys.stderr.write(f"warning: {escape_controls(entry.error)}; run 'perun-core fsck --repair'\n")
            before, prefix, connectors = drawer.row(version.checksum, version.parents) if drawer else ([], "", [])
            for connector in before:
                yield paint(connector, "graph", color)
            lead = paint(prefix, "graph", color) + " " if prefix else ""
            pad = paint(_continuation(prefix), "graph", color) + " " if prefix else ""
            if short:
                room = None if width is None else width - len(prefix) - bool(prefix)
                yield (lead + "".join(paint(_safe(text), style, color)
                                      for text, style in shortlog_segments(fmt, entry, tokens, room))).rstrip()
            else:
                yield lead + paint(f"Minor Version {version.checksum}", "checksum", color)
                if len(version.parents) > 1:
                    yield pad + "Merge:  " + " ".join(p[:7] for p in version.parents)
                yield pad + f"Author: {_safe(version.author)} <{_safe(version.email)}> {format_commit_time(version)}"
                # the counts say which is which: 2|1|0|1 alone left the reader to guess
                yield pad + "Profiles: " + paint(stats_text(entry.counts), "stats" if entry.counts.total else "muted", color) + (
                    " (all|memory|mixed|time)" if entry.counts.total else "") + (
                    " " + "".join(paint(m, "degradation" if m == "-" else "optimization", color) for m in entry.changes)
                    if entry.changes else "")
                yield pad
                for line in version.desc.splitlines() or [""]:
                    yield pad + "    " + _safe(line)
                for info in [*entry.profiles, *entry.pending]:
                    what = _safe(f"[{info.type}] {info.cmd} {info.args} {info.workload} ({info.collector})")
                    waiting = "" if info.registered else paint("pending: " + _safe(info.source), "muted", color)
                    line = f"    {paint(info.tag, 'tag', color)} {what}".rstrip()
                    plain = len(_continuation(prefix)) + 1 + len(f"    {info.tag} {what} pending: {info.source}")
                    if waiting and width is not None and plain > width:
                        yield pad + line
                        yield pad + " " * (5 + len(info.tag)) + waiting
                    else:
                        yield pad + f"{line} {waiting}".rstrip()
                yield pad
            for connector in connectors:
                yield paint(connector, "graph", color)


def _continuation(prefix: str) -> str:
    return prefix.replace("*", "|")
