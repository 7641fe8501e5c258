"""The comparison and its views on profiles with known differences (real perf and callgrind files).

``busy_slow`` (tests/fixtures/import/src) makes ``other()`` do three times
its work and leaves the rest alone, so ``other`` must lead every ranking.
Golden files: tests/diff/golden; regenerate by hand after a deliberate
change of the output and review the difference.
"""

from __future__ import annotations

import html.parser
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from perun_core import api
from perun_core.diff import compare, function_costs
from perun_core.errors import IncomparableProfiles, UnsupportedProfile
from perun_core.profile.model import Profile, Snapshot
from perun_core.profile.resources import ResourceTable
from perun_core.views.style import strip_ansi

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures" / "import"
GOLDEN = HERE / "golden"


def _perf_pair():
    a = api.read_imported("perf-script", [FIXTURES / "perf.script"])
    b = api.read_imported("perf-script", [FIXTURES / "perf_slow.script"])
    return api.compare_profiles(a, b, baseline_name="perf.script", target_name="perf_slow.script")


def _callgrind_pair():
    a = api.read_imported("callgrind", [FIXTURES / "callgrind.out"])
    b = api.read_imported("callgrind", [FIXTURES / "callgrind_slow.out"])
    return api.compare_profiles(a, b, baseline_name="callgrind.out", target_name="callgrind_slow.out")


def _flat(unit: str, values: dict[tuple[str, str], list[float]]) -> Profile:
    rows = [{"type": "time", "subtype": sub, "uid": uid, "amount": v} for (uid, sub), vs in values.items() for v in vs]
    return Profile(header={"type": "time", "units": {"time": unit}}, global_region=Snapshot(ResourceTable(rows), [], {}))


# -- the engine --------------------------------------------------------------------------------------

def test_changes_per_uid_and_subtype_by_impact():
    base = _flat("s", {("a", "wall"): [1.0, 3.0], ("b", "wall"): [10.0], ("gone", "wall"): [1.0]})
    target = _flat("s", {("a", "wall"): [4.0, 4.0], ("b", "wall"): [10.0], ("new", "wall"): [2.0]})
    result = compare(base, target)
    by_uid = {c.uid: c for c in result.changes}
    assert (by_uid["a"].baseline, by_uid["a"].target, by_uid["a"].absolute) == (2.0, 4.0, 2.0)  # means of runs
    assert by_uid["a"].relative == 1.0 and by_uid["a"].statistic == "mean"
    assert by_uid["new"].status == "new" and by_uid["new"].relative is None
    assert by_uid["gone"].status == "gone" and by_uid["b"].status == "same"
    assert [c.uid for c in result.changes] == ["a", "new", "gone", "b"]
    assert result.functions is None  # no stacks, no caller edges


def test_time_units_are_converted_never_mixed():
    base = _flat("s", {("a", "wall"): [1.0]})
    target = _flat("ms", {("a", "wall"): [1500.0]})
    change = compare(base, target).changes[0]
    assert (change.baseline, change.target, change.unit) == (1.0, 1.5, "s")
    with pytest.raises(IncomparableProfiles, match="'time\\(wall\\)' is in s in the baseline and in B"):
        compare(base, _flat("B", {("a", "wall"): [1.0]}))
    perf = api.read_imported("perf-script", [FIXTURES / "perf.script"])
    callgrind = api.read_imported("callgrind", [FIXTURES / "callgrind.out"])
    with pytest.raises(IncomparableProfiles, match="their functions cost time \\(samples\\) and instructions \\(Ir\\)"):
        compare(perf, callgrind)


def test_functions_of_sampled_stacks_rank_the_slowed_function_first():
    result = _perf_pair()
    first = result.functions[0]
    assert first.function == "other"
    assert (first.baseline_exclusive, first.target_exclusive) == (35, 67)
    assert (result.baseline_total, result.target_total) == (92, 130)
    assert first.contribution == pytest.approx(32 / 38)
    gone = {f.function for f in result.functions if f.status == "gone"}
    assert "irqentry_exit_to_user_mode" in gone and all(f.target_inclusive == 0 for f in result.functions
                                                         if f.function in gone)


def test_a_sampled_side_without_a_single_sample_costs_nothing_per_function():
    # a baseline run too short for the sampler (0 samples) against a slow target: the target's functions carry
    # the whole change, in both directions, and explain names them (it said "no change per function")
    from perun_core.check.explain_compare import explain_profiles

    slow = api.read_imported("perf-script", [FIXTURES / "perf_slow.script"])
    unsampled = Profile(header=dict(slow.header), global_region=Snapshot(ResourceTable([]), [], {}))
    forward = compare(unsampled, slow)
    assert (forward.baseline_total, forward.target_total) == (0.0, 130)
    assert forward.functions[0].function == "other" and forward.functions[0].target_exclusive == 67
    backward = compare(slow, unsampled)
    assert (backward.baseline_total, backward.target_total) == (130, 0.0)
    assert backward.functions[0].function == "other" and backward.functions[0].status == "gone"
    explanation = explain_profiles("perf", unsampled, slow, "a" * 7, "b" * 7, "busy_slow")
    assert explanation.explained and not explanation.message, explanation.message
    assert explanation.functions[0].function == "other"
    assert (explanation.baseline_total, explanation.target_total) == (0.0, 130)
    # two profiles without function data are still no comparison of functions
    assert compare(unsampled, unsampled).functions is None


def test_functions_of_callgrind_edges_exact_instruction_counts():
    result = _callgrind_pair()
    first = result.functions[0]
    assert first.function == "other" and first.exclusive_change == 64_000_040
    assert (first.baseline_calls, first.target_calls) == (20, 20)
    assert first.contribution == pytest.approx(64_000_040 / 64_000_224)
    assert result.function_unit == "Ir"
    assert any(f.status == "new" for f in result.functions)


def test_function_costs_from_traces_only():
    trace_a = [{"function": "leaf"}, {"function": "main"}]
    trace_b = [{"function": "main"}]
    rows = [{"type": "memory", "subtype": "malloc", "uid": "leaf", "amount": 10, "trace": trace_a},
            {"type": "memory", "subtype": "malloc", "uid": "leaf", "amount": 5, "trace": trace_a},
            {"type": "memory", "subtype": "malloc", "uid": "main", "amount": 1, "trace": trace_b}]
    profile = Profile(header={"type": "memory", "units": {"memory": "B"}},
                      global_region=Snapshot(ResourceTable(rows), [], {}))
    costs = function_costs(profile)
    assert costs.source == "stacks" and costs.unit == "B"
    assert costs.costs["leaf"][:2] == (15, 15) and costs.costs["main"][:2] == (1, 16)


# -- the views ---------------------------------------------------------------------------------------

def test_short_table_golden():
    assert api.render_diff(_perf_pair(), "short", width=100, limit=0) + "\n" == \
        (GOLDEN / "short_perf.txt").read_text()
    assert api.render_diff(_callgrind_pair(), "short", width=100, limit=12) + "\n" == \
        (GOLDEN / "short_callgrind.txt").read_text()


def test_short_table_colours_increases_red():
    text = api.render_diff(_perf_pair(), "short", width=100, color=True)
    assert "\x1b[38;2;215;48;39m" in text and "\x1b[38;2;26;152;80m" in text  # red up, green down


def test_folded_pair_golden():
    assert api.render_diff(_perf_pair(), "flamegraph", fmt="folded") + "\n" == (GOLDEN / "pair_perf.folded").read_text()


def test_difference_svg_structure():
    svg = api.render_diff(_perf_pair(), "flamegraph", fmt="svg", pixels=1000)
    root = ET.fromstring(svg.split("?>", 1)[1])
    ns = {"s": "http://www.w3.org/2000/svg"}
    assert root.get("width") == "1000"
    frames = root.findall(".//s:g[@class='frame']", ns)
    by_name = {g.get("data-name"): g for g in frames}
    assert set(by_name) == {"all", "__libc_start_call_main()", "main()", "leaf()", "other()"}
    other = by_name["other()"]
    assert other.find("s:title", ns).text.startswith("other(): 36 samples -> 67 samples, +86.1% (own +32 samples)")
    assert other.find("s:rect", ns).get("fill") == "rgb(255,30,30)"  # the largest growth: deepest red
    assert by_name["main()"].find("s:rect", ns).get("fill") == "rgb(235,235,235)"  # own amount unchanged
    # widths come from the target: other() has 67 of 130 samples
    width = float(other.find("s:rect", ns).get("width"))
    assert width == pytest.approx(67 / 130 * (1000 - 20), abs=0.01)


def test_difference_icicle_in_the_terminal():
    text = api.render_diff(_perf_pair(), "flamegraph", width=80, height=10)
    lines = text.splitlines()
    assert lines[0].startswith("Difference flame graph: perf.script -> perf_slow.script [samples]")
    assert "stacks only in the baseline are not drawn" in lines[-1]
    # without colour the change is in a sign before each frame's name: other() grew, main() kept its own amount
    assert "[+other()" in text and "[=main()" in text and "[+leaf()" in text
    # the legend under the graph, then what it leaves out (functions shrunk out of it, stacks only in the baseline)
    assert any(line.startswith("+ own amount grew") for line in lines[-4:-1])
    coloured = api.render_diff(_perf_pair(), "flamegraph", width=80, height=10, color=True)
    assert " +other()" in strip_ansi(coloured) and " =main()" in strip_ansi(coloured)


def test_a_shrinking_frame_carries_a_minus_sign():
    # the pair the other way round: other() lost samples
    a = api.read_imported("perf-script", [FIXTURES / "perf.script"])
    b = api.read_imported("perf-script", [FIXTURES / "perf_slow.script"])
    text = api.render_diff(api.compare_profiles(b, a), "flamegraph", width=80, height=10)
    assert "[-other()" in text and "[=main()" in text


def test_flamegraph_needs_stacks():
    base = _flat("s", {("a", "wall"): [1.0]})
    with pytest.raises(UnsupportedProfile) as both:
        api.render_diff(compare(base, base, baseline_name="old.perf", target_name="new.perf"), "flamegraph")
    assert "old.perf and new.perf have no resources with call stacks" in both.value.message
    # only the side without stacks is named (the other was called 'this profile' before)
    perf_target = _perf_pair().target
    with pytest.raises(UnsupportedProfile) as one:
        api.render_diff(compare(base, perf_target, baseline_name="flat.perf", target_name="stacks.perf"), "flamegraph")
    assert "flat.perf has no resources with call stacks" in one.value.message, one.value.message
    assert "stacks.perf" not in one.value.message


def test_bars_one_block_per_unit():
    text = api.render_diff(_perf_pair(), "bars", width=80, limit=3)
    assert text.splitlines()[0] == "perf.script (upper bar) -> perf_slow.script (lower bar)"
    # the amounts carry their unit: a '[samples]' (or '[s]' above '42.5 ms') in the title only repeated or contradicted it
    assert "time(samples)" in text.splitlines() and "time(function)" in text.splitlines()
    other = text.splitlines()[text.splitlines().index("time(samples)") + 1]
    assert other.startswith("other") and " 35 samples " in other


def test_bars_name_the_unit_only_to_tell_two_blocks_apart():
    seconds = _flat("s", {("./app", "user"): [0.0425]})
    millis = Profile(header={"type": "time", "units": {"time": "ms"}}, global_region=Snapshot(ResourceTable(
        [{"type": "time", "subtype": "user", "uid": "./lib", "amount": 7.42}]), [], {}))
    lines = api.render_diff(api.compare_profiles(seconds, seconds), "bars", width=80).splitlines()
    assert "time(user)" in lines and "42.5 ms" in " ".join(lines)
    both = api.render_diff(api.compare_profiles(seconds, millis), "bars", width=80).splitlines()
    assert "time(user) [s]" in both and "time(user) [ms]" in both


class _Html(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href") and value:
                self.urls.append(value)


def test_report_is_one_self_contained_html_file():
    page = api.render_diff(_perf_pair(), "report")
    parser = _Html()
    parser.feed(page)
    assert parser.urls == []  # nothing loaded from anywhere
    assert "link" not in parser.tags and parser.tags.count("table") == 2
    assert page.count('class="frame"') == 5 and '<table id="changes">' in page and '<table id="functions">' in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")


# -- the command line --------------------------------------------------------------------------------

def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "perun_core.cli.main", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_cli_diff_of_two_files_and_the_showdiff_alias(tmp_path):
    base = tmp_path / "base.perf"
    target = tmp_path / "target.perf"
    from perun_core.profile.codec import store_profile_at

    store_profile_at(api.read_imported("perf-script", [FIXTURES / "perf.script"]), base)
    store_profile_at(api.read_imported("perf-script", [FIXTURES / "perf_slow.script"]), target)
    done = _cli("diff", str(base), str(target), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()  # the names take one line or (long paths) one line each
    assert lines[next(i for i, line in enumerate(lines) if line.startswith("uid ")) + 1].split()[:3] == \
        ["other", "samples", "35"]
    done = _cli("diff", str(base), str(target), "flamegraph", "--width", "80", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # no colour on a pipe: the signs say what grew (+) and what kept its own amount (=)
    assert "[+other()" in done.stdout and "[=main()" in done.stdout and "\x1b[" not in done.stdout
    done = _cli("showdiff", str(base), str(target), "flamegraph", "-f", str(tmp_path / "d.folded"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "d.folded").read_text() + "\n" == (GOLDEN / "pair_perf.folded").read_text()
    done = _cli("diff", str(base), str(target), "report", "-f", str(tmp_path / "r.html"), cwd=tmp_path)
    assert done.returncode == 0 and (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    done = _cli("diff", str(base), str(tmp_path / "nope.perf"), cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.startswith("error: profile") and "Traceback" not in done.stderr
    done = _cli("diff", str(base), str(target), "bars", "--format", "svg", cwd=tmp_path)
    assert done.returncode == 2 and "has no format 'svg'" in done.stderr


# -- the noise floor -------------------------------------------------------------------------------------

def _timed_file(path: Path, real: float, rss: int) -> None:
    import json

    rows = [{"type": "time", "subtype": "real", "uid": "./app", "amount": real, "order": 1},
            {"type": "memory", "subtype": "max_rss", "uid": "./app", "amount": rss, "order": 1}]
    path.write_text(json.dumps({"header": {"type": "time", "units": {"time": "s", "memory": "B"}, "cmd": "./app"},
                                "collector_info": {"name": "time", "params": {}},
                                "global": {"timestamp": real, "resources": rows}}))


def test_changes_under_the_noise_floor_are_same():
    base = _flat("s", {("a", "wall"): [1.0], ("b", "wall"): [1.0], ("c", "wall"): [1.0]})
    target = _flat("s", {("a", "wall"): [0.999], ("b", "wall"): [1.0101], ("c", "wall"): [1.2]})
    by_uid = {c.uid: c for c in compare(base, target).changes}
    assert [by_uid[u].status for u in "abc"] == ["same", "changed", "changed"]
    # the floor is a share of the baseline: tighter, the 0.1 % change counts; looser, the 1 % one does not
    assert compare(base, target, noise_floor=0.0005).changes[-1].status == "changed"
    assert {c.uid: c.status for c in compare(base, target, noise_floor=0.02).changes}["b"] == "same"


def test_diff_cli_counts_a_tiny_max_rss_change_as_same(tmp_path):
    _timed_file(tmp_path / "old.perf", 0.25, 25_276_514_304)
    _timed_file(tmp_path / "new.perf", 0.30, 25_251_237_790)  # max_rss -0.1 %, real +20 %
    result = subprocess.run([sys.executable, "-m", "perun_core.cli.entry", "diff", "old.perf", "new.perf"],
                            cwd=tmp_path, capture_output=True, text=True, env={**__import__("os").environ,
                                                                              "NO_COLOR": "1"})
    assert result.returncode == 0, result.stderr
    assert "2 uids: 1 changed, 0 new, 0 gone, 1 same (within 1% of the baseline)" in result.stdout
    # amounts in their units: 250 ms, 23.5 GiB
    assert "250.0 ms" in result.stdout and "300.0 ms" in result.stdout and "23.5 GiB" in result.stdout
    assert "-0.1%" in result.stdout and "+20.0%" in result.stdout
    strict = subprocess.run([sys.executable, "-m", "perun_core.cli.entry", "diff", "old.perf", "new.perf",
                             "--noise-floor", "0.05"], cwd=tmp_path, capture_output=True, text=True)
    assert "2 uids: 2 changed, 0 new, 0 gone, 0 same (within 0.05% of the baseline)" in strict.stdout


def test_long_profile_names_get_a_line_each_and_are_never_cut_off(tmp_path):
    """Two names that do not fit on one line with the arrow: one line each, shortened in the middle if need be."""
    baseline, target = "time-sll-bench-15000-2026-11-27-01-46-39.perf", "time-sll-bench-6000-2026-11-27-01-46-40.perf"
    _timed_file(tmp_path / baseline, 0.25, 2_000_000)
    _timed_file(tmp_path / target, 0.30, 2_000_000)
    env = {**__import__("os").environ, "NO_COLOR": "1", "COLUMNS": "80"}
    result = subprocess.run([sys.executable, "-m", "perun_core.cli.entry", "diff", baseline, target], cwd=tmp_path,
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == [f"baseline: {baseline}", f"target:   {target} (time profiles)"]
    assert all(len(line) <= 80 for line in lines)
    narrow = subprocess.run([sys.executable, "-m", "perun_core.cli.entry", "diff", baseline, target], cwd=tmp_path,
                            capture_output=True, text=True, env={**env, "COLUMNS": "40"}).stdout.splitlines()
    assert [len(line) for line in narrow[:2]] == [40, 40] and all("…" in line for line in narrow[:2])
    assert narrow[1].endswith("(time profiles)")


def test_every_view_fits_a_40_column_terminal_without_cutting_a_number(tmp_path):
    """COLUMNS=40: each row of the tables on lines of its own, sentences wrapped, every amount whole."""
    import os

    from perun_core.profile.codec import store_profile_at
    from perun_core.views.style import text_width

    store_profile_at(api.read_imported("perf-script", [FIXTURES / "perf.script"]), tmp_path / "base.perf")
    store_profile_at(api.read_imported("perf-script", [FIXTURES / "perf_slow.script"]), tmp_path / "target.perf")

    def diff(view: str, columns: int, **env: str) -> str:
        done = subprocess.run([sys.executable, "-m", "perun_core.cli.entry", "diff", "base.perf", "target.perf", view],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "NO_COLOR": "1", "COLUMNS": str(columns), "LINES": "20", **env})
        assert done.returncode == 0, done.stderr
        return strip_ansi(done.stdout)

    wide = diff("short", 200)
    for view in ("short", "bars", "flamegraph"):
        for colour in ({}, {"NO_COLOR": "", "FORCE_COLOR": "1"}):
            text = diff(view, 40, **colour)
            assert max(text_width(line) for line in text.splitlines()) <= 40, (view, colour, text)
    narrow = diff("short", 40)
    # the amounts of the wide table, every one of them whole in the narrow one (in its order)
    amounts = [cell for line in wide.splitlines() if " uids: " not in line for cell in line.split("  ")
               if cell.strip() and cell.strip()[0] in "+-0123456789"]
    assert amounts and all(cell.strip() in narrow for cell in amounts)
    assert "other [samples]" in narrow.splitlines()[narrow.splitlines().index("uid [subtype]") + 3]
    assert "(within 1% of the baseline)" in narrow.replace("\n", " ")


def test_stacked_functions_put_a_row_on_one_line_of_numbers_when_single_spaces_fit():
    # at 72 columns the seven columns two apart need 74: one apart they fit, so no row wraps onto a third line
    text = api.render_diff(_callgrind_pair(), "short", width=72, limit=3)
    lines = text.split("functions by", 1)[1].splitlines()
    start = lines.index("function")
    assert "excl base" in lines[start + 1] and lines[start + 1].rstrip().endswith("calls")
    assert lines[start + 2] == "other"
    assert "38.0M Ir" in lines[start + 3] and lines[start + 3].endswith("20->20")
    assert lines[start + 4] == "hack_digit"
    assert all(len(line) <= 72 for line in text.splitlines())
    # wide enough for two apart: as before
    wide = api.render_diff(_callgrind_pair(), "short", width=80, limit=3)
    assert "  excl base  excl target" in wide


def test_a_sentence_never_breaks_a_count_from_its_unit():
    # "+64.0M Ir)" was broken after "64.0M" at 80 columns, leaving "Ir)" alone on the next line
    text = api.render_diff(_callgrind_pair(), "short", width=80, limit=3)
    title = text.split("functions by", 1)[1].split("\nfunction\n", 1)[0]
    assert "+64.0M Ir)" in title and not any(line.startswith("Ir") for line in title.splitlines())


def test_the_title_names_both_types_when_they_differ():
    # a time profile against a memory one was titled "(time profiles)", the baseline's type for both
    base = _flat("s", {("a", "wall"): [1.0]})
    rows = [{"type": "memory", "subtype": "malloc", "uid": "f", "amount": 16.0}]
    target = Profile(header={"type": "memory", "units": {"memory": "B"}},
                     global_region=Snapshot(ResourceTable(rows), [], {}))
    text = api.render_diff(api.compare_profiles(base, target, baseline_name="t.perf", target_name="m.perf"), "short",
                           width=100)
    assert text.splitlines()[0] == "t.perf -> m.perf (time and memory profiles)"
    same = api.render_diff(api.compare_profiles(base, base, baseline_name="t.perf", target_name="u.perf"), "short",
                           width=100)
    assert same.splitlines()[0] == "t.perf -> u.perf (time profiles)"


def _runs_file(path: Path, reals: list[float]) -> None:
    import json

    rows = [{"type": "time", "subtype": "real", "uid": "./app", "amount": real, "order": i}
            for i, real in enumerate(reals)]
    path.write_text(json.dumps({"header": {"type": "time", "units": {"time": "s"}, "cmd": "./app"},
                                "collector_info": {"name": "time", "params": {}},
                                "global": {"timestamp": sum(reals), "resources": rows}}))


def test_diff_and_check_give_one_pair_of_runs_the_same_change(tmp_path):
    """Runs with an outlier: their means moved by +64 %, the robust shift the check reports by +100 %; diff
    shows the check's levels and percentage, not the means'."""
    from conftest import run_cli

    _runs_file(tmp_path / "old.perf", [0.10, 0.10, 0.11, 0.10, 0.09, 0.10, 0.10, 0.11, 0.10, 0.45])
    _runs_file(tmp_path / "new.perf", [0.20, 0.20, 0.21, 0.20, 0.19, 0.20, 0.20, 0.21, 0.20, 0.20])
    env = {"NO_COLOR": "1", "COLUMNS": "80"}
    checked = run_cli("check", "profiles", "old.perf", "new.perf", cwd=tmp_path, env=env)
    assert checked.returncode == 3, checked.stdout + checked.stderr
    detail = next(line for line in checked.stdout.splitlines() if "from:" in line)
    shown = run_cli("diff", "old.perf", "new.perf", cwd=tmp_path, env=env)
    assert shown.returncode == 0, shown.stderr
    cells = next(line for line in shown.stdout.splitlines() if line.startswith("./app")).split()
    baseline, target, percent = " ".join(cells[2:4]), " ".join(cells[4:6]), cells[8]
    # the check's line: "from: 100.0 ms -> to: 200.0 ms (x2, +100.0%, ...)"; the means read 136.0 -> 201.0 ms
    assert f"from: {baseline} -> to: {target} (" in detail and f", {percent}," in detail, (cells, detail)
    assert percent == "+100.0%"


def _counted_file(path: Path, counts: dict[str, int]) -> None:
    import json

    rows = [{"type": "time", "subtype": "cpu", "uid": uid, "amount": amount} for uid, amount in counts.items()]
    path.write_text(json.dumps({"header": {"type": "time", "units": {"time": "samples"}, "cmd": "./app"},
                                "collector_info": {"name": "perf", "params": {}},
                                "global": {"timestamp": 1, "resources": rows}}))


def test_one_sample_is_singular_and_its_digits_stay_under_the_others(tmp_path):
    """``1 sample``, not ``1 samples``; in the table's right-aligned columns its last digit stands under that
    of ``56 samples`` (the singular's unit is padded, not the number moved)."""
    from conftest import run_cli

    _counted_file(tmp_path / "a.perf", {"main": 56, "helper": 1})
    _counted_file(tmp_path / "b.perf", {"main": 57, "helper": 2})
    done = run_cli("diff", "a.perf", "b.perf", cwd=tmp_path, env={"NO_COLOR": "1", "COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    assert "samples" in done.stdout and "1 samples" not in done.stdout and "1 sample " in done.stdout
    rows = {line.split()[0]: line for line in done.stdout.splitlines() if line.startswith(("main", "helper"))}
    assert rows["helper"].index("1 sample ") + 1 == rows["main"].index("56 samples") + 2  # baseline column
    assert rows["helper"].index("+1 sample") == rows["main"].index("+1 sample")  # change column
    shown = run_cli("show", "a.perf", "tableof", cwd=tmp_path, env={"NO_COLOR": "1", "COLUMNS": "80"})
    assert shown.returncode == 0, shown.stderr
    lines = {line.split()[-3]: line for line in shown.stdout.splitlines() if line.rstrip().endswith(("sample", "samples"))}
    assert lines["helper"].rstrip().endswith(" 1 sample") and lines["main"].rstrip().endswith("56 samples")
    assert lines["helper"].index(" 1 sample") == lines["main"].index("56 samples")


def test_one_profile_reads_the_same_statistic_whatever_it_is_compared_with():
    """A time profile's runs against another time profile and against a memory profile (its uids gone there):
    the baseline column is their median both times, and the table's header names the statistic."""
    runs = [0.070, 0.071, 0.072, 0.090, 0.130]  # one slow run pulls the mean (86.6 ms) far from the median
    timed = _flat("s", {("./app", "real"): runs})
    faster = _flat("s", {("./app", "real"): [v * 0.5 for v in runs]})
    memory = Profile(header={"type": "memory", "units": {"memory": "B"}},
                     global_region=Snapshot(ResourceTable([{"type": "memory", "subtype": "malloc", "uid": "f",
                                                            "amount": 64.0, "trace": [{"function": "f"}]}]), [], {}))
    against_time = api.compare_profiles(timed, faster).changes[0]
    against_memory = next(c for c in api.compare_profiles(timed, memory).changes if c.uid == "./app")
    assert against_time.baseline == pytest.approx(0.072) and against_memory.baseline == pytest.approx(0.072)
    assert (against_time.statistic, against_memory.statistic) == ("robust", "median")
    gained = next(c for c in api.compare_profiles(memory, timed).changes if c.uid == "./app")
    assert gained.status == "new" and gained.target == pytest.approx(0.072)
    text = strip_ansi(api.render_diff(api.compare_profiles(timed, memory), "short", width=200))
    assert "\nvalues: median of repeated measurements (runs)\n" in text
    text = strip_ansi(api.render_diff(api.compare_profiles(timed, faster), "short", width=200))
    assert "values: median of the baseline's repeated measurements (runs), for the target moved" in text
    assert "72.0 ms" in text


def _calls(outer: float, inner: float) -> Profile:
    """A tracer's call rows: ``outer`` (inclusive) calls ``inner`` once."""
    rows = [{"type": "mixed", "subtype": "time delta", "uid": "outer", "amount": outer, "exclusive": outer - inner},
            {"type": "mixed", "subtype": "time delta", "uid": "inner", "caller": "outer", "amount": inner,
             "exclusive": inner}]
    return Profile(header={"type": "mixed", "units": {"mixed(time delta)": "ns"}},
                   global_region=Snapshot(ResourceTable(rows), [], {}))


def test_the_uid_table_says_its_caller_edges_overlap_where_the_functions_add_up():
    """The uid rows of call rows are inclusive (outer 10 holds inner's 2, and 'outer -> inner' repeats them: 12 in
    all) while the functions split them (8 + 2 = 10): the view says so instead of leaving two totals to puzzle."""
    comparison = api.compare_profiles(_calls(10.0, 2.0), _calls(20.0, 4.0))
    rows = {c.uid: c.target for c in comparison.changes}
    assert rows == {"outer": 20.0, "outer -> inner": 4.0}
    assert comparison.target_total == 20.0 and comparison.overlapping_uids
    text = " ".join(strip_ansi(api.render_diff(comparison, "short", width=200)).split())
    assert "the rows overlap and add up to no total; the functions below count each call once, exclusively" in text
    flat = api.compare_profiles(_flat("s", {("a", "wall"): [1.0]}), _flat("s", {("a", "wall"): [2.0]}))
    assert not flat.overlapping_uids and "overlap" not in api.render_diff(flat, "short", width=200)


def test_the_stacks_left_out_are_pointed_to_in_the_words_of_the_front_end():
    """The TUI's difference flame graph pointed to '--format folded', an option of the command line only."""
    cli = api.render_diff(_perf_pair(), "flamegraph", width=80, height=10)
    tui = " ".join(api.render_diff(_perf_pair(), "flamegraph", width=80, height=10, front="tui").split())
    assert "see --format folded" in " ".join(cli.split())
    assert "--format" not in tui and "see the table, t" in tui


def test_the_flame_graph_calls_same_what_the_table_calls_same(tmp_path):
    """The table said a function that grew by 0.35% was "same (within 1% of the baseline)" while the difference
    flame graph marked its frame "+" (own amount grew): one rule, the comparison's noise floor, decides both."""

    def script(name: str, leaf: int, other: int) -> Path:
        block = ("busy 30101  2226.381981:    1001001 task-clock: \n"
                 "\t            116e leaf+0x25 (/tmp/idfx/busy)\n\t            122d main+0x21 (/tmp/idfx/busy)\n\n")
        gone = "busy 30101  2226.381981:    1001001 task-clock: \n\t            11f7 other+0x40 (/tmp/idfx/busy)\n\n"
        path = tmp_path / name
        path.write_text(block * leaf + gone * other)
        return path

    base = api.read_imported("perf-script", [script("base.script", 1000, 100)])
    target = api.read_imported("perf-script", [script("target.script", 1003, 150)])
    comparison = api.compare_profiles(base, target)
    statuses = {change.uid: change.status for change in comparison.changes}
    leaf = next(uid for uid in statuses if uid.startswith("leaf"))
    other = next(uid for uid in statuses if uid.startswith("other"))
    assert (statuses[leaf], statuses[other]) == ("same", "changed"), statuses
    text = api.render_diff(comparison, "flamegraph", width=80, height=10)
    assert "[=leaf()" in text and "[+other()" in text, text
    assert "= same (within 1%)" in text
    # a floor of 0.1% makes the 0.3% growth a change in both
    finer = api.compare_profiles(base, target, noise_floor=0.001)
    assert next(c.status for c in finer.changes if c.uid == leaf) == "changed"
    finer_text = api.render_diff(finer, "flamegraph", width=80, height=10)
    assert "[+leaf()" in finer_text and "= same (within 0.1%)" in finer_text


def test_two_minors_are_refused_instead_of_diffing_one_profile_with_itself(tmp_path):
    # 'diff -m b79ccdd 0@i -m 5a817b2 0@i' took the last -m for both tags and printed a table of 0% changes
    from conftest import run_cli

    done = run_cli("diff", "-m", "b79ccdd", "0@i", "-m", "5a817b2", "0@i", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "error: -m given 2 times (b79ccdd, 5a817b2): it names one commit for both profiles; compare two commits "
        "with --baseline-minor and --target-minor"]


def _sampled(stacks: dict[tuple[str, ...], int]) -> Profile:
    """A perf-like profile of ``stacks`` (leaf first) sampled that many times each."""
    from perun_core.collect.perf import stack_resources

    rows = stack_resources({tuple((name, "/bin/app") for name in stack): [count, count * 1000]
                            for stack, count in stacks.items()})
    return Profile(header={"type": "time", "cmd": "./app", "units": {"time": "samples"}},
                   collector_info={"name": "perf", "params": {"mode": "record"}},
                   global_region=Snapshot(ResourceTable(rows), [], {}))


def test_a_function_that_shrank_below_a_cell_is_named_under_the_flame_graph():
    """sll_insert went from 419 samples to 1 (-99.8%), the largest change, yet the difference flame graph drew only
    '=' frames and the grown sll_search: the target's one sample is narrower than a cell, and nothing said so."""
    deep = tuple(f"level{n}" for n in range(12))
    base = _sampled({("sll_insert", "main"): 419, ("sll_search", "main"): 100, (*deep, "main"): 50,
                     ("_dl_fixup", "main"): 1})
    target = _sampled({("sll_insert", "main"): 1, ("sll_search", "main"): 2000, (*deep, "main"): 50})
    comparison = api.compare_profiles(base, target, baseline_name="old", target_name="new")
    cli = " ".join(strip_ansi(api.render_diff(comparison, "flamegraph", width=80, height=8)).split())
    assert "-sll_insert" in cli and "419 samples -> 1 sample" in cli, cli
    assert "raise --height" in cli
    assert "_dl_fixup" not in cli  # a sample less is noise, not a change the graph hid
    # the explain dialog has no --height to raise: it points to what it shows instead
    dialog = " ".join(api.render_diff(comparison, "flamegraph", width=80, height=8, front="tui-dialog").split())
    assert "--" not in dialog and "see the ranked functions above" in dialog, dialog
    whole = api.render_diff(comparison, "flamegraph", width=80, height=200, front="tui-dialog")
    assert "deeper level" not in whole and "-sll_insert" in whole


def test_a_function_that_shrank_to_a_block_too_narrow_for_its_name_is_named_under_the_flame_graph():
    """In the demo at 40 columns sll_insert (409 samples -> 2) got a block of one cell: its colour, no '-' and no
    name, and the note on frames left out did not count it as left out."""
    base = _sampled({("sll_insert", "main"): 419, ("sll_search", "main"): 100})
    target = _sampled({("sll_insert", "main"): 30, ("sll_search", "main"): 2050})
    comparison = api.compare_profiles(base, target, baseline_name="old", target_name="new")
    text = " ".join(api.render_diff(comparison, "flamegraph", width=80, height=20).split())
    assert "sll_insert" not in text.split("+ own amount grew")[0]  # a block of a cell: not its name
    assert "-sll_insert() 419 samples -> 30 samples" in text, text


def test_a_function_left_out_of_the_flame_graph_is_named_with_its_amounts_over_all_its_call_paths():
    """The demo's note said '-sll_insert() 407 samples -> 0 samples' where the ranked functions said 409 -> 2: it
    summed only the call paths left out."""
    base = _sampled({("sll_insert", "main"): 407, ("sll_insert", "fill", "main"): 2, ("sll_search", "main"): 100})
    target = _sampled({("sll_insert", "fill", "main"): 2, ("sll_search", "fill", "main"): 2000})
    comparison = api.compare_profiles(base, target, baseline_name="old", target_name="new")
    text = " ".join(api.render_diff(comparison, "flamegraph", width=80, height=20).split())
    assert "-sll_insert() 409 samples -> 2 samples" in text, text
