"""Units: typed parameters, registries, entry points, the phase protocol and the normalizer."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from conftest import time_profile, write_pending
from runhelpers import run_env, documented  # noqa: F401 - autouse fixture

from perun_core import api, units
from perun_core.api import run as api_run
from perun_core.errors import CollectionError, ConfigError, InvalidParameter, UnitError, UnknownUnit
from perun_core.postprocess.normalizer import Normalizer
from perun_core.profile.model import Profile
from perun_core.units import Param, PhaseResult, UnitContext
from perun_core.params import convert_params, load_params_document


# -- parameters -----------------------------------------------------------------------------

@pytest.mark.parametrize("kind, value, expected", [
    ("int", "3", 3), ("int", 4, 4), ("int", 5.0, 5), ("float", "0.5", 0.5), ("float", 2, 2.0),
    ("bool", "yes", True), ("bool", "False", False), ("bool", 1, True), ("bool", True, True),
    ("str", 12, "12"), ("str", "x", "x"),
])
def test_param_converts_yaml_and_cli_values(kind, value, expected):
    converted = Param("p", kind).convert(value, "unit")
    assert converted == expected and type(converted) is type(expected)


@pytest.mark.parametrize("param, value", [
    (Param("p", "int"), True), (Param("p", "int"), "3.5"), (Param("p", "int"), [1]),
    (Param("p", "int", minimum=1), 0), (Param("p", "float", maximum=1.0), 1.5), (Param("p", "float"), "nan"),
    (Param("p", "bool"), "maybe"), (Param("p", "bool"), 2), (Param("p", "choice", choices=("a", "b")), "c"),
    (Param("p", "str"), {"a": 1}), (Param("p", "list", item="int"), ["1", "x"]),
])
def test_param_rejects_values_with_a_message_naming_everything(param, value):
    with pytest.raises(InvalidParameter) as info:
        param.convert(value, "myunit")
    assert info.value.unit == "myunit" and info.value.name == "p" and info.value.value == value
    assert info.value.message.startswith("myunit: parameter 'p'") and "expected" in info.value.message


def test_list_and_choice_params():
    assert Param("p", "list", item="int").convert("1, 2,3", "u") == [1, 2, 3]
    assert Param("p", "list").convert(["a", 2], "u") == ["a", "2"]
    assert Param("p", "choice", choices=("full", "iterative")).convert("full", "u") == "full"
    with pytest.raises(ValueError):
        Param("p", "colour")


def test_convert_params_fills_defaults_and_accepts_cli_spellings():
    declared = units.get_collector("time").params
    assert convert_params("time", declared, None) == {"warmup": 0, "repeat": 1, "timeout": None, "keep_failed": False}
    got = convert_params("time", declared, {"warm-up-repetition": "2", "repeat": 10, "keep-failed": "true"})
    assert got == {"warmup": 2, "repeat": 10, "timeout": None, "keep_failed": True}
    with pytest.raises(InvalidParameter, match="time has: warmup, repeat, timeout, keep_failed"):
        convert_params("time", declared, {"repetitions": 3})
    with pytest.raises(InvalidParameter, match="already given"):
        convert_params("time", declared, {"warmup": 1, "warm_up_repetition": 2})
    with pytest.raises(InvalidParameter, match=r"'repeat' = 0: expected an integer from 1 to 1000000"):
        convert_params("time", declared, {"repeat": 0})


def test_params_documents_inline_file_and_errors(tmp_path):
    assert load_params_document("repeat: 3") == {"repeat": 3}
    assert load_params_document("{warmup: 1, repeat: 2}") == {"warmup": 1, "repeat": 2}
    assert load_params_document("[{warmup: 1}, {repeat: 2}]") == {"warmup": 1, "repeat": 2}
    assert load_params_document("") == {}
    path = tmp_path / "params.yml"
    path.write_text("repeat: 7\n")
    assert load_params_document(str(path)) == {"repeat": 7}
    path.write_text("repeat: [1\n")
    with pytest.raises(ConfigError, match=r"params.yml: invalid YAML at line 2"):
        load_params_document(str(path))
    with pytest.raises(ConfigError, match="expected a mapping"):
        load_params_document("just words")


# -- registries -----------------------------------------------------------------------------

def test_units_are_listed_with_their_declarations():
    time_unit = next(u for u in api_run.units("collector") if u.name == "time")
    assert (time_unit.name, time_unit.kind) == ("time", "collector") and "peak memory" in time_unit.summary
    assert [(p.name, p.kind, p.default, p.cli_flags) for p in time_unit.params] == [
        ("warmup", "int", 0, ("-w", "--warm-up-repetition")), ("repeat", "int", 1, ("-r", "--repeat")),
        ("timeout", "float", None, ("-t", "--timeout")), ("keep_failed", "bool", False, ("--keep-failed",))]
    assert [u.name for u in api_run.units("postprocessor")] == [
        "clusterizer", "filter", "kernel_regression", "moving_average", "normalizer", "regression_analysis",
        "regressogram"]
    with pytest.raises(UnitError, match="unknown kind of unit 'view'"):
        api_run.units("view")


def test_unknown_units_list_the_known_ones():
    with pytest.raises(UnknownUnit) as info:
        units.get_collector("tim")
    assert "time" in info.value.known
    assert str(info.value) == f"unknown collector 'tim'; known: {', '.join(sorted(info.value.known))}"
    with pytest.raises(UnknownUnit, match="known: clusterizer, filter, .*, normalizer, regression_analysis"):
        units.get_postprocessor("regression")
    assert "normalizer" in units.postprocessors and "time" in units.collectors


class Recorder:
    """A third-party collector with all three phases, recording what it saw."""

    name = "recorder"
    summary = "records calls"
    params = (Param("level", "int", 1, "a level"), Param("fail_in", "str", None, "phase to fail in"))

    def __init__(self):
        self.calls = []

    def before(self, ctx, kwargs):
        self.calls.append(("before", dict(kwargs), ctx.cwd))
        kwargs["prepared"] = kwargs["level"] * 10
        return PhaseResult(1, "before broke", kwargs) if kwargs["fail_in"] == "before" else PhaseResult.ok(kwargs)

    def collect(self, ctx, kwargs):
        self.calls.append(("collect", dict(kwargs)))
        kwargs["profile"] = {"header": {"type": "time", "units": {"time": "s"}},
                             "snapshots": [{"time": "0", "resources": [{"amount": kwargs["prepared"], "type": "time", "uid": "mycmd"}]}]}
        return (0, "", kwargs)  # a plain triple is fine too

    def after(self, ctx, kwargs):
        self.calls.append(("after", sorted(kwargs)))
        return PhaseResult.error("after broke", kwargs) if kwargs["fail_in"] == "after" else PhaseResult.ok(kwargs)


@pytest.fixture
def recorder():
    unit = units.collectors.register(Recorder())
    yield unit
    units.collectors.unregister("recorder")


def test_phases_run_in_order_and_thread_kwargs(perun_repo, recorder):
    root, shas = perun_repo
    result = api_run.collect("recorder", ["mycmd"], ["-x 1"], ["input"], {"level": "3"}, cwd=root)
    assert [call[0] for call in recorder.calls] == ["before", "collect", "after"]
    before = recorder.calls[0][1]
    assert before == {"level": 3, "fail_in": None, "cmd": "mycmd", "args": "-x 1", "workload": "input",
                      "argv": ["mycmd", "-x", "1", "input"]}
    assert recorder.calls[0][2] == root.resolve()
    assert recorder.calls[1][1]["prepared"] == 30
    saved = documented(result.profiles[0].path)
    assert saved["origin"] == shas[-1]
    assert saved["collector_info"] == {"name": "recorder", "params": {"level": 3, "fail_in": None}}
    header = saved["header"]
    assert (header["cmd"], header["params"], header["workload"]) == ("mycmd", "-x 1", "input")
    assert set(header["machine"]) == {"hostname", "cpu", "cores", "memory", "os", "arch", "python", "perun",
                                      "load_before", "load_after"}
    assert header["machine"]["cores"] >= 1 and len(json.dumps(header["machine"])) < 1024
    assert saved["snapshots"][0]["resources"] == [{"amount": 30, "type": "time", "uid": "mycmd"}]


@pytest.mark.parametrize("phase", ["before", "after"])
def test_a_phase_reporting_an_error_fails_the_job(perun_repo, recorder, phase):
    root, _ = perun_repo
    with pytest.raises(CollectionError, match=f"collector 'recorder' failed in {phase}\\(\\): {phase} broke"):
        api_run.collect("recorder", ["mycmd"], params={"fail_in": phase}, cwd=root)
    assert list((root / ".perun/jobs").iterdir()) == []


def test_registration_is_checked(recorder):
    with pytest.raises(UnitError, match="already registered"):
        units.collectors.register(Recorder())
    clash = SimpleNamespace(name="bad", summary="", params=(Param("cmd", "str"),), collect=lambda c, k: None)
    with pytest.raises(UnitError, match="'cmd' is reserved"):
        units.collectors.register(clash)
    with pytest.raises(UnitError, match="no postprocess"):
        units.postprocessors.register(SimpleNamespace(name="np", params=()))
    with pytest.raises(UnitError, match="without spaces"):
        units.collectors.register(SimpleNamespace(name="two words", params=(), collect=lambda c, k: None))


class FakeEntryPoint:
    def __init__(self, name, obj):
        self.name, self._obj = name, obj

    def load(self):
        if isinstance(self._obj, Exception):
            raise self._obj
        return self._obj


def test_entry_points_register_third_party_units(monkeypatch):
    import importlib.metadata

    class Doubler:
        kind = "postprocessor"
        name = "doubler"
        summary = "doubles"
        params = ()

        def postprocess(self, ctx, kwargs):
            return PhaseResult.ok(kwargs)

    points = [FakeEntryPoint("doubler", Doubler), FakeEntryPoint("broken", ImportError("no module named x")),
              FakeEntryPoint("rec", Recorder())]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: points if group == "perun.units" else [])
    try:
        units.load_entry_points(force=True)
        assert isinstance(units.get_postprocessor("doubler"), Doubler)
        assert "recorder" in units.collectors.names() and "doubler" not in units.collectors.names()
        with pytest.raises(UnitError, match="could not be loaded: ImportError: no module named x"):
            units.get_collector("broken")
    finally:
        units.postprocessors.unregister("doubler")
        units.collectors.unregister("recorder")
        for reg in (units.collectors, units.postprocessors):
            reg.load_errors.pop("broken", None)


# -- normalizer ------------------------------------------------------------------------------

def _normalized(profile: Profile) -> Profile:
    result = Normalizer().postprocess(UnitContext(cwd=None), {"profile": profile})
    assert result.status == 0
    return result.kwargs["profile"]


def test_normalizer_matches_the_documented_example():
    rows = [{"amount": 0.59, "uid": "sys"}, {"amount": 0.32, "uid": "user"}, {"amount": 2.32, "uid": "real"}]
    profile = Profile.from_dict({"header": {"type": "time"}, "snapshots": [{"time": "0", "resources": rows}]})
    got = [r["amount"] for r in _normalized(profile).snapshots[0].resources]
    assert got == pytest.approx([0.2543103448275862, 0.13793103448275865, 1.0])
    assert [r["amount"] for r in profile.snapshots[0].resources] == [0.59, 0.32, 2.32]  # input untouched


def test_normalizer_groups_by_type_per_region():
    data = {
        "header": {"type": "time"},
        "snapshots": [
            {"time": "0", "resources": [{"amount": 2, "type": "time"}, {"amount": 4, "type": "time"},
                                        {"amount": 1000, "type": "memory"}, {"amount": "n/a", "type": "time"},
                                        {"amount": 0, "type": "zero"}, {"type": "time"}]},
            {"time": "1", "resources": [{"amount": 8, "type": "time"}]},
        ],
        "global": {"timestamp": 1, "resources": [{"amount": -5, "type": "t"}, {"amount": 2.5, "type": "t"}]},
    }
    out = _normalized(Profile.from_dict(data))
    assert [r.get("amount") for r in out.snapshots[0].resources] == [0.5, 1.0, 1.0, "n/a", 0, None]
    assert [r["amount"] for r in out.snapshots[1].resources] == [1.0]
    assert [r["amount"] for r in out.global_region.resources] == [-1.0, 0.5]
    assert out.global_region.meta == {"timestamp": 1}


def test_postprocess_appends_the_unit_and_keeps_the_origin(perun_repo):
    root, shas = perun_repo
    write_pending(root, "t.perf", time_profile(shas[0], amounts=(1.0, 4.0)))
    done = api_run.postprocess("0@p", "normalizer", cwd=root)
    saved = documented(done.path)
    assert done.origin == saved["origin"] == shas[0]
    assert saved["postprocessors"] == [{"name": "normalizer", "params": {}}]
    assert [r["amount"] for r in saved["snapshots"][0]["resources"]] == [0.25, 1.0]
    assert (root / ".perun/jobs/t.perf").exists() and done.path.parent == root / ".perun/jobs"
    # a registered profile keeps the commit whose index holds it as origin
    api.add(["t.perf"], minor=shas[0], cwd=root)
    again = api_run.postprocess("0@i", "normalizer", minor=shas[0], cwd=root)
    assert documented(again.path)["origin"] == shas[0]
    with pytest.raises(InvalidParameter, match="normalizer has: \\(none\\)"):
        api_run.postprocess("0@p", "normalizer", {"scale": 2}, cwd=root)
