"""Every declared parameter reaches every place that is derived from its declaration.

For each registered collector, postprocessor, view and check method, each
``Param`` it declares must appear in the ``--help`` of its command (as its
flag, or its metavar when it is an argument), be refused with its name
when its YAML (or view) value is bad, and get a field in the TUI form.
The registry and the Param themselves are tested here too.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from perun_core import api
from perun_core.api import check as api_check
from perun_core.check.strategies import parse_rules
from perun_core.errors import ConfigError, InvalidParameter, UnitError, UnknownUnit
from perun_core.params import Param, find_param
from perun_core.registry import Registry
from perun_core.runner.jobs import unit_configs
from perun_core.views import get_view, view_names
from perun_tui.widgets.forms import ParamForm, form_fields

ROOT = Path(__file__).resolve().parents[1]


def owners() -> list[tuple[str, object]]:
    """(kind, owner) of every registered unit, view and check method."""
    found: list[tuple[str, object]] = []
    for kind in ("collector", "postprocessor"):
        found += [(kind, info) for info in api.units(kind)]
    found += [("view", get_view(name)) for name in view_names()]
    found += [("check method", info) for info in api_check.check_methods()]
    return found


OWNERS = owners()
IDS = [f"{kind}:{owner.name}" for kind, owner in OWNERS]
DECLARED = [(kind, owner, param) for kind, owner in OWNERS for param in owner.params]
DECLARED_IDS = [f"{kind}:{owner.name}:{param.name}" for kind, owner, param in DECLARED]


def test_every_kind_declares_parameters():
    kinds = {kind for kind, _owner, _param in DECLARED}
    assert kinds == {"collector", "postprocessor", "view", "check method"}
    # the check methods declare what they read: about twenty parameters in all
    assert sum(1 for kind, _o, _p in DECLARED if kind == "check method") >= 20


# -- the command line ----------------------------------------------------------------------

def command_of(kind: str, name: str) -> list[str]:
    return {"collector": ["collect", name], "postprocessor": ["postprocessby", "p.perf", name],
            "view": ["show", "p.perf", name], "check method": ["check", "method", name]}[kind]


HELP_SCRIPT = """
import json, sys
from click.testing import CliRunner
from perun_core.cli.main import cli
out = {}
for key, args in json.loads(sys.argv[1]).items():
    result = CliRunner().invoke(cli, [*args, "--help"], catch_exceptions=False)
    out[key] = [result.exit_code, result.output]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def helps() -> dict[str, tuple[int, str]]:
    """The ``--help`` of every command, from one process."""
    commands = {key: command_of(kind, owner.name) for key, (kind, owner) in zip(IDS, OWNERS)}
    result = subprocess.run([sys.executable, "-c", HELP_SCRIPT, json.dumps(commands)], capture_output=True,
                            text=True, cwd=ROOT, check=True)
    return {key: tuple(value) for key, value in json.loads(result.stdout).items()}


@pytest.mark.parametrize(("kind", "owner", "param"), DECLARED, ids=DECLARED_IDS)
def test_parameter_is_in_the_help_of_its_command(helps, kind, owner, param):
    status, text = helps[f"{kind}:{owner.name}"]
    assert status == 0, text
    usage, _, options = text.partition("Options:")
    if param.positional:
        assert (param.metavar or param.name.upper()) in usage
        return
    for flag in (*param.cli_flags, *param.off):
        assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", options), (flag, options)
    if param.help:
        words = param.help.split()[:3]
        assert " ".join(options.split()).count(" ".join(words)), (words, options)


# -- YAML and value validation -----------------------------------------------------------

def bad_value(param: Param) -> object:
    """A value this parameter's declaration must refuse."""
    if param.kind == "list":
        return ["not-one-of-them"] if param.choices else ["x"] if param.item != "str" else {"a": 1}
    return {"int": "many", "float": "lots", "bool": "perhaps", "choice": "not-one-of-them"}.get(param.kind, {"a": 1})


def refusal(kind: str, owner, param: Param) -> Exception:
    """The error of giving ``param`` a bad value where its kind of owner reads values from YAML."""
    document = yaml.safe_dump({param.name: bad_value(param)})
    values = yaml.safe_load(document)
    with pytest.raises((InvalidParameter, ConfigError)) as caught:
        if kind in ("collector", "postprocessor"):
            unit_configs(kind, yaml.safe_load(yaml.safe_dump([{"name": owner.name, "params": values}])))
        elif kind == "view":
            owner.bind(values)
        else:
            parse_rules(yaml.safe_load(yaml.safe_dump([{"method": owner.name, "params": values}])))
    return caught.value


@pytest.mark.parametrize(("kind", "owner", "param"), DECLARED, ids=DECLARED_IDS)
def test_a_bad_value_is_refused_naming_the_parameter(kind, owner, param):
    error = refusal(kind, owner, param)
    assert f"parameter '{param.name}'" in str(error)
    assert owner.name in str(error)


@pytest.mark.parametrize(("kind", "owner", "param"), DECLARED, ids=DECLARED_IDS)
def test_the_default_passes_its_own_declaration(kind, owner, param):
    if param.default is not None and param.check is None:
        assert param.convert(param.default, owner.name) == (list(param.default) if param.kind == "list"
                                                           else param.default)


# -- TUI forms -----------------------------------------------------------------------------

@pytest.mark.parametrize(("kind", "owner"), OWNERS, ids=IDS)
def test_form_fields_cover_the_declaration(kind, owner):
    fields = form_fields(owner)
    assert list(fields) == [f"field-{param.name}" for param in owner.params]
    for param in owner.params:
        expected = {"bool": "checkbox", "choice": "select"}.get(param.kind, "input")
        assert fields[f"field-{param.name}"] == expected


async def test_the_form_builds_a_field_for_every_parameter():
    from textual.app import App
    from textual.widgets import Checkbox, Input, Select

    widgets = {"checkbox": Checkbox, "select": Select, "input": Input}

    class FormApp(App):
        def compose(self):
            yield ParamForm(id="form")

    app = FormApp()
    async with app.run_test(size=(100, 60)) as pilot:
        form = app.query_one(ParamForm)
        for _kind, owner in OWNERS:
            await form.show_params(owner, {})
            await pilot.pause()
            for field_id, field_kind in form_fields(owner).items():
                assert isinstance(form.query_one(f"#{field_id}"), widgets[field_kind]), (owner.name, field_id)
            assert not form.problems()
        # a bad value typed into a field is named in the form's errors
        aat = api_check.check_method("aat")
        await form.show_params(aat, {})
        field = form.query_one("#field-threshold", Input)
        field.value = "0.5"
        await pilot.pause()
        assert form.problems() == ["average_amount_threshold: parameter 'threshold' = '0.5': expected a number "
                                   "of at least 1"]


# -- the Param and the Registry --------------------------------------------------------------

def test_list_choices_name_the_bad_item():
    param = Param("models", "list", choices=("linear", "quadratic"))
    assert param.convert("linear, quadratic", "u") == ["linear", "quadratic"]
    with pytest.raises(InvalidParameter, match="'models' = 'cubic': expected one of linear, quadratic"):
        param.convert(["linear", "cubic"], "u")


def test_positional_parameters_have_no_flags_and_find_param_reads_spellings():
    what = Param("what", "choice", "a", choices=("a", "b"), positional=True)
    assert what.cli_flags == ()
    label = Param("x_label", flags=("-xl", "--x-axis-label"))
    assert find_param([what, label], "x-axis-label") is label
    with pytest.raises(KeyError):
        find_param([what], "nope")


class Widget:
    def __init__(self, name, params=()):
        self.name, self.params = name, params

    def draw(self):
        return self.name


def test_a_new_kind_of_registry_is_one_line():
    widgets: Registry[Widget] = Registry("widget", "draw", reserved={"profile"},
                                         builtins={"lazy": f"{__name__}:LAZY"}, aliases={"lz": "lazy"},
                                         sort=False)
    widgets.register(Widget("zeta"), aliases=("z",))
    assert widgets.names() == ["lazy", "zeta"]
    assert widgets.get("lz") is LAZY and widgets.get("z").name == "zeta"
    assert "lz" in widgets and "nope" not in widgets
    with pytest.raises(UnknownUnit, match="unknown widget 'nope'; known: lazy, zeta"):
        widgets.get("nope")
    with pytest.raises(UnitError, match="already registered"):
        widgets.register(Widget("zeta"))
    with pytest.raises(UnitError, match="alias 'z' already names 'zeta'"):
        widgets.register(Widget("other"), aliases=("z",))
    with pytest.raises(UnitError, match="no draw"):
        widgets.register(SimpleNamespace(name="flat"))
    with pytest.raises(UnitError, match="'profile' is reserved"):
        widgets.register(Widget("clash", (Param("profile"),)))
    widgets.unregister("zeta")
    assert widgets.names() == ["lazy"] and "z" not in widgets


def test_entry_points_fill_the_registry_they_select(monkeypatch):
    import importlib.metadata

    class Point:
        def __init__(self, name, obj):
            self.name, self._obj = name, obj

        def load(self):
            if isinstance(self._obj, Exception):
                raise self._obj
            return self._obj

    points = [Point("good", Widget("good")), Point("other", SimpleNamespace(name="other", kind="else")),
              Point("bad", ImportError("gone"))]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: points if group == "tests.widgets" else [])
    widgets: Registry[Widget] = Registry("widget", "draw", group="tests.widgets",
                                         selects=lambda item: getattr(item, "kind", None) != "else")
    assert widgets.names() == ["good"]
    with pytest.raises(UnitError, match="widget 'bad' could not be loaded: ImportError: gone"):
        widgets.get("bad")


LAZY = Widget("lazy")


def test_required_parameters_and_off_spellings_are_checked():
    from perun_core.params import convert_params

    declared = [Param("target", required=True), Param("fast", "bool", flags=("--fast",), off=("--slow",))]
    with pytest.raises(InvalidParameter, match="'target' = None: expected a value \\(it is required\\)"):
        convert_params("u", declared, {"fast": True})
    assert convert_params("u", declared, {"target": "x"}) == {"target": "x", "fast": None}
    with pytest.raises(ValueError, match="'off' spellings"):
        Param("fast", "bool", flags=("--fast", "-F"), off=("--slow",))
    with pytest.raises(ValueError, match="'off' spellings"):
        Param("level", "int", flags=("--up",), off=("--down",))
