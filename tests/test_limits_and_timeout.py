"""Bounded work (size options carry their limits) and the default timeout of collect and run."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from perun_core import api
from perun_core.errors import CollectionError, ConfigError, InvalidParameter
from perun_core.params import MAX_HEIGHT, MAX_PIXELS, MAX_REPEAT, MAX_WIDTH


def profile_file(root, name="p.perf"):
    data = {"origin": "0" * 40, "header": {"type": "time", "units": {"time": "s"}, "cmd": "ls"},
            "collector_info": {"name": "time", "params": {}}, "postprocessors": [],
            "global": {"time": 1, "resources": [{"amount": 0.1 * i, "uid": "ls", "type": "time",
                                                 "structure-unit-size": i} for i in range(1, 30)]}}
    (root / name).write_text(json.dumps(data))
    return name


@pytest.mark.parametrize("view, option, value, limit", [
    ("bars", "--width", "100000000", MAX_WIDTH),
    ("bars", "--width", "10000", MAX_WIDTH),
    ("bars", "--height", "10000000", MAX_HEIGHT),
    ("flow", "--height", "1001", MAX_HEIGHT),
    ("tableof", "--width", "5000", MAX_WIDTH),
    ("scatter", "--width", "1001", MAX_WIDTH),
])
def test_sizes_beyond_the_limit_are_refused_naming_it(tmp_path, view, option, value, limit):
    name = profile_file(tmp_path)
    result = run_cli("show", name, view, option, value, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and f"<={limit}" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_largest_size_renders_in_bounded_time(tmp_path):
    name = profile_file(tmp_path)
    result = run_cli("show", name, "bars", "--width", str(MAX_WIDTH), "--height", "100", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert max(map(len, result.stdout.splitlines())) <= MAX_WIDTH + 1


def test_the_view_api_checks_the_limits_too():
    from perun_core.views import get_view

    view = get_view("bars")
    with pytest.raises(InvalidParameter, match=f"from 20 to {MAX_WIDTH}"):
        view.render(None, width=MAX_WIDTH + 1)
    with pytest.raises(InvalidParameter, match=f"from 5 to {MAX_HEIGHT}"):
        view.render(None, height=10 ** 7)


def test_unit_repetitions_are_bounded(perun_repo):
    root, _ = perun_repo
    result = run_cli("collect", "time", "-r", str(MAX_REPEAT + 1), "--", "true", cwd=root)
    assert result.returncode in (1, 2)
    assert f"from 1 to {MAX_REPEAT}" in result.stderr and "Traceback" not in result.stderr


def test_execute_timeout_is_the_default_timeout_of_collect(perun_repo):
    root, _ = perun_repo
    assert api.config_get("execute.timeout", cwd=root).value == 3600
    api.config_set("execute.timeout", 0.5, scope="local", cwd=root)
    with pytest.raises(CollectionError, match="timed out after 0.5 s"):
        api.collect("time", ["sleep 30"], cwd=root)
    # an explicit --timeout wins over the configured default
    api.config_set("execute.timeout", 0.2, scope="local", cwd=root)
    result = api.collect("time", ["sleep 0.5"], params={"timeout": 20}, cwd=root)
    assert len(result.profiles) == 1


@pytest.mark.parametrize("value", [-1, "soon", True, 10 ** 9])
def test_execute_timeout_values_are_checked(perun_repo, value):
    root, _ = perun_repo
    with pytest.raises(ConfigError, match="execute.timeout"):
        api.config_set("execute.timeout", value, scope="local", cwd=root)
