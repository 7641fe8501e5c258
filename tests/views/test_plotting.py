"""The plotting adapter: sizes, colours, thinning and thread safety."""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest

from perun_core.views import Series, Theme
from perun_core.views.style import strip_ansi
from perun_core.views.plotting import integer_ticks, render_bars, render_lines, render_scatter, thin_line, thin_points

THEME = Theme(series=((1, 2, 3), (4, 5, 6), (7, 8, 9)), heat=((10, 10, 10), (250, 0, 0)),
              text=(11, 12, 13), axes=(14, 15, 16))


def scatter(theme, width=50, height=12):
    x = np.arange(30, dtype=float)
    return render_scatter([Series("points", x, x * x)], [Series("fit", x, x * x + 1)],
                          width=width, height=height, theme=theme, title="t", xlabel="x", ylabel="y")


def bars(theme, width=50, height=12):
    return render_bars(["a", "b", "c"], [Series("one", [0, 1, 2], [1, 2, 3]), Series("two", [0, 1, 2], [2, 1, 0])],
                       stacked=True, width=width, height=height, theme=theme, title="t", xlabel="x", ylabel="y")


def lines(theme, width=50, height=12):
    x = np.linspace(0, 10, 50)
    return render_lines([Series("sin", x, np.sin(x)), Series("cos", x, np.cos(x))],
                        width=width, height=height, theme=theme, title="t", xlabel="x", ylabel="y")


RENDERERS = [scatter, bars, lines]


@pytest.mark.parametrize("render", RENDERERS)
def test_plain_text_has_the_asked_size_and_no_escapes(render):
    text = render(None)
    assert "\x1b" not in text
    assert len(text.splitlines()) == 12
    assert max(len(line) for line in text.splitlines()) <= 50


@pytest.mark.parametrize("render", RENDERERS)
def test_colours_are_the_themes_rgb_never_palette_indices(render):
    text = render(THEME)
    assert "\x1b[38;2;1;2;3m" in text or "\x1b[48;2;1;2;3m" in text
    assert not re.search(r"\x1b\[(?:3|4|9|10)[0-7]m", text)
    assert "38;5;" not in text and "48;5;" not in text


@pytest.mark.parametrize("render", RENDERERS)
def test_size_comes_from_the_arguments_not_the_terminal(render, monkeypatch):
    monkeypatch.setenv("COLUMNS", "20")
    monkeypatch.setenv("LINES", "5")
    text = render(None, width=100, height=30)
    assert len(text.splitlines()) == 30
    assert max(len(line) for line in text.splitlines()) > 60


def test_empty_figures_still_render():
    assert render_bars([], [], width=30, height=8, theme=None).count("\n") == 7
    assert render_lines([], width=30, height=8, theme=None).count("\n") == 7
    assert render_scatter([Series("none", [], [])], width=30, height=8, theme=None).count("\n") == 7


def test_long_titles_are_shortened_in_the_middle_rather_than_dropped():
    text = render_scatter([Series("p", [1, 2], [1, 2])], width=40, height=10, theme=None, title="x" * 100)
    assert "xxxxxxxx…xxxxxxxx" in text.splitlines()[0]
    # the end of a title tells plots apart (uid, subtype, notes): it is kept
    title = "amount per structure-unit-size; uid: ./app [real] (time only)"
    first = render_scatter([Series("p", [1, 2], [1, 2])], width=50, height=10, theme=None, title=title).splitlines()[0]
    assert "…" in first and first.rstrip().endswith("[real] (time only)") and first.strip().startswith("amount per")


def test_zero_is_drawn_as_an_empty_column():
    from perun_core.views.plotting import render_bars

    text = render_bars(["zero", "three"], [Series("v", [0, 1], [0.0, 3.0])], width=30, height=10, theme=None)
    rows = [line for line in text.splitlines() if "┤" in line or "│" in line][1:-1]
    axis = text.splitlines()[-1]
    zero_column = axis.index("zero") + 1
    assert rows and all(row[zero_column] == " " for row in rows if len(row) > zero_column)
    assert any(row[axis.index("three") + 1] != " " for row in rows)


def test_thin_points_keeps_one_real_point_per_occupied_cell():
    rng = np.random.default_rng(1)
    x = rng.normal(size=200_000)
    y = rng.normal(size=200_000) ** 2
    tx, ty = thin_points(x, y, columns=40, rows=10)
    assert len(tx) <= 400
    pairs = set(zip(x.tolist(), y.tolist()))
    assert all((a, b) in pairs for a, b in zip(tx.tolist(), ty.tolist()))

    def cells(xs, ys):
        col = np.minimum(np.floor((xs - x.min()) * 40 / (x.max() - x.min())), 39)
        row = np.minimum(np.floor((ys - y.min()) * 10 / (y.max() - y.min())), 9)
        return set(zip(col.tolist(), row.tolist()))

    assert cells(tx, ty) == cells(x, y)


def test_thin_points_leaves_small_clouds_and_drops_non_finite():
    x = np.array([1.0, 2.0, np.nan, 4.0])
    y = np.array([1.0, np.inf, 3.0, 4.0])
    tx, ty = thin_points(x, y, columns=10, rows=10)
    assert tx.tolist() == [1.0, 4.0] and ty.tolist() == [1.0, 4.0]


def test_thin_line_keeps_the_extremes_of_every_column_in_order():
    x = np.linspace(0, 1, 10_000)
    y = np.sin(x * 200)
    tx, ty = thin_line(x, y, columns=50)
    assert len(tx) <= 4 * 50
    assert np.all(np.diff(tx) > 0)
    column = np.minimum(np.floor(x * 50), 49)
    kept = np.minimum(np.floor(tx * 50), 49)
    for c in range(50):
        assert ty[kept == c].max() == y[column == c].max()
        assert ty[kept == c].min() == y[column == c].min()


def test_integer_ticks_only_for_a_few_integers():
    assert integer_ticks([np.array([0.0, 1.0, 2.0])], 60) == [0.0, 1.0, 2.0]
    assert integer_ticks([np.array([0.5, 1.0])], 60) is None
    assert integer_ticks([np.arange(100.0)], 60) is None


def test_threads_share_the_global_figure_safely():
    expected = {render.__name__: render(None) for render in RENDERERS}
    results: list[tuple[str, str]] = []
    errors: list[BaseException] = []

    def work(render):
        try:
            for _ in range(5):
                results.append((render.__name__, render(None)))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(render,)) for render in RENDERERS * 3]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(results) == 45
    assert all(text == expected[name] for name, text in results)


def test_output_does_not_depend_on_the_hash_seed():
    # plotext deduplicates through sets; the adapter makes its order stable
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = ("from perun_core.views.plotting import render_bars\nfrom perun_core.views import Series\n"
            "print(render_bars(['SLList_insert(SLList*, int)', 'SLList_search(SLList*, int)'], "
            "[Series('a', [0, 1], [20, 33]), Series('b', [0, 1], [3, 5])], width=70, height=16, theme=None, "
            "xlabel='function', ylabel='y'))")
    outputs = set()
    for seed in ("1", "2", "3", "4"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outputs.add(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env,
                                   cwd=Path(__file__).resolve().parents[2]).stdout)
    assert len(outputs) == 1


@pytest.mark.parametrize("stacked", [True, False])
def test_bars_stay_below_the_legend(stacked):
    # plotext draws the legend over the top rows of the plot, one per group
    groups = [Series("one", [0, 1], [5, 1]), Series("two", [0, 1], [5, 0]), Series("three", [0, 1], [2, 0])]
    text = render_bars(["a", "b"], groups, stacked=stacked, width=40, height=12, theme=None, title="t",
                       xlabel="x", ylabel="y")
    names = []
    for row in text.splitlines()[2:2 + len(groups)]:
        inside = re.split("[┤│]", row, maxsplit=1)[1].rstrip("│")
        # the legend entry (marker and name), then nothing: no bar under it
        marker, name = inside.split()
        names.append(name)
        assert inside.rstrip() == f" {marker} {name}", row
    assert sorted(names) == sorted(g.name for g in groups)
    # the highest bar still reaches up to just below the legend
    assert any(set("█▒░") & set(row) for row in text.splitlines()[2 + len(groups):4 + len(groups)])


def test_a_zero_is_no_bar_and_leaves_the_stack_part_above_it_whole():
    from perun_core.views.base import Series
    from perun_core.views.plotting import render_bars

    groups = [Series("low", [0, 1], [0.0, 1.0]), Series("gone", [0, 1], [0.0, 0.0]), Series("high", [0, 1], [2.0, 1.0])]
    text = render_bars(["a", "b"], groups, stacked=True, width=40, height=16, theme=None)
    rows = [line.split("┤" if "┤" in line else "│", 1)[1] for line in text.split("\n")[1:-2] if "┤" in line or "│" in line]
    bottom = rows[-1]
    left, right = bottom[: len(bottom) // 2], bottom[len(bottom) // 2:]
    assert left.strip() and set(left.strip()) == {"░"}  # a's bottom row is its 'high' part, not a blank row
    assert "█" in right  # b's bottom row is its 'low' part
    assert "gone" in text  # a group of zeros keeps its legend entry
    single = render_bars(["a", "b"], [Series("v", [0, 1], [0.0, 2.0])], width=30, height=10, theme=None)
    assert all(not line.split("┤")[1][:12].strip() for line in single.split("\n") if "┤" in line)  # zero: empty


def _legend_markers(text: str, names: list[str]) -> dict[str, str]:
    """The marker the legend shows before each name (plotext writes ``MM name`` inside the frame)."""
    plain = strip_ansi(text)
    found = {}
    for name in names:
        match = re.search(rf"(\S+) {re.escape(name)}\b", plain)
        assert match, f"no legend entry for {name}:\n{plain}"
        found[name] = match.group(1)[-1]
    return found


@pytest.mark.parametrize("theme", [None, THEME], ids=["plain", "colour"])
def test_every_series_has_a_marker_of_its_own_with_or_without_colour(theme):
    """Nothing is told by colour alone: lines, curves, clouds and bar groups differ in shape."""
    x = np.linspace(0, 10, 40)
    flow = render_lines([Series(f"s{i}", x, x * (i + 1)) for i in range(4)], width=60, height=16, theme=theme)
    assert len(set(_legend_markers(flow, ["s0", "s1", "s2", "s3"]).values())) == 4
    cloud = render_scatter([Series("pts", x, x * x)], [Series("lin", x, 10 * x), Series("quad", x, x * x + 3)],
                           width=60, height=16, theme=theme)
    assert len(set(_legend_markers(cloud, ["pts", "lin", "quad"]).values())) == 3
    stacked = render_bars(["a", "b"], [Series(f"g{i}", [0, 1], [1 + i, 2]) for i in range(3)], width=60, height=16,
                          theme=theme)
    assert len(set(_legend_markers(stacked, ["g0", "g1", "g2"]).values())) == 3
    # and the plot area holds each series' own marker, not just the legend
    body = strip_ansi(flow).splitlines()[4:]
    assert sum("*" in line for line in body) > 1 and sum("+" in line for line in body) > 1


@pytest.mark.parametrize("width, height", [(40, 12), (80, 24), (120, 40)])
def test_the_scatter_legend_stands_above_the_data(width, height):
    """Points along the top, where plotext draws its legend: the y axis reaches higher, so no point or curve
    cell shares a row with a legend entry."""
    x = np.arange(1, 40, dtype=float)
    y = np.full_like(x, 100.0)  # every point but the first on the top row
    y[0] = 0.0
    text = render_scatter([Series("cloud", x, y)], [Series("model", x, y)], width=width, height=height, theme=None)
    rows = text.split("\n")
    legend = [i for i, row in enumerate(rows) if "cloud" in row or "model" in row]
    assert len(legend) == 2
    for i in legend:
        after = rows[i].split("cloud" if "cloud" in rows[i] else "model", 1)[1]
        assert not after.strip(" │"), rows[i]  # nothing drawn right of the entry on its row
    assert any("•" in row for row in rows[legend[-1] + 1:])  # the points are all drawn, below the legend


def test_one_point_cloud_alone_has_no_legend():
    x = np.arange(1, 10, dtype=float)
    text = render_scatter([Series("only", x, x)], width=60, height=16, theme=None)
    assert "only" not in text and "•" in text


def test_lines_stay_below_their_legend():
    """plotext draws the legend over the plot's top rows: the y axis reaches higher, so no line runs through it."""
    rising = Series("rising", [1, 2, 3, 4], [1.0, 2.0, 3.0, 4.0])
    flat = Series("flat", [1, 2, 3, 4], [4.0, 4.0, 4.0, 4.0])
    text = render_lines([rising, flat], width=60, height=16, theme=None, unit="s", ylabel="amount [s]")
    legend = [line for line in text.splitlines() if "rising" in line or "flat" in line]
    assert len(legend) == 2
    # a legend row holds its frame, its marker and its name, and nothing drawn after the name
    assert all(re.fullmatch(r" *\S*[│┤] \S\S (rising|flat) *│", line) for line in legend), legend


@pytest.mark.parametrize("theme", [None, THEME], ids=["plain", "colour"])
def test_a_plot_too_low_for_its_legend_above_the_data_has_it_underneath(theme):
    """Four entries on a plot of four rows (a compare view at 80x24): plotext drew them over every row of the
    data; now they stand under the plot, with their markers, and the plot keeps its size."""
    x = np.arange(1, 9, dtype=float) * 1000
    y = x * x / 1e6
    curves = [Series("constant", x, np.full_like(x, y.mean())), Series("linear", x, y), Series("quadratic", x, y + 1)]
    text = render_scatter([Series("sll_insert", x, y)], curves, width=78, height=10, theme=theme, title="t",
                          xlabel="size", ylabel="amount")
    rows = strip_ansi(text).split("\n")
    assert len(rows) == 10
    frame = [i for i, row in enumerate(rows) if "└" in row][0]
    assert not any(name in row for row in rows[:frame] for name in ("constant", "linear", "quadratic", "sll_insert"))
    under = " ".join(rows[frame + 1:])
    assert all(f"{glyph} {name}" in under for glyph, name in
               (("⢕⢕", "constant"), ("**", "linear"), ("++", "quadratic"), ("••", "sll_insert")))
    assert all(len(row) <= 78 for row in rows)
    # the points are all on the plot: the top one too, where the legend used to be
    assert any("•" in row for row in rows[1:3])
    flow = render_lines([Series(f"s{i}", x, y * (i + 1)) for i in range(3)], width=60, height=8, theme=theme)
    plain = strip_ansi(flow).split("\n")
    assert len(plain) == 8 and plain[-1].split() == ["⢕⢕", "s0", "**", "s1", "++", "s2"]
    # a plot with no rows to spare (a 40x12 terminal) has no legend at all, never one over its data
    tiny = strip_ansi(render_scatter([Series("sll_insert", x, y)], curves, width=37, height=8, theme=theme,
                                     xlabel="size", ylabel="amount"))
    assert len(tiny.split("\n")) == 8 and not any(name in tiny for name in ("constant", "linear", "sll_insert"))


def test_a_legend_under_the_plot_leaves_out_the_notes_of_its_names_rather_than_the_whole_legend():
    """The demo's compare view at 80x24: whole, the entries take two lines, more than its four rows spare;
    without their '(R^2=...)' they take one, and the markers are still explained."""
    x = np.arange(1, 9, dtype=float) * 1000
    y = x * x / 1e6
    curves = [Series(f"{name} (R^2=0.216)", x, y + i) for i, name in enumerate(("constant", "linear", "quadratic"))]
    text = strip_ansi(render_scatter([Series("sll_insert", x, y)], curves, width=78, height=9, theme=None,
                                     title="t", xlabel="size", ylabel="amount"))
    rows = text.split("\n")
    assert len(rows) == 9
    assert rows[-1].split() == ["⢕⢕", "constant", "**", "linear", "++", "quadratic", "••", "sll_insert"]


def test_a_model_curve_under_a_nearly_equal_one_keeps_its_marker_in_sight():
    """A linear and a quadratic fit that nearly agree share most cells: the quadratic's ``+`` (drawn later) hid
    the linear model's ``*`` almost everywhere.  Now the ``*`` shows in about every other column of the stretch
    they share, and wherever the two part the linear one is drawn whole."""
    x = np.linspace(0, 100, 400)
    linear, quadratic = 2.0 * x, 2.0 * x + 0.0005 * x * x
    text = render_scatter([Series("points", [0, 50, 100], [0, 100, 200])],
                          [Series("constant", x, np.full_like(x, 100.0)), Series("linear", x, linear),
                           Series("quadratic", x, quadratic)], width=60, height=20, theme=None)
    plot = [line for line in text.splitlines() if "linear" not in line and "quadratic" not in line]
    stars = sum(line.count("*") for line in plot)
    pluses = sum(line.count("+") for line in plot)
    # the curves climb about 18 rows over some 55 columns; each has a share of them in sight
    assert stars >= 15 and pluses >= 15, "\n".join(plot)
    # the constant model crosses the others once: it is not marked again
    assert sum(line.count("⠤") + line.count("⠒") + line.count("⣀") + line.count("⠉") for line in plot) >= 40


def test_a_plot_of_three_rows_keeps_a_legend_of_one_line_under_it():
    """The compare view's baseline at 80x24 has three rows of data: its legend of one line was left out (the
    target, a row higher, had it); now it stands under the plot, which keeps two rows of data."""
    x = np.arange(1, 9, dtype=float) * 1000
    y = x / 1000
    curves = [Series("constant", x, np.full_like(x, y.mean())), Series("linear", x, y)]
    text = strip_ansi(render_scatter([Series("sll_insert", x, y)], curves, width=78, height=8, theme=None,
                                     title="t", xlabel="size", ylabel="amount"))
    rows = text.split("\n")
    assert len(rows) == 8
    assert rows[-1].split() == ["⢕⢕", "constant", "**", "linear", "••", "sll_insert"], text
    frame = [i for i, row in enumerate(rows) if "└" in row][0]
    assert frame - [i for i, row in enumerate(rows) if "┌" in row][0] - 1 == 2, text  # two rows of data


def test_a_location_shortened_keeps_its_programs_name_and_resource_with_one_ellipsis():
    """The check's findings read './sll-b…h [sys]' at their narrowest: the program's name was cut in its middle,
    so two programs of alike names read alike.  The directory gives way first, then the name's end."""
    from perun_core.views.style import fit_middle

    assert fit_middle("./sll-bench [real]", 17) == "…sll-bench [real]"
    assert fit_middle("./sll-bench [sys]", 15) == "sll-benc… [sys]"
    assert fit_middle("./sll-bench [max_rss]", 13) == "sl… [max_rss]"
    assert fit_middle("/usr/lib/perun/long/bin/program [real]", 20) == "…/bin/program [real]"
    assert fit_middle("uid: /opt/tools/app [real]", 22) == "uid: …/app [real]"
    for text, width in (("./sll-bench [sys]", 12), ("./sll-bench [max_rss]", 16), ("./a/b/c/program [real]", 14)):
        cut = fit_middle(text, width)
        assert len(cut) <= width and cut.count("…") == 1, cut
