"""Heap maps: the data model the TUI draws and its text rendering."""

from __future__ import annotations

import pytest

from perun_core.errors import EmptyProfile, InvalidParameter
from perun_core.profile.convert import to_heat_map_format
from perun_core.views import DEFAULT_THEME, get_view
from perun_core.views.heapmap import HEAT_GLYPHS, HeapMap, HeapMapResult, heat_glyph, heat_levels
from perun_core.views.style import strip_ansi

from .profiles import memory_profile

HEAP = get_view("heapmap")


def heap(profile=None) -> HeapMap:
    result = HEAP.run(profile or memory_profile())
    assert isinstance(result, HeapMapResult)
    return result.heap


def test_model_spans_every_allocation_and_names_the_sites():
    model = heap()
    assert (model.low, model.high) == (0x5000, 0x5400 + 511)
    assert [s.label for s in model.sites] == ["load (io.c:12)", "parse (parse.c:7)", "new_node (list.c:21)",
                                              "grow (vec.c:9)"]
    assert [len(s.addresses) for s in model.snapshots] == [3, 2, 2]  # frees are not allocations
    assert model.snapshots[1].allocated == 544


@pytest.mark.parametrize("cells", [1, 7, 48, 100, 1536, 5000])
def test_heat_cells_agree_with_the_profile_conversion(cells):
    model = heap()
    assert model.heat_cells(model.size_for(cells)) == to_heat_map_format(memory_profile(), cells=cells)["map"]


def test_a_cell_belongs_to_the_site_with_most_bytes_in_it():
    def alloc(address, amount, function):
        return {"type": "memory", "subtype": "malloc", "address": address, "amount": amount,
                "uid": {"function": function, "source": "a.c", "line": 1}}

    profile = {"header": {"type": "memory", "units": {"memory": "B"}},
               "snapshots": [{"resources": [alloc(0x1000, 20, "a"), alloc(0x1014, 12, "b"), alloc(0x1040, 4, "c")]}]}
    model = heap(profile)
    # 16-byte cells: a fills the first; the second has 4 bytes of a and 12 of b
    assert model.site_cells(0, 16) == [0, 1, -1, -1, 2]
    assert model.site_cells(0, 64) == [0, 2]
    assert model.heat_cells(16) == [1, 2, 0, 0, 1]


def test_one_snapshot_and_the_heat_mode():
    one = HEAP.render(HEAP.run(memory_profile(), {"snapshot": 2}), width=60, height=12)
    assert one.startswith("snapshot 2 (time 75.0 ms): 2 allocations, 80 B")
    assert "A load" not in one and "B parse (parse.c:7): 48 B" in one
    heat = HEAP.render(HEAP.run(memory_profile(), {"mode": "heat"}), width=60, height=12)
    assert heat.startswith("heat map of 3 snapshots: 7 allocations")
    # shades, not only colours: the hottest cells are full blocks, the legend says what each shade counts
    assert "█" in heat and "░" in heat and heat.splitlines()[-1] == "· none  ░ 1  █ 2 allocations per cell"


def test_colour_uses_the_theme():
    text = HEAP.render(HEAP.run(memory_profile()), width=60, height=12, theme=DEFAULT_THEME)
    r, g, b = DEFAULT_THEME.colour(0)
    assert f"\x1b[48;2;{r};{g};{b}m" in text


def test_snapshot_out_of_range():
    with pytest.raises(InvalidParameter, match="parameter 'snapshot' = 3: expected a snapshot number from 0 to 2"):
        HEAP.run(memory_profile(), {"snapshot": 3})


def test_only_frees_are_no_allocations():
    profile = memory_profile()
    for snapshot in profile["snapshots"]:
        snapshot["resources"] = [r for r in snapshot["resources"] if r["subtype"] == "free"]
    with pytest.raises(EmptyProfile, match="the profile has no allocations"):
        HEAP.run(profile)


@pytest.mark.parametrize("hottest", [1, 2, 3, 4, 5, 7, 9, 16, 100, 1001])
def test_the_heat_legend_covers_every_count_once_and_agrees_with_the_cells(hottest):
    levels = heat_levels(hottest)
    # ranges follow one another from 1 to the hottest count, in shade order
    assert levels[0][1] == 1 and levels[-1][2] == hottest and levels[-1][0] == "█"
    for (_g, _low, high), (_g2, low, _high) in zip(levels, levels[1:]):
        assert low == high + 1
    assert [glyph for glyph, _l, _h in levels] == [g for g in HEAT_GLYPHS if g in {x for x, _l, _h in levels}]
    for glyph, low, high in levels:
        assert heat_glyph(low, hottest) == glyph and heat_glyph(high, hottest) == glyph


def test_the_coloured_heat_map_keeps_its_shades():
    """Colour adds to the shades, it does not replace them: the text without colour reads the same."""
    heat = HEAP.render(HEAP.run(memory_profile(), {"mode": "heat"}), width=60, height=12, theme=DEFAULT_THEME)
    plain = HEAP.render(HEAP.run(memory_profile(), {"mode": "heat"}), width=60, height=12)
    assert "\x1b[" in heat and strip_ansi(heat) == plain


def test_a_snapshot_time_reads_in_seconds_with_its_unit():
    """The memory collector writes a snapshot's time as seconds in text ("0.015000"): shown as 15.0 ms."""
    from perun_core.views.heapmap import HeapSnapshot

    assert HeapSnapshot("0.015000", [], [], []).time_text == "15.0 ms"
    assert HeapSnapshot("2.5", [], [], []).time_text == "2.50 s"
    assert HeapSnapshot("after\x1b[2Jinit", [], [], []).time_text == "after\\e[2Jinit"
