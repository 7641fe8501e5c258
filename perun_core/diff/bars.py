"""Baseline and target side by side per uid: the terminal bars and the SVG bars of the HTML report."""

from __future__ import annotations

import html

from ..views.style import RGB, fit, fit_middle, pad, paint, text_width
from . import Change, Comparison
from .columns import amount_cell as _number

#: the colours of a rise and a fall, in the bars and in the difference table
UP: RGB = (215, 48, 39)
DOWN: RGB = (26, 152, 80)


def _unit_blocks(comparison: Comparison, limit: int) -> list[tuple[str, list[Change]]]:
    """The changes by type, subtype and unit, each block titled ``time(user)``.

    The amounts under a title carry their unit in its best prefix, so the
    title names the unit only to tell apart two blocks of one type and
    subtype ('time(user) [s]' above '42.5 ms' read as a contradiction).
    """
    blocks: dict[tuple[str, str], list[Change]] = {}
    for change in comparison.changes:
        items = blocks.setdefault((f"{change.type}({change.subtype})", change.unit or ""), [])
        if limit <= 0 or len(items) < limit:
            items.append(change)
    names = [name for name, _unit in blocks]
    return [(name + (f" [{unit}]" if unit and names.count(name) > 1 else ""), items)
            for (name, unit), items in blocks.items()]


def render_bars(comparison: Comparison, *, width: int = 100, color: bool = False, limit: int = 15) -> str:
    """Baseline and target bars per uid, one block per type, subtype and unit."""
    out = [f"{comparison.baseline_name} (upper bar) -> {comparison.target_name} (lower bar)"]
    if text_width(out[0]) > width:
        out = [fit_middle(f"upper bar, baseline: {comparison.baseline_name}", width),
               fit_middle(f"lower bar, target:   {comparison.target_name}", width)]
    for title, changes in _unit_blocks(comparison, limit):
        out.append("")
        out.append(paint(title, bold=True) if color else title)
        largest = max([abs(c.baseline or 0) for c in changes] + [abs(c.target or 0) for c in changes] + [0])
        label_width = min(max([4] + [len(c.uid) for c in changes]), max(width // 3, 10))
        value_width = 12
        span = max(width - label_width - value_width - 3, 5)
        for change in changes:
            for which, value in (("b", change.baseline), ("t", change.target)):
                length = 0 if not largest or value is None else round(abs(value) / largest * span)
                bar = ("█" if which == "t" else "▒") * length
                if color and bar:
                    bar = paint(bar, colour=(153, 153, 153) if which == "b" else
                                (UP if change.absolute > 0 else DOWN if change.absolute < 0 else (86, 180, 233)))
                name = pad(fit(change.uid, label_width), label_width) if which == "b" else " " * label_width
                out.append(f"{name} {pad(_number(value, change.unit), value_width, right=True)} {bar}".rstrip())
    return "\n".join(out)


def bars_svg(comparison: Comparison, limit: int = 15) -> str:
    parts = []
    for title, changes in _unit_blocks(comparison, limit):
        largest = max([abs(c.baseline or 0) for c in changes] + [abs(c.target or 0) for c in changes] + [0]) or 1
        height = 24 + 30 * len(changes)
        rows = [f'<svg class="bars" width="900" height="{height}" xmlns="http://www.w3.org/2000/svg">',
                f'<text x="0" y="14" font-weight="bold">{html.escape(title)}</text>']
        for i, change in enumerate(changes):
            y = 24 + 30 * i
            rows.append(f'<text x="0" y="{y + 18}">{html.escape(change.uid[:40])}</text>')
            for j, (value, fill) in enumerate(((change.baseline, "#999999"),
                                               (change.target, "#d73027" if change.absolute > 0 else "#1a9850"))):
                w = 0 if value is None else abs(value) / largest * 560
                rows.append(f'<rect x="300" y="{y + 2 + 13 * j}" width="{w:.1f}" height="12" fill="{fill}">'
                            f'<title>{"baseline" if j == 0 else "target"}: {_number(value, change.unit)}</title></rect>')
        rows.append("</svg>")
        parts.append("\n".join(rows))
    return "\n".join(parts)
