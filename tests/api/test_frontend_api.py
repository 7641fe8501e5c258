"""The porcelain the front ends use instead of the core's internals: show, summary, the job matrix, the editor."""

from __future__ import annotations

import json
import stat

import pytest

from conftest import time_profile, write_pending
from perun_core import api
from perun_core.errors import ConfigError, UnknownUnit

from views.profiles import complexity_profile, memory_profile
from views.test_golden import GOLDEN


@pytest.fixture
def profiles(tmp_path):
    for name, make in (("complexity", complexity_profile), ("memory", memory_profile)):
        (tmp_path / f"{name}.perf").write_text(json.dumps(make()))
    return tmp_path


# -- show ----------------------------------------------------------------------------------

def test_show_renders_what_the_cli_prints(profiles):
    shown = api.show(str(profiles / "memory.perf"), "heapmap", width=72, height=10)
    assert shown.text + "\n" == (GOLDEN / "heapmap_memory.txt").read_text(encoding="utf-8")
    assert (shown.view, shown.fmt, shown.path) == ("heapmap", "text", None)


def test_show_in_two_steps_is_the_same(profiles):
    loaded = api.load_profile(str(profiles / "memory.perf"))
    model = api.build_view(loaded.profile, "heapmap")
    assert api.render_view("heapmap", model, width=72, height=10) + "\n" == (
        GOLDEN / "heapmap_memory.txt").read_text(encoding="utf-8")


def test_show_writes_a_file_by_its_suffix_and_the_umask(profiles):
    target = profiles / "flame.folded"
    shown = api.show(str(profiles / "memory.perf"), "flamegraph", filename=str(target))
    assert shown.path == target and shown.fmt == "folded"
    assert target.read_text() == (GOLDEN / "flamegraph_memory_folded.txt").read_text()
    assert stat.S_IMODE(target.stat().st_mode) & 0o044  # readable by others, as a redirection would make it


def test_show_html_without_a_page_maker_is_plain_text(profiles):
    target = profiles / "heap.html"
    api.show(str(profiles / "memory.perf"), "heapmap", filename=str(target), width=72, height=10)
    page = target.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<title>heapmap: " in page
    assert "\x1b[" not in page and "snapshot 0" in page


def test_show_names_unknown_views():
    with pytest.raises(UnknownUnit) as caught:
        api.show("whatever.perf", "nosuch")
    assert "tableof" in caught.value.message


# -- the layouts the TUI draws ----------------------------------------------------------------

@pytest.mark.parametrize("width", range(40, 120, 7))
def test_heap_layout_fits_the_width_the_text_map_draws(profiles, width):
    loaded = api.load_profile(str(profiles / "memory.perf"))
    heap = api.build_view(loaded.profile, "heapmap").heap
    layout = api.layout_heap(heap, width, 6, 0, "heap")
    # address label, the two borders, the cells
    assert layout.label + 2 + layout.columns <= width
    text = api.render_view("heapmap", api.build_view(loaded.profile, "heapmap", {"snapshot": 0}), width=width,
                           height=8)
    assert max(len(line) for line in text.splitlines()[1:1 + layout.rows]) <= width


def test_flame_layout_is_the_icicle_of_show(profiles):
    loaded = api.load_profile(str(profiles / "memory.perf"))
    graph = api.build_view(loaded.profile, "flamegraph")
    layout = api.layout_flame(graph.root, 80, 3)
    assert [span.frame for span in layout.rows[0]] == [graph.root]
    assert all(span.end <= 80 for row in layout.rows for span in row)
    assert layout.hidden == max(graph.root.depth() + 1 - 3, 0)
    assert layout.find(graph.root) == (0, 0)


# -- summary ------------------------------------------------------------------------------------

def test_summary_of_a_profile(profiles):
    loaded = api.load_profile(str(profiles / "complexity.perf"))
    summary = api.summary(loaded.profile)
    amount = next(f for f in summary.fields if f.key == "amount")
    assert sum(f.count for f in summary.fields if f.key == "amount") == summary.resources > 0
    assert amount.minimum <= amount.mean <= amount.maximum
    assert {row.model for row in summary.models} >= {"linear", "quadratic", "regressogram"}
    assert api.format_number(12345) == "12 345" and api.format_number(0.5) == "0.5"


# -- the job matrix ---------------------------------------------------------------------------

def test_matrix_read_validate_save(perun_repo):
    root, _shas = perun_repo
    values = api.read_matrix(cwd=root)
    assert set(values) == set(api.MATRIX_KEYS)
    jobs, warning = api.validate_matrix({"cmds": None, "collectors": None}, cwd=root)
    assert jobs == [] and "no commands" in warning
    edited = {**values, "cmds": ["./app"], "args": ["-a", "-b"], "collectors": [{"name": "time"}]}
    jobs, warning = api.validate_matrix(edited, cwd=root)
    assert warning == "" and len(jobs) == 2 and {job.collector.name for job in jobs} == {"time"}
    local = root / ".perun" / "local.yml"
    local.write_text(local.read_text() + "# kept: a comment of the user\n")
    api.save_matrix(edited, ("cmds", "args", "collectors"), cwd=root)
    assert api.read_matrix(cwd=root)["args"] == ["-a", "-b"]
    assert "# kept: a comment of the user" in local.read_text()
    with pytest.raises(UnknownUnit):
        api.validate_matrix({**edited, "collectors": [{"name": "nosuch"}]}, cwd=root)
    with pytest.raises(ConfigError):
        api.validate_matrix({**edited, "cmds": "not a list"}, cwd=root)


# -- the editor ---------------------------------------------------------------------------------

def test_editor_lookup_order(perun_repo, monkeypatch):
    root, _shas = perun_repo
    assert api.editor_command(scope="local", cwd=root) == "vi"
    api.config_set("general.editor", "nano -w", scope="shared", cwd=root)
    assert api.editor_command(scope="local", cwd=root) == "nano -w"
    api.config_set("general.editor", "ed", scope="local", cwd=root)
    assert api.editor_command(scope="local", cwd=root) == "ed"
    # a broken local.yml still gives an editor: the one that is to repair it
    (root / ".perun" / "local.yml").write_text("general: [\n")
    assert api.editor_command(scope="local", cwd=root) == "nano -w"
    request = api.config_edit_request(scope="local", cwd=root)
    assert request.command == ["nano", "-w", str(root / ".perun" / "local.yml")]
    monkeypatch.setenv("EDITOR", "emacs")
    assert api.editor_command(scope="local", cwd=root) == "emacs"
    monkeypatch.setenv("VISUAL", "code --wait")
    assert api.editor_command(scope="local", cwd=root) == "code --wait"


def test_units_catalog():
    assert "time" in api.unit_names("collector")
    assert api.get_unit("collector", "time").name == "time"
    assert api.unit_params("collector", "time", {"repeat": "3"})["repeat"] == 3
    with pytest.raises(UnknownUnit):
        api.get_unit("postprocessor", "nosuch")


def test_pending_profiles_are_found_by_the_porcelain(perun_repo):
    root, shas = perun_repo
    write_pending(root, "t.perf", time_profile(shas[-1]))
    report = api.status(cwd=root)
    assert [info.source for info in report.pending] == ["t.perf"]
    assert isinstance(report.pending[0], api.ProfileInfo)
