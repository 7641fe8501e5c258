"""Check reports as the history tree of spec chapter 8, as JSON records, as JUnit XML and as Markdown.

The tree is produced as lines of ``(text, style)`` segments; front ends
paint the styles (``degradation``, ``optimization``, ``maybe``, ``muted``,
``error``, ``notice``, ``checksum``, ``heading``, ``graph``) or print the
text as it is -- every result carries its name and a glyph, so nothing
depends on colour.

Uids, commands, file names and reasons come from profiles: every form
escapes their control characters (:mod:`perun_core.safetext`), so a report
can neither act on the terminal that shows it nor be invalid XML.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..amounts import format_amount, format_change
from ..safetext import escape_controls, escape_lines
from .results import Finding, PerformanceChange

if TYPE_CHECKING:  # pragma: no cover
    from .report import CheckReport, PairReport, VersionReport

__all__ = ["JSON_KEYS", "format_value", "json_records", "junit_xml", "markdown", "note_lines", "summary", "tree_lines"]

Segment = tuple[str, str]
Line = list[Segment]

#: The keys of every JSON record, in order.
JSON_KEYS = ("baseline", "target", "method", "uid", "result", "type", "from", "to", "delta_abs", "delta_rel",
             "unit", "confidence_type", "confidence_rate", "reason")
_RESULT_WIDTH = max(len(r.value) for r in PerformanceChange)


def format_value(value: Any, unit: str = "") -> str:
    """A measured value with its unit (:func:`~perun_core.amounts.format_amount`); model names and text as they are."""
    return format_amount(value, unit)


def _signed(value: Any, unit: str) -> str:
    """An amount of change with its sign: ``+64.3 ms``."""
    text = format_amount(value, unit)
    return text if text.startswith("-") or not isinstance(value, (int, float)) else "+" + text


def _detail(finding: Finding) -> str:
    result = finding.result
    unit = finding.unit
    if result is PerformanceChange.UNKNOWN:
        return f"reason: {finding.reason or 'not known'}"
    if result is PerformanceChange.NOT_IN_BASELINE:
        return f"new, now: {format_value(finding.to, unit)}"
    if result is PerformanceChange.NOT_IN_TARGET:
        return f"gone, was: {format_value(finding.from_, unit)}"
    text = f"from: {format_value(finding.from_, unit)} -> to: {format_value(finding.to, unit)}"
    extra = []
    if finding.delta_rel is not None and isinstance(finding.from_, (int, float)) and isinstance(finding.to, (int, float)):
        if finding.from_ and finding.to and finding.from_ > 0 and finding.to > 0:
            extra.append(f"x{finding.to / finding.from_:.3g}")
    if finding.delta_rel is not None:
        extra.append(format_change(finding.delta_rel, finding.from_))
    if finding.confidence_type and finding.confidence_type != "no":
        extra.append(f"confidence {finding.confidence_type} = {finding.confidence_rate:.2f}")
    if extra:
        text += " (" + ", ".join(extra) + ")"
    if finding.reason and finding.result.is_change:
        text += f"; {finding.reason}"
    return text


def _explanation(finding: Finding) -> Any:
    """The explanation ``check --explain`` attached (see :mod:`perun_core.check.explain`), or None."""
    found = finding.details.get("explanation") if finding.details else None
    return found if found is not None and hasattr(found, "functions") else None


def _explanation_text(finding: Finding) -> str:
    """The explanation in one paragraph: the headline and the top functions."""
    explanation = _explanation(finding)
    if explanation is None:
        return ""
    if explanation.message:
        return explanation.headline()
    return explanation.headline() + " " + "; ".join(f.text(explanation.unit) for f in explanation.functions)


def _finding_lines(finding: Finding, bar: str, shown: set[int] | None = None) -> list[Line]:
    result = finding.result
    head = f"{result.glyph} {result.value:<{_RESULT_WIDTH}}"
    lines = [
        [(bar, "graph"), ("   ", ""), (head, result.style), (f" at {finding.location}", "")],
        [(bar, "graph"), ("       ", ""), (_detail(finding), "muted" if not result.is_change else "")],
    ]
    explanation = _explanation(finding)
    if explanation is not None:
        if shown is not None and id(explanation) in shown:
            lines.append([(bar, "graph"), ("       ", ""), ("explained as above", "muted")])
            return lines
        if shown is not None:
            shown.add(id(explanation))
        lines.append([(bar, "graph"), ("       ", ""), (explanation.headline(),
                                                         "notice" if explanation.message else "heading")])
        for rank, function in enumerate(explanation.functions, 1):
            lines.append([(bar, "graph"), ("         ", ""), (f"{rank}. ", "muted"),
                          (function.text(explanation.unit), result.style if rank == 1 else "")])
            for below in function.through:
                lines.append([(bar, "graph"), ("            ", ""), (below.text(explanation.unit), "muted")])
        for note in explanation.notes:
            lines.append([(bar, "graph"), ("         ", ""), (note, "muted")])
        if explanation.reused:
            lines.append([(bar, "graph"), ("         ", ""), ("reused " + ", ".join(explanation.reused), "muted")])
        for path in explanation.written if shown is None or id(explanation) not in shown else ():
            lines.append([(bar, "graph"), ("         ", ""), (f"wrote {path}", "muted")])
        if not explanation.reused and not explanation.written and len(explanation.profiles) == 2:
            lines.append([(bar, "graph"), ("         ", ""),
                          (f"compared {explanation.profiles[0]} -> {explanation.profiles[1]}", "muted")])
    return lines


def _pair_lines(pair: PairReport, bar: str, verbose: int, show_baseline: bool) -> Iterator[Line]:
    if show_baseline:
        base = pair.baseline
        where = f"{base.minor[:7]}" if base.minor else base.name
        line: Line = [(bar, "graph"), ("   ", ""), ("| * ", "graph"), (where, "checksum"),
                      (f": {base.desc or base.source}", "")]
        if base.pending:
            line.append((f" (baseline is the pending profile {base.source})", "maybe"))
        yield line
    target = [(bar, "graph"), ("   ", ""), (f"> {pair.target.config}", "muted")]
    if pair.target.pending:
        target.append((f" (pending profile {pair.target.source})", "maybe"))
    yield target
    by_method: dict[str, list[Finding]] = {}
    explained: set[int] = set()
    for finding in pair.findings:
        by_method.setdefault(finding.method, []).append(finding)
    for method in pair.methods or tuple(by_method):
        yield [(bar, "graph"), ("   ", ""), (f"> applying '{method}' method", "muted")]
        findings = by_method.get(method, [])
        shown = [f for f in findings if verbose or f.result is not PerformanceChange.NO_CHANGE]
        for finding in shown:
            yield from _finding_lines(finding, bar, explained)
        quiet = len(findings) - len(shown)
        if quiet:
            yield [(bar, "graph"), ("   ", ""), (f"= no change at {quiet} location{'s' if quiet != 1 else ''}", "muted")]
    for error in pair.errors:
        yield [(bar, "graph"), ("   ", ""), (f"! {error}", "error")]


def _version_lines(version: VersionReport, verbose: int) -> Iterator[Line]:
    info = version.version
    if info is not None:
        yield [("* ", "graph"), (info.checksum[:7], "checksum"), (f": {info.short_desc}", "")]
    elif version.pairs:
        pair = version.pairs[0]
        yield [("* ", "graph"), ("baseline: ", "muted"), (pair.baseline.name, "heading")]
        yield [("* ", "graph"), ("target:   ", "muted"), (pair.target.name, "heading")]
    for pair in version.pairs:
        yield from _pair_lines(pair, "|", verbose, show_baseline=info is not None)
    for ref in version.unpaired:
        yield [("|", "graph"), ("   ", ""), (f"> no baseline for {ref.source} ({ref.config})", "muted")]
    for line in version.skipped:
        yield [("|", "graph"), ("   ", ""), (f"> {line}", "muted")]
    yield [("|", "graph")]


def summary(report: CheckReport) -> Line:
    """One closing line: how many pairs, degradations and optimizations."""
    degradations, optimizations = report.degradations, report.optimizations
    maybe = report.count(lambda r: r.is_maybe)
    parts = [(f"{report.pairs} pair{'s' if report.pairs != 1 else ''} of profiles checked: ", "")]
    parts.append((f"{degradations} degradation{'s' if degradations != 1 else ''}",
                  "degradation" if degradations else ""))
    parts.append((", ", ""))
    parts.append((f"{optimizations} optimization{'s' if optimizations != 1 else ''}",
                  "optimization" if optimizations else ""))
    if maybe:
        parts.append((f", {maybe} uncertain", "maybe"))
    if report.collected:
        parts.append((f" (profiles collected for {len(report.collected)} version"
                      f"{'s' if len(report.collected) != 1 else ''})", "muted"))
    pending = report.pending_pairs
    if pending:
        parts.append((f"; {pending} pair{'s' if pending != 1 else ''} used pending profiles, which 'add' registers",
                      "muted"))
    return parts


def note_lines(report: CheckReport) -> Iterator[Line]:
    """One line per distinct warning or piece of advice of the report (each said once)."""
    for note in report.notes:
        yield [("note: ", "notice"), (note, "")]


def tree_lines(report: CheckReport, *, verbose: int = 0) -> Iterator[Line]:
    """The report as the history tree of spec chapter 8, newest version first; every segment escaped."""
    for line in _raw_tree_lines(report, verbose):
        yield [(escape_controls(text), style) for text, style in line]


def _raw_tree_lines(report: CheckReport, verbose: int) -> Iterator[Line]:
    for version in report.versions:
        if not version.pairs and not version.unpaired and not version.skipped:
            continue
        yield from _version_lines(version, verbose)
    if not report.pairs:
        yield [("no pair of profiles to compare: no version holds an earlier profile of the same configuration",
                "muted")]
    yield summary(report)
    yield from note_lines(report)


def json_records(report: CheckReport) -> list[dict[str, Any]]:
    """One record per finding with the keys of :data:`JSON_KEYS` (NoChange included).

    ``from``, ``to`` and ``delta_abs`` stay raw numbers (in the profile's unit,
    which ``unit`` names), so scripts compute with them.
    """
    records = []
    for _version, pair, finding in report.findings():
        record = finding.to_record()
        records.append({
            "baseline": pair.baseline.name,
            "target": pair.target.name,
            "method": finding.method,
            **{key: record[key] for key in JSON_KEYS[3:-1]},
            "reason": finding.reason,
        })
        explanation = _explanation(finding)
        if explanation is not None:
            records[-1]["explained_by"] = [f.to_record() for f in explanation.functions]
            records[-1]["explanation"] = {k: v for k, v in explanation.to_record().items() if k != "functions"}
    return records


def junit_xml(report: CheckReport, fail_on: str = "degradation") -> str:
    """JUnit XML: one test suite per pair, one test case per finding; degradations fail (see ``fail_on``)."""
    import xml.etree.ElementTree as ET

    def fails(result: PerformanceChange) -> bool:
        if fail_on == "never":
            return False
        if fail_on == "maybe":
            return result.is_degradation
        return result.is_degradation and not result.is_maybe

    root = ET.Element("testsuites", name="perun check")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for _version_report in report.versions:
        for pair in _version_report.pairs:
            suite = ET.SubElement(root, "testsuite", name=escape_controls(f"{pair.target.name} vs {pair.baseline.name}"))
            counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
            for finding in pair.findings:
                counts["tests"] += 1
                case = ET.SubElement(suite, "testcase", classname=escape_controls(f"perun.check.{finding.method}"),
                                     name=escape_controls(finding.location))
                detail = f"{finding.result.value} at {finding.location}: {_detail(finding)}"
                if _explanation(finding) is not None:
                    detail += f"; {_explanation_text(finding)}"
                detail = escape_controls(detail)
                if fails(finding.result):
                    counts["failures"] += 1
                    failure = ET.SubElement(case, "failure", type=finding.result.value, message=detail)
                    failure.text = detail
                elif finding.type == "error":
                    counts["errors"] += 1
                    ET.SubElement(case, "error", type="MethodFailed", message=escape_controls(finding.reason or ""))
                elif finding.result is PerformanceChange.UNKNOWN:
                    counts["skipped"] += 1
                    ET.SubElement(case, "skipped", message=escape_controls(finding.reason or "unknown"))
                else:
                    out = ET.SubElement(case, "system-out")
                    out.text = detail
            for key, value in counts.items():
                suite.set(key, str(value))
                totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _cell(text: Any) -> str:
    """Text safe inside a Markdown table cell: pipes escaped, newlines and backticks tamed, controls escaped."""
    return escape_controls(str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("`", "'"))


def _code(text: Any) -> str:
    return f"`{_cell(text)}`"


def _change(finding: Finding) -> str:
    parts = []
    if finding.delta_rel is not None and isinstance(finding.delta_rel, (int, float)) and math.isfinite(finding.delta_rel):
        parts.append(format_change(finding.delta_rel, finding.from_))
    if finding.delta_abs is not None and isinstance(finding.delta_abs, (int, float)) and math.isfinite(finding.delta_abs):
        parts.append(f"({_signed(finding.delta_abs, finding.unit)})")
    return " ".join(parts) or "-"


def _confidence(finding: Finding) -> str:
    if not finding.confidence_type or finding.confidence_type == "no":
        return "-"
    return f"{finding.confidence_type} {finding.confidence_rate:.2f}"


def _markdown_explanations(changes: list[tuple[Any, Finding]]) -> list[str]:
    """A "Why?" block per explained job: the functions adding up to most of its change."""
    # lazy: keeps `perun-core check profiles` light
    from .explain import relative_text

    lines: list[str] = []
    seen: set[int] = set()
    for pair, finding in changes:
        explanation = _explanation(finding)
        if explanation is None or id(explanation) in seen:
            continue
        seen.add(id(explanation))
        lines.append(f"**{_cell(finding.location)}** ({_code(pair.baseline.name)} → {_code(pair.target.name)}) "
                     f"{_cell(explanation.headline())}")
        lines.append("")
        if explanation.functions:
            lines += ["| # | Function | Where | Baseline | Target | Change | Share of the change |",
                      "|---|---|---|---|---|---|---|"]
            for rank, f in enumerate(explanation.functions, 1):
                rel = relative_text(f.relative) if f.relative is not None else f.status
                if f.p_value is not None:
                    rel += f" (p = {f.p_value:.2g})"
                lines.append(f"| {rank} | {_code(f.function)} | {_code(f.where) if f.where else '-'} | "
                             f"{format_value(f.baseline, explanation.unit)} | {format_value(f.target, explanation.unit)} | {_cell(rel)} | "
                             f"{100 * f.share:.0f} % |")
                for below in f.through:
                    lines.append(f"| | ↳ through {_code(below.function)} | | {format_value(below.baseline)} | "
                                 f"{format_value(below.target)} | | |")
            lines.append("")
        lines += [f"_{_cell(note)}_" for note in explanation.notes] + ([""] if explanation.notes else [])
    return lines


def markdown(report: CheckReport, fail_on: str = "degradation") -> str:
    """The report as GitHub-flavoured Markdown, for pull-request comments and ``$GITHUB_STEP_SUMMARY``.

    A heading with the verdict, a table of the changes (degradations first,
    then optimizations, uncertain ones marked) with baseline -> target,
    from / to, change and confidence, then the unchanged and other locations
    collapsed in ``<details>`` blocks, and the errors.
    """
    changes: list[tuple[Any, Finding]] = []
    quiet: list[tuple[Any, Finding]] = []
    other: list[tuple[Any, Finding]] = []
    for _version, pair, finding in report.findings():
        if finding.result.is_change:
            changes.append((pair, finding))
        elif finding.result is PerformanceChange.NO_CHANGE:
            quiet.append((pair, finding))
        else:
            other.append((pair, finding))
    changes.sort(key=lambda item: (not item[1].result.is_degradation, item[1].result.is_maybe))
    failed = report.failed(fail_on)
    verdict = "degradation found" if failed else "no degradation"
    lines = [f"### perun check: {verdict}", ""]
    lines.append("".join(text for text, _style in summary(report)) + ".")
    lines.append("")
    if changes:
        lines += ["| | Result | Location | Baseline → Target | From | To | Change | Confidence | Method |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for pair, finding in changes:
            result = finding.result
            lines.append(
                f"| {_cell(result.glyph)} | **{result.value}** | {_code(finding.location)} | "
                f"{_code(pair.baseline.name)} → {_code(pair.target.name)} | {_cell(format_value(finding.from_, finding.unit))} | "
                f"{_cell(format_value(finding.to, finding.unit))} | {_cell(_change(finding))} | {_cell(_confidence(finding))} | "
                f"{_cell(finding.method)} |")
        lines.append("")
        lines += _markdown_explanations(changes)
    for title, items in ((f"{len(quiet)} location{'s' if len(quiet) != 1 else ''} without change", quiet),
                         (f"{len(other)} other finding{'s' if len(other) != 1 else ''}", other)):
        if not items:
            continue
        lines += ["<details>", f"<summary>{title}</summary>", "",
                  "| Result | Location | Baseline → Target | Detail | Method |", "|---|---|---|---|---|"]
        for pair, finding in items:
            lines.append(f"| {finding.result.value} | {_code(finding.location)} | {_code(pair.baseline.name)} → "
                         f"{_code(pair.target.name)} | {_cell(_detail(finding))} | {_cell(finding.method)} |")
        lines += ["", "</details>", ""]
    unpaired = [ref for version in report.versions for ref in version.unpaired]
    if unpaired:
        lines.append(f"{len(unpaired)} profile{'s' if len(unpaired) != 1 else ''} had no baseline to compare with.")
        lines.append("")
    for error in report.errors:
        lines.append(f"> **error:** {_cell(error)}")
    # the cells are escaped already; this also covers the summary and the headings
    return escape_lines("\n".join(lines).rstrip("\n")) + "\n"
