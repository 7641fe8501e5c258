"""Flame graphs: the call tree, SVG frames and widths, folded stacks and speedscope JSON."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from perun_core.errors import EmptyProfile, InvalidParameter
from perun_core.profile import Profile
from perun_core.profile.convert import to_flame_graph_format
from perun_core.views import DEFAULT_THEME, get_view
from perun_core.views.flamegraph import (
    SPEEDSCOPE_SCHEMA,
    SVG_WIDTH,
    FlameGraph,
    default_of,
    render_svg,
    to_speedscope,
)

from .profiles import memory_profile, perf_profile, sampling_profile, trace_profile

SVG = "{http://www.w3.org/2000/svg}"
FLAME = get_view("flamegraph")

#: Inclusive bytes of the memory profile (frees consume nothing).
MEMORY_TOTALS = {
    "all": 976, "_start()": 976, "__libc_start_main()": 976, "main()": 976,
    "grow()": 512, "realloc()": 512, "read_all()": 256, "load()": 256,
    "parse()": 112, "calloc()": 112, "insert()": 96, "new_node()": 96,
}


def graph(profile=None) -> FlameGraph:
    return FLAME.run(profile or memory_profile())


def test_tree_holds_inclusive_totals():
    tree = graph()
    assert tree.total == 976 and tree.unit == "B"
    main = tree.root.children["_start()~unreachable~0"].children["__libc_start_main()~unreachable~0"] \
        .children["main()~app.c~40"]
    assert {c.name: c.total for c in main.children.values()} == {"grow()": 512, "read_all()": 256, "parse()": 112,
                                                                  "insert()": 96}
    assert main.self_amount == 0
    assert [c.name for c in main.widest_first()] == ["grow()", "read_all()", "parse()", "insert()"]
    assert [c.name for c in main.alphabetical()] == ["grow()", "insert()", "parse()", "read_all()"]


def test_folded_output_is_the_profile_conversion():
    assert FLAME.render(graph(), fmt="folded") == "\n".join(to_flame_graph_format(memory_profile()))


def frames_of(svg_text: str) -> list[tuple[str, int, float, str]]:
    """``(name, depth, width, title)`` of every frame rect of an SVG flame graph."""
    root = ET.fromstring(svg_text)
    out = []
    for group in root.iter(f"{SVG}g"):
        if group.get("class") != "frame":
            continue
        rect = group.find(f"{SVG}rect")
        title = group.find(f"{SVG}title")
        out.append((group.get("data-name"), int(group.get("data-depth")), float(rect.get("width")), title.text))
    return out


def test_svg_has_every_frame_with_its_proportional_width():
    svg = FLAME.render(graph(), fmt="svg")
    frames = frames_of(svg)
    usable = SVG_WIDTH - 20
    by_name: dict[str, float] = {}
    for name, _depth, width, _title in frames:
        by_name[name] = by_name.get(name, 0) + width
    # malloc appears twice (under load and under new_node): 256 + 96 bytes
    expected = dict(MEMORY_TOTALS, **{"malloc()": 352})
    assert set(by_name) == set(expected)
    for name, total in expected.items():
        assert by_name[name] == pytest.approx(total / 976 * usable, abs=0.01), name
    depths = {name: depth for name, depth, _w, _t in frames}
    assert depths["all"] == 0 and depths["main()"] == 3 and depths["realloc()"] == 5
    assert ("grow()", 4, pytest.approx(512 / 976 * usable, abs=0.01),
            "grow() at vec.c:9 (512 B, 52.46%)") in frames


def test_svg_children_sit_inside_their_parent_and_stack_upwards():
    root = ET.fromstring(FLAME.render(graph(), fmt="svg"))
    rects = {}
    for group in root.iter(f"{SVG}g"):
        if group.get("class") == "frame":
            rect = group.find(f"{SVG}rect")
            rects[group.get("id")] = (int(group.get("data-depth")), float(rect.get("x")), float(rect.get("width")),
                                      float(rect.get("y")))
    by_depth: dict[int, list] = {}
    for depth, x, width, y in rects.values():
        by_depth.setdefault(depth, []).append((x, width, y))
    for depth in range(1, max(by_depth) + 1):
        parents = by_depth[depth - 1]
        for x, width, y in by_depth[depth]:
            assert any(px - 0.01 <= x and x + width <= px + pw + 0.01 and y < py for px, pw, py in parents)


def test_svg_is_interactive_and_escapes_names():
    profile = memory_profile()
    profile["snapshots"][0]["resources"][0]["trace"][1]["function"] = "load<T & U>"
    svg = FLAME.render(graph(profile), fmt="svg")
    root = ET.fromstring(svg)  # well-formed despite the name
    assert root.get("onload") == "init(evt)"
    script = root.find(f"{SVG}script").text
    assert "function zoom(" in script and "function search(" in script
    assert any(name == "load<T & U>()" for name, *_ in frames_of(svg))
    assert root.find(f".//{SVG}text[@id='search']").text == "Search"


def test_tiny_frames_are_left_out_of_the_svg():
    profile = memory_profile()
    profile["snapshots"][0]["resources"][2]["amount"] = 10**6
    names = {name for name, *_ in frames_of(render_svg(graph(profile)))}
    assert "realloc()" in names  # 512 B of a million is still 0.6 px
    profile["snapshots"][0]["resources"][2]["amount"] = 10**8
    assert "realloc()" not in {name for name, *_ in frames_of(render_svg(graph(profile)))}


@pytest.mark.parametrize(("make", "unit"), [(memory_profile, "bytes"), (sampling_profile, "none")])
def test_speedscope_file_has_the_required_fields(make, unit):
    data = json.loads(FLAME.render(graph(make()), fmt="speedscope"))
    assert data["$schema"] == SPEEDSCOPE_SCHEMA
    frames = data["shared"]["frames"]
    assert frames and all(isinstance(f["name"], str) for f in frames)
    assert len(data["profiles"]) == 1
    profile = data["profiles"][0]
    assert profile["type"] == "sampled"
    for key in ("name", "unit", "startValue", "endValue", "samples", "weights"):
        assert key in profile
    assert profile["unit"] == unit
    assert len(profile["samples"]) == len(profile["weights"])
    assert all(0 <= i < len(frames) for sample in profile["samples"] for i in sample)
    assert profile["startValue"] == 0 and profile["endValue"] == sum(profile["weights"])


def test_speedscope_stacks_go_from_the_root_to_the_leaf():
    data = to_speedscope(graph())
    frames = data["shared"]["frames"]
    first = data["profiles"][0]["samples"][0]
    assert [frames[i]["name"] for i in first] == ["_start", "__libc_start_main", "main", "grow", "realloc"]
    assert frames[first[3]] == {"name": "grow", "file": "vec.c", "line": 9}


def test_time_profiles_with_traces_are_shown():
    tree = graph(sampling_profile())
    assert tree.total == 100 and tree.unit == "samples"
    # main at three lines: frames are function, source and line
    assert sorted((c.label, c.total) for c in tree.root.children.values()) == [
        ("main()~app.c~1", 65), ("main()~app.c~2", 20), ("main()~app.c~3", 15)]


def test_only_frees_leave_nothing_to_show():
    profile = memory_profile()
    for snapshot in profile["snapshots"]:
        snapshot["resources"] = [r for r in snapshot["resources"] if r["subtype"] == "free"]
    with pytest.raises(EmptyProfile, match="no resources with a call trace and a positive 'amount'"):
        graph(profile)


def test_icicle_puts_the_widest_frames_first_and_fits_the_width():
    text = FLAME.render(graph(), width=40, height=20)
    rows = text.splitlines()
    assert rows[0] == "Flame graph of amount: total 976 B"  # the unit once, with the amount
    assert rows[1] == "[all" + " " * 35 + "]"
    assert rows[5].startswith("[grow()") and all(len(row) <= 40 for row in rows)


def test_trace_profiles_add_up_exclusive_durations_by_default():
    # amount is inclusive: added along the stacks, every nested call would count again in each caller
    tree = graph(trace_profile())
    assert tree.of == "exclusive" and tree.unit == "ns" and tree.total == 10_000
    main = tree.root.children["main()"]
    assert {c.name: c.total for c in main.children.values()} == {"build()": 5_000, "search()": 3_000, "init()": 1_000}
    assert main.self_amount == 1_000
    inclusive = FLAME.run(trace_profile(), {"of": "amount"})
    assert inclusive.of == "amount" and inclusive.total == 24_800
    assert default_of(Profile.from_dict(trace_profile())) == "exclusive"


def test_sampling_profiles_keep_amount_when_exclusive_lives_on_other_rows():
    # perf's exclusive samples are on its per-function rows, which carry no trace
    tree = graph(perf_profile())
    assert tree.of == "amount" and tree.unit == "samples" and tree.total == 200
    assert graph(memory_profile()).of == "amount"
    profile = trace_profile()
    del profile["global"]["resources"][3]["exclusive"]
    assert graph(profile).of == "amount"  # one traced call without it: no exclusive graph


def test_svg_width_is_the_asked_pixels():
    root = ET.fromstring(FLAME.render(graph(), fmt="svg", pixels=800))
    assert root.get("width") == "800" and root.get("viewBox").startswith("0 0 800 ")
    widths = {name: width for name, _depth, width, _title in frames_of(FLAME.render(graph(), fmt="svg", pixels=800))}
    assert widths["all"] == pytest.approx(800 - 20)
    assert ET.fromstring(FLAME.render(graph(), fmt="svg")).get("width") == str(SVG_WIDTH)
    # the text formats do not care
    assert FLAME.render(graph(), width=40, height=20, pixels=800) == FLAME.render(graph(), width=40, height=20)
    with pytest.raises(InvalidParameter, match="from 200 to 8000 pixels"):
        FLAME.render(graph(), fmt="svg", pixels=120)


def test_coloured_icicle_tells_neighbours_of_one_colour_apart():
    # the sampling profile has main() three times side by side (three call sites)
    text = FLAME.render(graph(sampling_profile()), width=72, height=10, theme=DEFAULT_THEME)
    row = text.splitlines()[2]
    backgrounds = re.findall(r"\x1b\[48;2;(\d+;\d+;\d+)m", row)
    assert len(backgrounds) == 3
    assert backgrounds[0] != backgrounds[1] and backgrounds[1] != backgrounds[2]
    assert backgrounds[0] == backgrounds[2]  # alternating: a darker shade in between
