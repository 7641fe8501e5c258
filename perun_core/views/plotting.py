"""The one module that talks to plotext: scatter, bar and line plots as ANSI text.

Both front ends draw through these functions: the CLI prints their text, the
TUI wraps it (``rich.text.Text.from_ansi``) in a widget.  Every function
takes the size to draw at (``width`` columns by ``height`` rows, title and
axis labels included) and a :class:`~perun_core.views.style.Theme` (RGB
colours) or ``None`` for plain text without escape sequences.

plotext keeps one global figure, so every call holds :data:`_LOCK` from
clearing the figure until the text is built; threads may call freely.  The
pinned plotext is 5.3 (the 6.x API differs).  Big point clouds are thinned
first (:func:`thin_points`): a terminal cell shows one mark however many
points fall into it, and building a plot costs time per point.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..amounts import amount_scale, nice_ticks, unit_family
from .overlap import draw_curves
from .style import DEFAULT_THEME, RGB, Theme, fit, fit_middle, paint, strip_ansi, text_width

if TYPE_CHECKING:  # pragma: no cover
    import numpy

    from .base import Series

__all__ = [
    "DEFAULT_THEME",
    "Theme",
    "even_ticks",
    "integer_ticks",
    "y_axis",
    "render_bars",
    "render_lines",
    "render_scatter",
    "thin_line",
    "thin_points",
]

#: Guards plotext's global figure.
_LOCK = threading.Lock()

#: Markers of lines and model curves, one per series in order (then cycling).  Series differ in
#: shape as well as colour, so a plot says the same without colour (NO_COLOR, a monochrome
#: terminal, colour-blind eyes); the legend shows each marker with its series' name.
LINE_MARKERS = ("braille", "*", "+", "x", "o", "=", "#", "~", "%", "@", "$")
#: Markers of scatter point clouds, none of them a line's, so points stand out from curves.
POINT_MARKERS = ("dot", "&", "^", "v", "<", ">", "?", "!")
#: Fills of bars, one per group in order (then cycling).
BAR_MARKERS = ("█", "▒", "░", "#", "=", "+", "%", "@", "x", "o")
#: A bar lower than half a row: a block an eighth of a row high on the axis.
_THIN_BAR = "▁"
#: Thinning keeps one point per cell of a grid this many times finer than the characters
#: (the "dot" marker draws one point per character).
_OVERSAMPLE = 1


# -- data preparation -----------------------------------------------------------------------

def _as_array(values: Any) -> numpy.ndarray:
    import numpy as np

    array = np.asarray(values, dtype=np.float64)
    return array.reshape(-1)


def _finite(x: numpy.ndarray, y: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
    import numpy as np

    keep = np.isfinite(x) & np.isfinite(y)
    if keep.all():
        return x, y
    return x[keep], y[keep]


def _limits(arrays: Sequence[numpy.ndarray]) -> tuple[float, float]:
    """``(low, high)`` over the arrays, widened when they are a single value."""
    lows = [float(a.min()) for a in arrays if len(a)]
    highs = [float(a.max()) for a in arrays if len(a)]
    if not lows:
        return 0.0, 1.0
    low, high = min(lows), max(highs)
    if low == high:
        margin = abs(low) * 0.05 or 0.5
        return low - margin, high + margin
    return low, high


def thin_points(
    x: Any, y: Any, *, columns: int, rows: int,
    xlim: tuple[float, float] | None = None, ylim: tuple[float, float] | None = None,
) -> tuple[numpy.ndarray, numpy.ndarray]:
    """At most one point per cell of a ``columns`` x ``rows`` grid over the limits.

    Vectorized and O(n): every point gets its cell, and one point of each
    occupied cell is kept (a real point, so nothing is drawn where there
    was none).  Points outside the limits or not finite are dropped.  When
    there are no more points than cells the finite points come back as
    they are.
    """
    import numpy as np

    xs, ys = _finite(_as_array(x), _as_array(y))
    if len(xs) <= columns * rows:
        return xs, ys
    x0, x1 = xlim if xlim else _limits([xs])
    y0, y1 = ylim if ylim else _limits([ys])
    col = np.floor((xs - x0) * (columns / ((x1 - x0) or 1.0))).astype(np.int64)
    row = np.floor((ys - y0) * (rows / ((y1 - y0) or 1.0))).astype(np.int64)
    inside = (col >= 0) & (col <= columns) & (row >= 0) & (row <= rows)
    if not inside.all():
        xs, ys, col, row = xs[inside], ys[inside], col[inside], row[inside]
    # the upper limits belong to the last cell
    np.minimum(col, columns - 1, out=col)
    np.minimum(row, rows - 1, out=row)
    keeper = np.full(columns * rows, -1, dtype=np.int64)
    # a cell assigned many times keeps one of them: any point of the cell will do
    keeper[col * rows + row] = np.arange(len(xs))
    chosen = keeper[keeper >= 0]
    return xs[chosen], ys[chosen]


def thin_line(x: Any, y: Any, *, columns: int, xlim: tuple[float, float] | None = None,
              ) -> tuple[numpy.ndarray, numpy.ndarray]:
    """A polyline cut down to what ``columns`` columns show: per column its first, lowest, highest and last point.

    Points keep their order, so the line is drawn through the same extremes.
    Lines with at most four points per column come back as they are.
    """
    import numpy as np

    xs, ys = _finite(_as_array(x), _as_array(y))
    if len(xs) <= 4 * columns:
        return xs, ys
    x0, x1 = xlim if xlim else _limits([xs])
    column = np.clip(np.floor((xs - x0) * (columns / ((x1 - x0) or 1.0))), 0, columns - 1).astype(np.int64)
    by_value = np.lexsort((ys, column))  # within each column, from the lowest to the highest y
    by_position = np.argsort(column, kind="stable")  # within each column, in line order
    starts = np.flatnonzero(np.r_[True, np.diff(column[by_position]) != 0])
    ends = np.r_[starts[1:], len(xs)] - 1
    keep = np.unique(np.concatenate([by_position[starts], by_position[ends], by_value[starts], by_value[ends]]))
    return xs[keep], ys[keep]


def integer_ticks(arrays: Sequence[numpy.ndarray], width: int) -> list[float] | None:
    """The distinct x values when all are integers and few enough to label each (snapshots, orders)."""
    import numpy as np

    present = [a for a in arrays if len(a)]
    if not present:
        return None
    values = np.unique(np.concatenate(present))
    if len(values) > max(2, width // 8) or not np.all(values == np.round(values)):
        return None
    return values.tolist()


def y_axis(low: float, high: float, rows: int, unit: str, ylabel: str) -> tuple[list[float], list[str], str]:
    """``(ticks, labels, ylabel)``: evenly spaced round ticks within low..high (about one per two rows).

    When ``ylabel`` ends in ``[unit]`` the labels are in the unit's best
    prefix for the range and the label names it (``mean(amount) [ms]``).
    """
    divisor = 1.0
    suffix = f"[{unit}]"
    if unit and ylabel.endswith(suffix) and (unit_family(unit) != "count" or unit.isalpha()):
        divisor, scaled = amount_scale(max(abs(low), abs(high)), unit)
        ylabel = ylabel[: -len(suffix)] + f"[{scaled}]"
    ticks, labels = even_ticks(low, high, max(3, rows // 2), divisor)
    return ticks, labels, ylabel


def even_ticks(low: float, high: float, count: int, divisor: float = 1.0) -> tuple[list[float], list[str]]:
    """About ``count`` round ticks within low..high and their labels (values / ``divisor``).

    Every label has as many decimals as the step needs, so they read alike
    (0.05, 0.10, 0.15 rather than 0.127, 0.106, 0.064).
    """
    span = high - low
    ticks = [t for t in nice_ticks(low, high, count) if low - 1e-9 * abs(span) <= t <= high + 1e-9 * abs(span)]
    if len(ticks) < 2:
        return ticks, [f"{t / divisor:g}" for t in ticks]
    step = (ticks[1] - ticks[0]) / divisor
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    return ticks, [f"{t / divisor:.{decimals}f}" for t in ticks]


def _x_ticks(plt: Any, arrays: Sequence[numpy.ndarray], xlim: tuple[float, float], width: int) -> None:
    """Label the x axis: every value when few integers (snapshots, runs), else even round ticks."""
    ticks = integer_ticks(arrays, width)
    if ticks:
        plt.xticks(ticks, [f"{t:g}" for t in ticks])
        return
    spread, labels = even_ticks(*xlim, max(3, width // 8))
    if len(spread) >= 2:
        plt.xticks(spread, labels)


def _rows(height: int, title: str, xlabel: str, ylabel: str) -> int:
    """The rows of the plot area: the height less the title, the x axis, its ticks and the labels' line."""
    return height - 3 - bool(title) - bool(xlabel or ylabel)


# -- plotext ------------------------------------------------------------------------------------

def _ordered_unique(data: Any) -> list:
    return list(dict.fromkeys(data))


def _plotext() -> Any:
    """The plotext module, made deterministic.

    plotext 5.3 drops duplicate ticks and points through a ``set``, so the
    order in which it draws them (and which of two overlapping tick labels
    survives) changed with Python's string hash seed from run to run.  Its
    helper is swapped for one that keeps the first-seen order.
    """
    import plotext as plt
    from plotext import _utility

    if _utility.no_duplicates is not _ordered_unique:
        _utility.no_duplicates = _ordered_unique
    return plt


def _figure(width: int, height: int, theme: Theme | None, title: str, xlabel: str, ylabel: str) -> Any:
    """plotext, cleared and set up for one plot; call with :data:`_LOCK` held."""
    plt = _plotext()
    plt.clear_figure()
    # plotext leaves out a title that does not fit centred over the canvas (right of the y ticks),
    # and an x label that would touch the y label on the bottom line: shorten them instead (a title
    # in the middle, since its end tells plots apart: the uid, the subtype, a note; labels too, since
    # theirs is the unit: "mean(amount) [ms]")
    title = fit_middle(title, max(width - 16, 10))
    xlabel, ylabel = fit_middle(xlabel, width // 3), fit_middle(ylabel, width // 3)
    # plotext clips to the real terminal unless told not to; we draw at the asked size
    plt.limit_size(False, False)
    plt.plot_size(width, height)
    plt.theme("clear")
    if theme is not None:
        plt.canvas_color(theme.background or "default")
        plt.axes_color(theme.background or "default")
        plt.ticks_color(theme.text or "default")
    if title:
        plt.title(title)
    if xlabel:
        plt.xlabel(xlabel)
    if ylabel:
        plt.ylabel(ylabel)
    return plt


def _finish(plt: Any, theme: Theme | None) -> str:
    text = plt.build()
    plt.clear_figure()
    if theme is None:
        text = strip_ansi(text)
    return "\n".join(line.rstrip() for line in text.split("\n")).rstrip("\n")


def _cycle(markers: tuple[str, ...], index: int) -> str:
    """The ``index``-th of ``markers``, cycling (more series than markers share them in turn)."""
    return markers[index % len(markers)]


def _colour(theme: Theme | None, index: int) -> RGB | None:
    return theme.colour(index) if theme is not None else None


def _floats(values: numpy.ndarray) -> list[float]:
    return values.tolist()


def render_scatter(
    series: Sequence[Series],
    curves: Sequence[Series] = (),
    *,
    width: int,
    height: int,
    theme: Theme | None = DEFAULT_THEME,
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
    ylim: tuple[float, float] | None = None,
    unit: str = "",
) -> str:
    """Point clouds (``series``) and model curves (``curves``) as one plot (y ticks: :func:`y_axis` in ``unit``).

    Each series and curve has ``name``, ``x`` and ``y`` (numbers; NaN and
    infinities are skipped).  Point clouds are thinned to what the plot can
    show; the axes cover every point and curve, the y axis ``ylim`` when
    given (plots to compare share it).  Series take the theme's colours in
    order, curves the colours after them; each also has a marker of its
    own (:data:`POINT_MARKERS`, :data:`LINE_MARKERS`), with or without colour.
    """
    clouds = [(s.name, *_finite(_as_array(s.x), _as_array(s.y))) for s in series]
    lines = [(c.name, *_finite(_as_array(c.x), _as_array(c.y))) for c in curves]
    xlim = _limits([x for _, x, _ in clouds + lines])
    ylim = ylim or _limits([y for _, _, y in clouds + lines])
    # one point cloud alone needs no legend (the title names it); plotext draws a legend over the top rows of
    # the plot, so with one the y axis reaches that much higher and the data stays below it (or it goes under)
    entries = [(_cycle(LINE_MARKERS, i), _colour(theme, len(clouds) + i), name) for i, (name, x, _) in enumerate(lines)
               if name and len(x)]
    entries += [(_cycle(POINT_MARKERS, i), _colour(theme, i), name) for i, (name, x, _) in enumerate(clouds)
                if name and len(x)]
    below, height = _legend_below(entries if len(entries) > 1 else [], width, height, title, xlabel, ylabel)
    if legend := len(entries) > 1 and below is None:
        ylim = _with_headroom(ylim, rows=_rows(height, title, xlabel, ylabel), reserved=len(entries))
    yticks, ylabels, ylabel = y_axis(*ylim, _rows(height, title, xlabel, ylabel), unit, ylabel)
    with _LOCK:
        plt = _figure(width, height, theme, title, xlabel, ylabel)
        plt.xlim(*xlim)
        plt.ylim(*ylim)
        plt.yticks(yticks, ylabels)
        _x_ticks(plt, [x for _, x, _ in clouds], xlim, width)
        # curves first: the measured points stay visible on top of them
        draw_curves(plt, [(x, y) for _, x, y in lines], markers=[_cycle(LINE_MARKERS, i) for i in range(len(lines))],
                    colours=[_colour(theme, len(clouds) + i) for i in range(len(lines))],
                    labels=[(name or None) if legend else None for name, _, _ in lines], xlim=xlim, ylim=ylim,
                    columns=width - 3 - max(map(len, ylabels), default=0), rows=_rows(height, title, xlabel, ylabel))
        for index, (name, x, y) in enumerate(clouds):
            if not len(x):
                continue
            x, y = thin_points(x, y, columns=width * _OVERSAMPLE, rows=height * _OVERSAMPLE, xlim=xlim, ylim=ylim)
            plt.scatter(_floats(x), _floats(y), marker=_cycle(POINT_MARKERS, index), color=_colour(theme, index),
                        label=(name or None) if legend else None)
        return "\n".join([_finish(plt, theme), *(below or ())])


#: what a marker looks like in a legend (the rest are characters drawn as they are)
_MARKER_GLYPHS = {"braille": "⢕", "dot": "•"}


def _legend_below(entries: list[tuple[str, RGB | None, str]], width: int, height: int, title: str, xlabel: str,
                  ylabel: str) -> tuple[list[str] | None, int]:
    """The legend's lines under a plot too low to keep two rows free above the data for it (plotext would draw
    it over them, or not at all), and the plot's height left; the names' notes in brackets left out if that
    saves a line, no legend if the plot cannot spare the rows (it keeps three, or two for a legend of one line:
    the compare view's lower plot at 80x24).  ``None`` when it fits above the data.
    """
    rows = _rows(height, title, xlabel, ylabel)
    if not entries or rows - len(entries) - 1 >= 2:
        return None, height
    for short in (False, True):
        # whole names first; then each cut before its note in brackets ("linear (R^2=0.216)" as "linear")
        lines = _legend_lines([(marker, colour, name.split(" (", 1)[0] if short else name)
                               for marker, colour, name in entries], width)
        if len(lines) <= rows - 3 + (len(lines) == 1):  # the plot keeps three rows of data, two beside one line
            return lines, height - len(lines)
    return [], height


def _legend_lines(entries: list[tuple[str, RGB | None, str]], width: int) -> list[str]:
    """The entries (marker twice, name) on as few lines of ``width`` as fit, two columns apart."""
    lines: list[str] = []
    used = 0
    for marker, colour, name in entries:
        glyph = _MARKER_GLYPHS.get(marker, marker) * 2
        label = fit(f"{glyph} {name}", width)
        size = text_width(label)
        if lines and used + 2 + size <= width:
            lines[-1] += "  "
            used += 2
        else:
            lines.append("")
            used = 0
        if colour and label.startswith(glyph):
            label = paint(glyph, colour=colour) + label[len(glyph):]
        lines[-1] += label
        used += size
    return lines


def _with_headroom(ylim: tuple[float, float], *, rows: int, reserved: int) -> tuple[float, float]:
    """``ylim`` raised so that the top ``reserved`` of ``rows`` plot rows (and one more, the legend's frame
    line) hold no data; as it is when the plot has no rows to spare."""
    low, high = ylim
    free = rows - reserved - 1
    if free < 2 or high <= low:
        return ylim
    return low, low + (high - low) * rows / free


def render_bars(
    categories: Sequence[str],
    groups: Sequence[Series],
    *,
    stacked: bool = True,
    width: int,
    height: int,
    theme: Theme | None = DEFAULT_THEME,
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
    ylim: tuple[float, float] | None = None,
    unit: str = "",
) -> str:
    """Bars: one position per category, one bar (or stack part) per group (y ticks: :func:`y_axis` in ``unit``).

    Each group's ``y`` holds one value per category (NaN counts as 0).
    With several groups they are stacked or stand side by side, each group
    with its own fill character (and colour, with a theme).  The y axis spans
    ``ylim`` when given (plots to compare share it), else the values and 0.
    A zero (or float noise around it) is drawn as no bar at all: plotext
    would blank a row of the stack part above it.  A lone group's value lower
    than half a row is drawn as a thin line on the axis (:func:`_single_bars`),
    so it is told apart from nothing without looking a row high.
    """
    import numpy as np

    labels = [str(c) for c in categories]
    values = [np.nan_to_num(_as_array(g.y), nan=0.0).tolist() for g in groups]
    names = [g.name for g in groups]
    count = len(values)
    markers = [_cycle(BAR_MARKERS, i) for i in range(count)]
    colours: list[Any] = [theme.colour(i) for i in range(count)] if theme is not None else ["default"] * count
    rows = _rows(height, title, xlabel, ylabel)
    # plotext draws the legend over the top rows of the plot: keep the bars below it
    limits = _bar_limits(values, stacked=stacked, rows=rows, reserved=count if count > 1 else 0, span=ylim)
    yticks: list[float] = []
    ylabels: list[str] = []
    if limits is not None:
        values = _without_noise(values, (limits[1] - limits[0]) * 1e-12)
        yticks, ylabels, ylabel = y_axis(*limits, rows, unit, ylabel)
    with _LOCK:
        plt = _figure(width, height, theme, title, xlabel, ylabel)
        if labels and count and limits is not None:
            plt.ylim(*limits)
            plt.yticks(yticks, ylabels)
        row = (limits[1] - limits[0]) / max(rows, 1) if limits is not None else 0.0
        if not labels or not count:
            pass
        elif count == 1:
            # one group needs no legend: the axis label says what the bars are
            _single_bars(plt, labels, values[0], markers[0], colours[0], row)
        elif stacked:
            _stacked_bars(plt, labels, values, markers, colours, names, row)
        else:
            plt.multiple_bar(labels, values, marker=markers, color=colours, labels=names)
        return _finish(plt, theme)


def _single_bars(plt: Any, labels: list[str], values: list[float], marker: str, colour: Any, row: float) -> None:
    """One bar per label; a bar lower than half a ``row`` (but not zero) is a thin line on the axis.

    plotext draws any value that is not zero at least one full row high, so
    1 ms next to 250 ms looked like 25 ms; an eighth-of-a-row block tells it
    apart from both that and nothing.
    """
    positions = list(range(1, len(labels) + 1))
    tiny = [k for k, value in enumerate(values) if value != 0 and abs(value) < row / 2]
    plt.xticks(positions, labels)
    plt.xlim(0.6, len(labels) + 0.4)  # where plotext puts the edges of bars 0.8 wide
    for chosen, mark in (([k for k in range(len(values)) if k not in tiny], marker), (tiny, _THIN_BAR)):
        if not chosen:
            continue
        xs = [positions[k] for k in chosen]
        # plotext scales a bar's width by the spacing of the positions given: undo it for gaps
        spacing = (xs[-1] - xs[0]) / (len(xs) - 1) if len(xs) > 1 else 1.0
        plt.bar(xs, [values[k] for k in chosen], marker=mark, color=colour, width=0.8 / spacing, reset_ticks=False)


def _without_noise(values: list[list[float]], least: float) -> list[list[float]]:
    """``values`` with those smaller than ``least`` (rounding noise of a sum of zeros) set to exactly 0."""
    return [[0.0 if abs(v) < least else v for v in row] for row in values]


def _stacked_bars(plt: Any, labels: list[str], values: list[list[float]], markers: list[str], colours: list[Any],
                  names: list[str], row: float) -> None:
    """Stacked bars, each part a bar from 0 to the running total, drawn from the top part down.

    plotext's own ``stacked_bar`` draws a part of zero as a row of blanks
    over the part below it; here a zero part is not drawn at all.  plotext
    also draws any bar that is not zero at least one row high: parts at the
    bottom of a stack that reach less than half a ``row`` are left to the
    part above them (1 ms of ``sys`` under 500 ms of ``user`` is not a row
    high), and a whole stack lower than half a row is a thin line on the
    axis in the colour of its top part, as a lone bar is (:func:`_single_bars`).
    """
    import numpy as np

    positions = list(range(1, len(labels) + 1))
    totals = np.cumsum(np.array(values, dtype=np.float64), axis=0)
    low_stacks = {k for k in range(len(labels)) if 0 < abs(totals[-1][k]) < row / 2}
    plt.xticks(positions, labels)
    plt.xlim(0.6, len(labels) + 0.4)  # where plotext puts the edges of bars 0.8 wide
    tall = [k for k in range(len(labels)) if k not in low_stacks and totals[-1][k] != 0]
    if tall:
        # the legend names every group, also one of zeros or too low to show: a bar of the tallest
        # stack's full height per group, drawn first, so that the stack's own parts then cover it whole
        anchor = max(tall, key=lambda k: abs(totals[-1][k]))
        for group in range(len(values) - 1, -1, -1):
            if names[group]:
                _bar_part(plt, [positions[anchor]], [float(totals[-1][anchor])], markers[group], colours[group],
                          names[group])
    thin: dict[int, int] = {}  # a low stack's category -> its top part's group
    for group in range(len(values) - 1, -1, -1):
        shown = []
        for k, value in enumerate(values[group]):
            if value == 0:
                continue
            if k in low_stacks:
                thin.setdefault(k, group)
            elif abs(totals[group][k]) >= row / 2:
                shown.append(k)
        if shown:
            _bar_part(plt, [positions[k] for k in shown], [float(totals[group][k]) for k in shown],
                      markers[group], colours[group], "")
    for k, group in thin.items():
        _bar_part(plt, [positions[k]], [float(totals[-1][k])], _THIN_BAR, colours[group], "")


def _bar_part(plt: Any, xs: list[int], heights: list[float], marker: str, colour: Any, name: str) -> None:
    """Bars at positions ``xs`` (a subset of 1, 2, ...), each 0.8 wide, named ``name`` in the legend."""
    # plotext scales a bar's width by the spacing of the positions given: undo it for gaps
    spacing = (xs[-1] - xs[0]) / (len(xs) - 1) if len(xs) > 1 else 1.0
    plt.bar(xs, heights, marker=marker, color=colour, label=name or None, width=0.8 / spacing, reset_ticks=False)


def _bar_limits(values: Sequence[Sequence[float]], *, stacked: bool, rows: int, reserved: int,
                span: tuple[float, float] | None = None) -> tuple[float, float] | None:
    """Y limits leaving the top ``reserved`` of ``rows`` plot rows free of bars; None when they do not fit.

    ``span`` (low, high) replaces the values' own extent (a scale shared with other plots).
    """
    import numpy as np

    if span is not None:
        low, high = span
    elif not values or not len(values[0]):
        return None
    else:
        matrix = np.array(values, dtype=np.float64)
        if stacked:
            high = float(matrix.clip(min=0).sum(axis=0).max())
            low = float(matrix.clip(max=0).sum(axis=0).min())
        else:
            high, low = float(matrix.max()), float(matrix.min())
    high, low = max(high, 0.0), min(low, 0.0)
    if high <= low or rows - reserved < 2:
        return None
    return low, low + (high - low) * rows / (rows - reserved)


def render_lines(
    series: Sequence[Series],
    *,
    categories: Sequence[str] | None = None,
    width: int,
    height: int,
    theme: Theme | None = DEFAULT_THEME,
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
    ylim: tuple[float, float] | None = None,
    unit: str = "",
) -> str:
    """Polylines, one per series, in the order of their x values as given (the y axis ``ylim`` when given).

    The y ticks are :func:`y_axis`'s in ``unit``.

    With ``categories`` the x values are positions 0, 1, ... labelled by
    them (for x keys that are not numbers).  A single line gets no legend.
    Long lines are cut to what the width shows (:func:`thin_line`).
    """
    lines = [(s.name, *_finite(_as_array(s.x), _as_array(s.y))) for s in series]
    xlim = _limits([x for _, x, _ in lines])
    ylim = ylim or _limits([y for _, _, y in lines])
    legend = len(lines) > 1
    entries = [(_cycle(LINE_MARKERS, i), _colour(theme, i), name) for i, (name, x, _) in enumerate(lines)
               if name and len(x)]
    below, height = _legend_below(entries if legend else [], width, height, title, xlabel, ylabel)
    if legend := legend and below is None:
        # plotext draws the legend over the top rows of the plot: the y axis reaches that much higher, so the
        # lines stay below it (as in render_scatter; a plot too low for that has the legend under it)
        ylim = _with_headroom(ylim, rows=_rows(height, title, xlabel, ylabel), reserved=len(entries))
    yticks, ylabels, ylabel = y_axis(*ylim, _rows(height, title, xlabel, ylabel), unit, ylabel)
    with _LOCK:
        plt = _figure(width, height, theme, title, xlabel, ylabel)
        plt.xlim(*xlim)
        plt.ylim(*ylim)
        plt.yticks(yticks, ylabels)
        if categories:
            positions = list(range(len(categories)))
            step = max(1, math.ceil(len(categories) / max(width // 12, 1)))
            plt.xticks(positions[::step], [str(c) for c in categories][::step])
        else:
            _x_ticks(plt, [x for _, x, _ in lines], xlim, width)
        for index, (name, x, y) in enumerate(lines):
            if not len(x):
                continue
            x, y = thin_line(x, y, columns=width * 2, xlim=xlim)
            plt.plot(_floats(x), _floats(y), marker=_cycle(LINE_MARKERS, index), color=_colour(theme, index),
                     label=(name or None) if legend else None)
        return "\n".join([_finish(plt, theme), *(below or ())])
