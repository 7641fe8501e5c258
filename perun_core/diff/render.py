"""The views of a :class:`~perun_core.diff.Comparison`: short table, difference flame graph, bars, HTML report.

* ``short``: one row per uid and subtype (baseline, target, absolute and
  relative change, unit), by impact; increases red, decreases green; then
  the functions, by the size of their exclusive change, with their share
  of the whole program's change.  A table wider than the terminal puts
  each row on lines of its own (its name, then its numbers under their
  headers): numbers are never cut; names are shortened in the middle.
* ``flamegraph``: the difference flame graph.  Frames are as wide as in the
  target's flame graph and coloured by how their own (exclusive) amount
  changed: red grew, blue shrank, the deeper the more (relative to the
  largest change); frames new in the target are the deepest red.  In the
  terminal each frame's name starts with ``+`` (grew or new), ``-`` (shrank)
  or ``=`` (the same: moved less than the comparison's noise floor, the
  table's ``same``), so the change reads without colour.  Output
  as a terminal icicle, an interactive SVG (the tooltip gives both amounts
  and the change) or the *folded pair* (``stack BASELINE TARGET`` lines, as
  Brendan Gregg's difffolded.pl writes them).  The layout is the flame
  graph view's own (:mod:`perun_core.views.flamegraph`).
* ``bars``: baseline and target side by side per uid, one block per type,
  subtype and unit (units are never drawn on one scale).
* ``report``: one self-contained HTML file (no script or style from the
  network) with the table, the functions, the difference flame graph and
  the bars.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from ..advice import FOLDED
from ..errors import IncomparableProfiles, UnsupportedProfile, UsageError
from ..views.base import RenderOptions
from ..views.flamegraph import SVG_WIDTH, build, layout_flame, paused_gc, render_icicle, render_svg
from ..amounts import format_amount, format_percent, relative_change, wrap_text
from ..views.style import DEFAULT_THEME, RGB, fit, fit_middle, pad, paint, text_width
from . import NOISE_FLOOR, Change, Comparison, under_noise_floor
from .bars import DOWN, UP, bars_svg, render_bars
from .columns import amount_cell as _number

__all__ = ["DiffFlame", "VIEWS", "build_flame", "flame_legend", "folded_pair", "render", "render_bars", "render_report",
           "render_short"]

VIEWS = ("short", "flamegraph", "bars", "report")
FORMATS = {"short": ("text",), "flamegraph": ("icicle", "svg", "folded"), "bars": ("text",), "report": ("html",)}


def _signed(value: float, unit: str = "", column: bool = False) -> str:
    """An amount of change with its sign and unit: ``+64.3 ms``, ``-2 samples`` (``column``: a table's cell,
    see :func:`~perun_core.amounts.format_amount`)."""
    text = format_amount(round(value, 6) if isinstance(value, float) else value, unit, column=column)
    return text if text.startswith("-") else "+" + text


def _percent(fraction: float) -> str:
    return format_percent(100 * fraction)


def _relative(change: Change) -> str:
    if change.status == "new":
        return "new"
    if change.status == "gone":
        return "gone"
    rel = change.relative
    return "n/a" if rel is None else _percent(rel)


def _tint(text: str, delta: float, color: bool) -> str:
    if not color or delta == 0:
        return text
    return paint(text, colour=UP if delta > 0 else DOWN)


def _pair_title(comparison: Comparison, suffix: str, width: int) -> list[str]:
    """``BASELINE -> TARGET`` and ``suffix`` in one line of ``width`` columns, else one line per name.

    Profile names differ anywhere (the workload in their middle, the time at
    their end): a name too long even for its own line is shortened in its
    middle, with an ellipsis, rather than cut off at the edge.
    """
    line = f"{comparison.baseline_name} -> {comparison.target_name}{suffix}"
    if text_width(line) <= width:
        return [line]
    return [fit_middle(f"baseline: {comparison.baseline_name}", width),
            fit_middle(f"target:   {comparison.target_name}{suffix}", width)]


def _wrap(text: str, width: int) -> list[str]:
    """A sentence on lines of at most ``width`` columns, an amount kept with its unit on one line."""
    return wrap_text(text, width)


@dataclass
class _Row:
    """A row of a table of numbers: its name, its cells, and the change that tints ``tinted`` cells."""

    name: str
    cells: tuple[str, ...]
    moved: float = 0.0


def _stacked(name_title: str, titles: tuple[str, ...], rows: list[_Row], tinted: tuple[int, ...], *,
             width: int, color: bool) -> list[str]:
    """A table too wide for ``width``: each row's name on a line, its numbers on the lines under it.

    The number columns are packed, in order, onto as few lines as fit
    (indented by two); the header says which column is where.  Columns are
    two apart, or one where that saves a line per row (a table a column or
    two too wide for one line, such as the functions' at 80x24).  A name is
    shortened in the middle, where it is least telling; a number is never
    cut unless one alone is wider than the terminal.
    """
    sizes = [max([text_width(t)] + [text_width(r.cells[i]) for r in rows]) for i, t in enumerate(titles)]
    wide, narrow = _packed(sizes, width, 2), _packed(sizes, width, 1)
    groups, gap = (narrow, " ") if len(narrow) < len(wide) else (wide, "  ")

    def lines(cells: tuple[str, ...], moved: float, header: bool) -> list[str]:
        out = []
        for group in groups:
            plain = [pad(cells[index], sizes[index], right=True) for index in group]
            if text_width("  " + gap.join(plain)) > width:  # one number alone wider than the terminal
                out.append(fit(("  " + gap.join(plain)).rstrip(), width))
                continue
            out.append("  " + gap.join(text if header or index not in tinted else _tint(text, moved, color)
                                       for index, text in zip(group, plain)))
        return out

    head = [fit_middle(name_title, width), *lines(titles, 0, True)]
    out = [paint(line, bold=True) for line in head] if color else head
    for row in rows:
        out.append(fit_middle(row.name, width))
        out.extend(line.rstrip() for line in lines(row.cells, row.moved, False))
    return out


def _packed(sizes: list[int], width: int, gap: int) -> list[list[int]]:
    """Column indexes in order, on as few lines of ``width`` as fit (indented by two, ``gap`` apart)."""
    groups: list[list[int]] = [[]]
    used = 2
    for index, size in enumerate(sizes):
        if groups[-1] and used + gap + size > width:
            groups.append([])
            used = 2
        used += size + (gap if groups[-1] else 0)
        groups[-1].append(index)
    return groups


def _types(comparison: Comparison) -> str:
    """`` (time profiles)``, or `` (time and memory profiles)`` when the two types differ."""
    base = comparison.baseline.type if comparison.baseline is not None else comparison.type
    target = comparison.target.type if comparison.target is not None else comparison.type
    if base == target:
        return f" ({base or 'no type'} profiles)"
    return f" ({base or 'no type'} and {target or 'no type'} profiles)"


#: what each statistic of a :class:`Change` makes of a uid's resources, in the words of the table's header
_STATISTICS = {
    "robust": "median of the baseline's repeated measurements (runs), for the target moved by the robust shift "
              "(as check reports it)",
    "median": "median of repeated measurements (runs)",
    "mean": "mean of repeated measurements (runs)",
    "sum": "sum of every call, sample or allocation in the profile",
}


def _statistics(rows: list[Change]) -> str:
    """``values: ...``: which statistic the rows' numbers are, so that two figures of one change can be told apart."""
    used = [name for name in _STATISTICS if any(c.statistic == name and max(c.baseline_count, c.target_count) > 1
                                               for c in rows)]
    if not used:
        return "values: one amount per uid a side"
    return "values: " + "; ".join(_STATISTICS[name] for name in used)


def render_short(comparison: Comparison, *, width: int = 100, color: bool = False, limit: int = 30) -> str:
    """The table per uid and subtype, then the functions (see the module docstring)."""
    rows = list(comparison.changes)
    shown = rows if limit <= 0 else rows[:limit]
    out = _pair_title(comparison, _types(comparison), width)
    if comparison.converted:
        out.extend(_wrap("converted: " + ", ".join(f"{key} from {a} to {b}"
                                                   for key, (a, b) in comparison.converted.items()), width))
    out.extend(_wrap(_statistics(rows), width))
    titles = ("baseline", "target", "change", "rel")
    numbers = [(_number(c.baseline, c.unit, True), _number(c.target, c.unit, True), _signed(c.absolute, c.unit, True),
                _relative(c)) for c in shown]
    cols = [max([len(h)] + [len(n[i]) for n in numbers]) for i, h in enumerate(titles)]
    sub_width = min(max([7] + [len(c.subtype) for c in shown]), 16)
    fixed = sum(cols) + sub_width + 2 * 5
    uid_width = max(min(max([3] + [len(c.uid) for c in shown]), width - fixed), 12)
    # a change under the noise floor is not coloured: it is no change worth a look
    moves = [change.absolute if change.status != "same" else 0 for change in shown]
    if uid_width + fixed > width:
        out.extend(_stacked("uid [subtype]", titles, [_Row(f"{c.uid} [{c.subtype}]", n, moved)
                                                      for c, n, moved in zip(shown, numbers, moves)],
                            (2, 3), width=width, color=color))
    else:
        head = "  ".join([pad("uid", uid_width), pad("subtype", sub_width),
                          *(pad(h, w, right=True) for h, w in zip(titles, cols))])
        out.append(paint(head, bold=True) if color else head)
    for change, (b, t, a, r), moved in zip(shown, numbers, moves):
        if uid_width + fixed > width:
            break
        line = "  ".join([pad(fit(change.uid, uid_width), uid_width), pad(fit(change.subtype, sub_width), sub_width),
                          pad(b, cols[0], right=True), pad(t, cols[1], right=True),
                          _tint(pad(a, cols[2], right=True), moved, color),
                          _tint(pad(r, cols[3], right=True), moved, color)])
        out.append(line.rstrip())
    if len(rows) > len(shown):
        out.extend(_wrap(f"... {len(rows) - len(shown)} more (--limit 0 shows all)", width))
    count = {status: sum(1 for c in rows if c.status == status) for status in ("changed", "new", "gone", "same")}
    floor = rows[0].noise_floor if rows else 0.0
    out.extend(_wrap(f"{len(rows)} uids: {count['changed']} changed, {count['new']} new, {count['gone']} gone, "
                     f"{count['same']} same (within {100 * floor:g}% of the baseline)", width))
    if comparison.overlapping_uids:
        below = ("; the functions below count each call once, exclusively, and add up to the program total"
                 if comparison.functions else "")
        out.extend(_wrap("amounts are inclusive: a caller's row holds its callees' amounts and a 'caller -> callee' "
                         f"row the callee's calls from that caller, so the rows overlap and add up to no total{below}",
                         width))
    if comparison.functions:
        out.append("")
        out.extend(_function_lines(comparison, width=width, color=color, limit=limit))
    return "\n".join(out)


def _function_lines(comparison: Comparison, *, width: int, color: bool, limit: int) -> list[str]:
    functions = list(comparison.functions or ())
    shown = functions if limit <= 0 else functions[:limit]
    unit = comparison.function_unit
    total = comparison.total_change
    # the amounts carry their unit; only their absence is worth a word ('(ns; program total 10.6 ms' misled)
    out = _wrap(f"functions by exclusive change ({'' if unit else 'no unit; '}program total "
                f"{_number(comparison.baseline_total, unit)} -> {_number(comparison.target_total, unit)}, "
                f"{_signed(total, unit)})", width)
    titles = ("excl base", "excl target", "change", "share", "incl base", "incl target", "calls")
    numbers = []
    for f in shown:
        calls = "-" if f.baseline_calls is None and f.target_calls is None else \
            f"{_number(f.baseline_calls)}->{_number(f.target_calls)}"
        share = "new" if f.status == "new" else "gone" if f.status == "gone" else ""
        share = (_percent(f.contribution) if total else "-") + (f" {share}" if share else "")
        numbers.append((_number(f.baseline_exclusive, unit, True), _number(f.target_exclusive, unit, True),
                        _signed(f.exclusive_change, unit, True), share, _number(f.baseline_inclusive, unit, True),
                        _number(f.target_inclusive, unit, True), calls))
    cols = [max([len(h)] + [len(n[i]) for n in numbers]) for i, h in enumerate(titles)]
    name_width = max(min(max([8] + [len(f.function) for f in shown]), width - sum(cols) - 2 * len(cols)), 12)
    if name_width + sum(cols) + 2 * len(cols) > width:
        out.extend(_stacked("function", titles, [_Row(f.function, values, f.exclusive_change)
                                                 for f, values in zip(shown, numbers)], (2, 3),
                            width=width, color=color))
        if len(functions) > len(shown):
            out.append(f"... {len(functions) - len(shown)} more functions")
        return out
    head = "  ".join([pad("function", name_width), *(pad(h, w, right=True) for h, w in zip(titles, cols))])
    out.append(paint(head, bold=True) if color else head)
    for f, values in zip(shown, numbers):
        cells = [pad(v, w, right=True) for v, w in zip(values, cols)]
        cells[2] = _tint(cells[2], f.exclusive_change, color)
        cells[3] = _tint(cells[3], f.exclusive_change, color)
        out.append("  ".join([pad(fit(f.function, name_width), name_width), *cells]).rstrip())
    if len(functions) > len(shown):
        out.append(f"... {len(functions) - len(shown)} more functions")
    return out


# -- difference flame graph -----------------------------------------------------------------------

@dataclass
class DiffFlame:
    """The target's flame graph with, per frame, its baseline amounts."""

    graph: Any             # perun_core.views.flamegraph.FlameGraph of the target
    baseline: Any          # ... of the baseline
    base_total: dict[int, float]   # id(frame) -> the same call path's total in the baseline
    base_self: dict[int, float]
    largest: float         # the largest |self change| of a frame
    only_in_baseline: int  # call paths of the baseline missing from the target
    noise_floor: float = NOISE_FLOOR  # the comparison's: an own amount that moved less than this share is "="

    def change(self, frame: Any) -> float:
        return frame.self_amount - self.base_self.get(id(frame), 0.0)

    def moved(self, frame: Any) -> float:
        """The frame's own change, 0 when the table would call it ``same`` (under the noise floor)."""
        delta = self.change(frame)
        before = self.base_self.get(id(frame), 0.0)
        return 0.0 if under_noise_floor(delta, delta / abs(before) if before else None, self.noise_floor) else delta

    def colour(self, frame: Any) -> RGB:
        if id(frame) not in self.base_total:
            return (190, 0, 0)
        delta = self.moved(frame)
        if delta == 0 or not self.largest:
            return (235, 235, 235)
        strength = min(abs(delta) / self.largest, 1.0)
        fade = int(225 * (1 - strength))
        return (255, 30 + fade, 30 + fade) if delta > 0 else (30 + fade, 30 + fade, 255)

    def sign(self, frame: Any) -> str:
        """``+`` when the frame's own amount grew (or the frame is new), ``-`` when it shrank, else (by less than the
        noise floor) ``=``."""
        if id(frame) not in self.base_total:
            return "+"
        delta = self.moved(frame)
        return "+" if delta > 0 else "-" if delta < 0 else "="

    def label(self, frame: Any) -> str:
        """The frame's name after its :meth:`sign`: the change reads without colour too."""
        return f"{self.sign(frame)}{frame.name}"

    def tooltip(self, frame: Any) -> str:
        if id(frame) not in self.base_total:
            return f"{frame.name}: new, {format_amount(frame.total, self.graph.unit)}"
        before = self.base_total[id(frame)]
        rel = f", {format_percent(relative_change(before, frame.total))}" if before else ""
        return (f"{frame.name}: {format_amount(before, self.graph.unit)} -> "
                f"{format_amount(frame.total, self.graph.unit)}{rel} (own {_signed(self.change(frame), self.graph.unit)})")


def build_flame(comparison: Comparison, *, of: str | None = None) -> DiffFlame:
    """The difference flame graph of a comparison of two profiles with call stacks."""

    with paused_gc():  # two trees and the maps between them: many objects, no cycles
        return _build_flame(comparison, of)


def _build_flame(comparison: Comparison, of: str | None) -> DiffFlame:
    if comparison.baseline is None or comparison.target is None or not comparison.has_stacks:
        # name the side that lacks them: 'this mixed profile' was said of the one that had them
        lacking = comparison.sides_without_stacks()
        first = lacking[0][1] if lacking else None
        names = " and ".join(name for name, _profile in lacking) or "a profile"
        raise UnsupportedProfile("diff flamegraph", first.type if first is not None else comparison.type,
                                 ("time", "memory", "mixed"),
                                 reason=f"{names} {'has' if len(lacking) == 1 else 'have'} no resources with call "
                                        "stacks ('trace'); a difference flame graph needs them in both profiles")
    target = build(comparison.target, of=of, title=None)
    baseline = build(comparison.baseline, of=of or target.of, title=None)
    if target.unit != baseline.unit:
        raise IncomparableProfiles(comparison.baseline_name, comparison.target_name,
                                   f"their stacks add up {baseline.unit or 'no unit'} and {target.unit or 'no unit'}")
    base_total: dict[int, float] = {}
    base_self: dict[int, float] = {}
    largest = 0.0
    stack = [(target.root, baseline.root)]
    while stack:
        mine, theirs = stack.pop()
        base_total[id(mine)] = theirs.total
        base_self[id(mine)] = own = theirs.self_amount
        largest = max(largest, abs(mine.self_amount - own))
        for label, child in mine.children.items():
            other = theirs.children.get(label)
            if other is None:
                largest = max(largest, abs(child.self_amount))
                continue
            stack.append((child, other))
    targets = {line.rpartition(" ")[0] for line in target.folded}
    gone = sum(1 for line in baseline.folded if line.rpartition(" ")[0] not in targets)
    target.title = (f"Difference flame graph: {comparison.baseline_name} -> {comparison.target_name}"
                    + (f" [{target.unit}]" if target.unit else "") + "; red grew, blue shrank")
    return DiffFlame(target, baseline, base_total, base_self, largest, gone, comparison.noise_floor)


def _shrunk_not_drawn(flame: DiffFlame, width: int, height: int) -> list[tuple[str, float, float]]:
    """The functions whose own amount shrank where the icicle does not draw them: (name, before, after), the
    largest drop first.

    The icicle draws the target: a function that shrank to a sliver of a cell or a block too narrow for its name
    (``419 samples -> 1 sample``), below
    the levels drawn or on a call path only in the baseline left no frame, so the largest improvement was not in
    the graph at all; its own amounts before and after are summed over those call paths.  Drops smaller than
    the noise floor's share of the baseline's total are left out.
    """
    layout = layout_flame(flame.graph.root, width, max(height - 2, 1))

    def labelled(frame: Any) -> bool:
        """Drawn with its signed name: a block of a cell or two shows its colour only (or ``|``)."""
        at = layout.find(frame)
        if at is None:
            return False
        span = layout.rows[at[0]][at[1]]
        cells = span.end - span.start
        return cells >= 5 or text_width(flame.label(frame)) + 2 <= cells

    amounts: dict[str, list[float]] = {}
    pairs = [(flame.graph.root, flame.baseline.root)]
    while pairs:
        mine, theirs = pairs.pop()
        if flame.moved(mine) < 0 and not labelled(mine):
            entry = amounts.setdefault(mine.name, [0.0, 0.0])
            entry[0] += flame.base_self.get(id(mine), 0.0)
            entry[1] += mine.self_amount
        for label, other in theirs.children.items():
            child = mine.children.get(label)
            if child is not None:
                pairs.append((child, other))
                continue
            gone = [other]  # a call path only in the baseline: all of its own amounts went
            while gone:
                frame = gone.pop()
                if frame.self_amount > 0:
                    amounts.setdefault(frame.name, [0.0, 0.0])[0] += frame.self_amount
                gone.extend(frame.children.values())
    # a sample or two less is no news: a drop under the noise floor's share of the baseline's total is left out
    least = flame.noise_floor * flame.baseline.root.total
    hidden = {name for name, (before, after) in amounts.items() if before - after >= least > 0
              or (before > after and least == 0)}
    # said with the function's own amounts over all of its call paths, as the table and the ranked functions say
    # them (409 samples -> 2 samples, not the 407 -> 0 of the paths left out)
    totals = {name: [_own_by_name(flame.baseline.root, name), _own_by_name(flame.graph.root, name)] for name in hidden}
    shrunk = [(name, before, after) for name, (before, after) in totals.items() if after < before]
    return sorted(shrunk, key=lambda item: item[2] - item[1])


def _own_by_name(root: Any, name: str) -> float:
    """The own amount of every frame of ``name`` under ``root``."""
    total, frames = 0.0, [root]
    while frames:
        frame = frames.pop()
        if frame.name == name:
            total += frame.self_amount
        frames.extend(frame.children.values())
    return total


def folded_pair(flame: DiffFlame) -> str:
    """``stack BASELINE TARGET`` lines of every stack in either profile, sorted."""
    pairs: dict[str, list[str]] = {}
    for line in flame.baseline.folded:
        stack, _, value = line.rpartition(" ")
        pairs.setdefault(stack, ["0", "0"])[0] = value
    for line in flame.graph.folded:
        stack, _, value = line.rpartition(" ")
        pairs.setdefault(stack, ["0", "0"])[1] = value
    return "\n".join(f"{stack} {b} {t}" for stack, (b, t) in sorted(pairs.items()))


def flame_legend(noise_floor: float) -> str:
    """What the signs before the frames' names say; ``=`` is the table's ``same``, under the same noise floor."""
    return f"+ own amount grew (red or new), - shrank (blue), = same (within {100 * noise_floor:g}%)"


def render_flame(flame: DiffFlame, fmt: str, *, width: int = 100, height: int = 30, color: bool = False,
                 pixels: int | None = None, front: str = "cli", legend: bool = True) -> str:
    if fmt == "folded":
        return folded_pair(flame)
    if fmt == "svg":
        return render_svg(flame.graph, pixels or SVG_WIDTH, colour_of=flame.colour, tooltip_of=flame.tooltip)
    theme = DEFAULT_THEME if color else None
    text = render_icicle(flame.graph, RenderOptions("icicle", width, height, theme), colour_of=flame.colour,
                         label_of=flame.label, front=front)
    # the signs the frames carry, said once (the header ends in the colours)
    if legend:  # else the caller shows flame_legend() where it stays in view
        text += "\n" + "\n".join(_wrap(flame_legend(flame.noise_floor), width))
    shrunk = _shrunk_not_drawn(flame, width, height)
    if shrunk:
        named = "; ".join(f"-{name} {flame.graph.amount(before)} -> {flame.graph.amount(after)}"
                          for name, before, after in shrunk[:3])
        more = f"; {len(shrunk) - 3} more" if len(shrunk) > 3 else ""
        text += "\n" + "\n".join(_wrap(f"(shrank too far to draw: {named}{more})", width))
    if flame.only_in_baseline:
        text += "\n" + "\n".join(_wrap(f"({flame.only_in_baseline} stacks only in the baseline are not drawn; "
                                       f"see {FOLDED.words(front)})", width))
    return text


# -- HTML report ------------------------------------------------------------------------------------

_CSS = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 13px; }
th, td { padding: 2px 8px; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; }
td.up { color: #b2182b; } td.down { color: #1a7840; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 1.5em; }
.note { color: #666; font-size: 12px; }
"""


def render_report(comparison: Comparison, *, limit: int = 200) -> str:
    """One self-contained HTML page: table, functions, difference flame graph, bars."""
    esc = html.escape
    title = f"{comparison.baseline_name} -> {comparison.target_name}"
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>Difference: {esc(title)}</title>", f"<style>{_CSS}</style></head><body>",
           f"<h1>Difference: {esc(title)}</h1>",
           f'<p class="note">{len(comparison.changes)} uids compared; rows by impact (change as a share of the '
           f'baseline total of their type and subtype).</p>', '<h2>Changes</h2>', '<table id="changes">',
           "<tr><th>uid</th><th>subtype</th><th>baseline</th><th>target</th><th>change</th><th>relative</th>"
           "</tr>"]
    for change in comparison.changes[:limit]:
        css = "up" if change.absolute > 0 else "down" if change.absolute < 0 else ""
        out.append(f"<tr><td>{esc(change.uid)}</td><td>{esc(change.subtype)}</td>"
                   f"<td>{_number(change.baseline, change.unit)}</td><td>{_number(change.target, change.unit)}</td>"
                   f"<td class=\"{css}\">{_signed(change.absolute, change.unit)}</td>"
                   f"<td class=\"{css}\">{_relative(change)}</td></tr>")
    out.append("</table>")
    if comparison.functions:
        unit = comparison.function_unit
        out += [f"<h2>Functions</h2><p class=\"note\">Exclusive cost in {esc(comparison.function_unit or 'no unit')}; "
                f"program total {_number(comparison.baseline_total, unit)} -> "
                f"{_number(comparison.target_total, unit)}.</p>",
                '<table id="functions"><tr><th>function</th><th>exclusive baseline</th><th>exclusive target</th>'
                "<th>change</th><th>share of the change</th><th>inclusive baseline</th><th>inclusive target</th></tr>"]
        total = comparison.total_change
        for f in comparison.functions[:limit]:
            css = "up" if f.exclusive_change > 0 else "down" if f.exclusive_change < 0 else ""
            share = _percent(f.contribution) if total else "-"
            out.append(f"<tr><td>{esc(f.function)}</td><td>{_number(f.baseline_exclusive, unit)}</td>"
                       f"<td>{_number(f.target_exclusive, unit)}</td>"
                       f"<td class=\"{css}\">{_signed(f.exclusive_change, unit)}</td>"
                       f"<td>{share} {f.status if f.status in ('new', 'gone') else ''}</td>"
                       f"<td>{_number(f.baseline_inclusive, unit)}</td><td>{_number(f.target_inclusive, unit)}</td></tr>")
        out.append("</table>")
    if comparison.has_stacks:
        svg = render_flame(build_flame(comparison), "svg")
        svg = svg.split("?>", 1)[1] if svg.startswith("<?xml") else svg
        out += ["<h2>Difference flame graph</h2>",
                '<p class="note">Width from the target; red grew, blue shrank. Click a frame to zoom.</p>', svg]
    out += ["<h2>Baseline and target</h2>", bars_svg(comparison), "</body></html>"]
    return "\n".join(out)


def render(comparison: Comparison, view: str = "short", *, fmt: str | None = None, width: int = 100,
           height: int = 30, color: bool = False, limit: int | None = None, pixels: int | None = None,
           front: str = "cli", legend: bool = True) -> str:
    """Render ``view`` of ``comparison`` (see the module docstring); a setting it advises is named as ``front`` names
    it (:mod:`perun_core.advice`); ``legend=False`` leaves the flame graph's line on its signs out
    (:func:`flame_legend`)."""

    if view not in VIEWS:
        raise UsageError(f"unknown difference view '{view}'; expected one of {', '.join(VIEWS)}")
    if fmt is not None and fmt not in FORMATS[view]:
        raise UsageError(f"the {view} view has no format '{fmt}'; expected one of {', '.join(FORMATS[view])}")
    if view == "short":
        return render_short(comparison, width=width, color=color, limit=30 if limit is None else limit)
    if view == "bars":
        return render_bars(comparison, width=width, color=color, limit=15 if limit is None else limit)
    if view == "report":
        return render_report(comparison, limit=200 if limit is None else limit)
    return render_flame(build_flame(comparison), fmt or "icicle", width=width, height=height, color=color,
                        pixels=pixels, front=front, legend=legend)
