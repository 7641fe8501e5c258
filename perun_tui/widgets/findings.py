"""The findings of a check as the TUI shows them: their table's columns, their text, the filter bar and the
detail of the selected one (used by the check screen and the whole-finding dialog)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.geometry import Size
from textual.widget import Widget

from perun_core.api import escape_controls, format_amount, format_change, in_words_of

from .columns import Column

#: (name, label, predicate on a PerformanceChange) of the result filters, in the order f cycles them
FILTERS: tuple[tuple[str, str, Callable[[Any], bool]], ...] = (
    ("all", "all", lambda result: True),
    ("changes", "changes", lambda result: result.is_change),
    ("degradations", "degradations", lambda result: result.is_degradation),
    ("optimizations", "optimizations", lambda result: result.is_optimization),
    ("maybe", "maybe", lambda result: result.is_maybe),
    ("other", "no change / other", lambda result: not result.is_change),
)

RESULT_STYLES = {
    "degradation": "bold red",
    "optimization": "bold green",
    "maybe": "yellow",
    "muted": "dim",
    "error": "bold magenta",
    "notice": "cyan",
}

#: the findings' columns, dropped from the least useful on when the width is short (widgets/columns.py);
#: the line under the table names the selected finding's two profiles
FINDING_COLUMNS = (
    # the line under the table names the selected finding's commit too: at 40 columns it gives way to the delta
    Column("commit", "commit", 3, 7),
    # cut in the middle: "./sll-bench [max_rss]" keeps the subtype that tells its rows apart
    Column("location", "location", 0, 12, 40, shrink=True, middle=True),
    # cut to "~ MaybeD…" at the least (for the delta at 40 columns): the glyph and the word's start still tell
    # the results apart
    Column("result", "result", 1, 9, 19, squeeze=True),
    # at most "+1250.0%": "below resolution" (a change from 0) is cut rather than push "from → to" out
    Column("delta", "delta", 2, 6, 10),
    Column("change", "from → to", 4, 9, 23),
    Column("confidence", "confidence", 5, 8),
    Column("method", "method", 6, 6, 30),
)

#: narrower than this, the compare screen stacks the two plots
STACK_BELOW = 120


def finding_amount(finding: Any, value: Any) -> str:
    """One of the finding's amounts with its unit (``183.9 ms``), as the command line prints it."""
    return format_amount(value, finding.unit)


def finding_delta(finding: Any) -> str:
    """The finding's change: its percentage, else its amount of change with the unit."""
    if finding.delta_rel is not None:
        return format_change(finding.delta_rel, finding.from_)
    if finding.delta_abs is not None:
        text = format_amount(finding.delta_abs, finding.unit)
        return text if text.startswith("-") else "+" + text
    return "-"


def finding_text(pair: Any, finding: Any) -> Text:
    """Everything the check says of one finding, a part a line, wrapped where it is shown."""
    result = finding.result
    text = Text()
    text.append(f"{result.glyph} {result.value}", style=RESULT_STYLES.get(result.style, ""))
    text.append(f" at {escape_controls(finding.location)}\n")
    text.append(f"{finding_amount(finding, finding.from_)} → {finding_amount(finding, finding.to)} · {finding_delta(finding)}\n")
    # a label and its value a line, as baseline and target: after ' · ' on one line, the widget broke
    # '· method' from 'size_aware_rank_test' at 80 columns
    text.append("confidence ", style="dim")
    text.append(finding_confidence(finding) + "\n")
    text.append("method ", style="dim")
    text.append(escape_controls(finding.method or "-") + "\n")
    if finding.reason:
        text.append(escape_controls(in_words_of(finding.reason, "tui")) + "\n", style="italic")
    text.append("baseline ", style="dim")
    text.append(escape_controls(pair.baseline.name) + "\n")
    text.append("target   ", style="dim")
    text.append(escape_controls(pair.target.name))
    return text


def finding_confidence(finding: Any) -> str:
    if finding.confidence_type in ("", "no", None):
        return "-"
    return f"{finding.confidence_type} {finding.confidence_rate:.2f}"


class FilterBar(Widget):
    """Every filter, the current one in reverse; too narrow for all of them, only the current one and ``f``."""

    DEFAULT_CSS = "FilterBar { height: 1; }"

    def __init__(self, **keywords: Any) -> None:
        super().__init__(**keywords)
        self.chosen = 0
        self.counts = ""

    def show(self, chosen: int, counts: str) -> None:
        self.chosen, self.counts = chosen, counts
        self.refresh()

    def render(self) -> Text:
        line = Text(" show: ", style="dim", no_wrap=True, overflow="ellipsis")
        for number, (_name, label, _keep) in enumerate(FILTERS):
            line.append(f" {label} ", style="reverse bold" if number == self.chosen else "")
        width = self.content_size.width
        if width <= 0 or line.cell_len <= width:
            # the counts are the first to go when there is no room for them
            if self.counts and (width <= 0 or line.cell_len + len(self.counts) + 2 <= width):
                line.append(f"  {self.counts}", style="dim")
            return line
        short = Text(" show: ", style="dim", no_wrap=True, overflow="ellipsis")
        short.append(f" {FILTERS[self.chosen][1]} ", style="reverse bold")
        short.append(f"  {self.counts} · f: next" if self.counts else "  f: next", style="dim")
        short.truncate(width, overflow="ellipsis")
        return short


class FindingDetail(Widget):
    """The selected finding, wrapped; longer than the rows it got, its last row ends in a pointer to ``i``."""

    DEFAULT_CSS = "FindingDetail { height: auto; }"
    MORE = " … i: all of it"

    def __init__(self, **keywords: Any) -> None:
        super().__init__(**keywords)
        self.detail = Text()

    def show(self, text: Text) -> None:
        self.detail = text
        self.clear_cached_dimensions()
        self.refresh(layout=True)

    def _lines(self, width: int) -> list[Text]:
        return list(self.detail.wrap(self.app.console, max(width, 1))) if self.detail else []

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines(width))

    def render(self) -> Text:
        width, height = self.content_size
        lines = self._lines(width)
        if 0 < height < len(lines):
            lines = lines[:height]
            last = lines[-1]
            last.truncate(max(width - len(self.MORE), 0))
            last.rstrip()
            last.append(self.MORE, style="bold")
        return Text("\n").join(lines)
