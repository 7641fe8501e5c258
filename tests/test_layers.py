"""The layers: the front ends (perun_core/cli, perun_tui) reach the core only through its porcelain.

A front-end module may import ``perun_core.api`` (and its modules),
``perun_core.errors``, ``perun_core.params`` and ``perun_core.__version__``;
the result types it needs come from the API too.  Every import counts: at
module level, inside functions and under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = ("perun_core.api", "perun_core.errors", "perun_core.params")
ALLOWED_FROM_PACKAGE = {"api", "errors", "params", "__version__"}


def _absolute(module: str | None, level: int, package: str) -> str:
    """The absolute name of an import made from ``package`` (``from ..x import y`` has level 2)."""
    if level == 0:
        return module or ""
    parts = package.split(".")
    base = parts[:len(parts) - level + 1]
    return ".".join(base + ([module] if module else []))


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _is_allowed(module: str, own: str) -> bool:
    if not _within(module, "perun_core") or _within(module, own):
        return True
    return any(_within(module, allowed) for allowed in ALLOWED)


def forbidden_imports(source: str, package: str, own: str) -> list[tuple[int, str]]:
    """(line, what) of every import in ``source`` (a module of ``package``) that reaches past the API.

    ``own`` is the front end's own package, which it may import freely
    (``perun_core.cli`` for the command line).
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("perun_core") and not _is_allowed(alias.name, own):
                    found.append((node.lineno, alias.name))
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node.module, node.level, package)
            if module == "perun_core":
                names = [alias.name for alias in node.names if alias.name not in ALLOWED_FROM_PACKAGE]
                found += [(node.lineno, f"perun_core.{name}") for name in names]
            elif not _is_allowed(module, own):
                found.append((node.lineno, module))
    return found


def _front_end_modules() -> list[tuple[Path, str, str]]:
    modules = []
    for top, own in (("perun_core/cli", "perun_core.cli"), ("perun_tui", "perun_tui")):
        for path in sorted((ROOT / top).rglob("*.py")):
            dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            package = dotted if path.name == "__init__.py" else dotted.rpartition(".")[0]
            modules.append((path, package.removesuffix(".__init__"), own))
    return modules


@pytest.mark.parametrize("path,package,own", _front_end_modules(),
                         ids=[str(p.relative_to(ROOT)) for p, _, _ in _front_end_modules()])
def test_front_ends_import_only_the_api(path, package, own):
    assert forbidden_imports(path.read_text(encoding="utf-8"), package, own) == []


def test_the_tui_does_not_import_the_command_line():
    for path, package, _own in _front_end_modules():
        if path.is_relative_to(ROOT / "perun_tui"):
            assert forbidden_imports(path.read_text(encoding="utf-8"), package, "perun_tui") == [], path


def test_the_check_catches_every_way_past_the_api():
    source = '''
from typing import TYPE_CHECKING
import perun_core.storage.repository
from perun_core import api, config
from perun_core.api import load_profile
from perun_core.api.run import EventStream
from perun_core.errors import PerunError
if TYPE_CHECKING:
    from perun_core.views import Theme
def f():
    from perun_core.runner import events
    from ..storage import atomic
    from . import render
    from perun_core import __version__
'''
    found = forbidden_imports(source, "perun_core.cli", "perun_core.cli")
    assert found == [(3, "perun_core.storage.repository"), (4, "perun_core.config"), (9, "perun_core.views"),
                     (11, "perun_core.runner"), (12, "perun_core.storage")]
    # the TUI may not use the command line's modules either
    assert forbidden_imports("from perun_core.cli.render import paint\n", "perun_tui", "perun_tui") == [
        (1, "perun_core.cli.render")]


def test_every_name_the_api_exports_is_there():
    from perun_core import api

    for name, module in api._EXPORTS.items():
        value = getattr(importlib.import_module(f"perun_core.api.{module}"), name)
        assert getattr(api, name) is value
        assert not isinstance(value, type(api)), f"{name} is a module"
    assert set(api.__all__) == set(api._EXPORTS)


def test_api_modules_do_not_shadow_exported_names():
    from perun_core import api

    modules = {path.stem for path in (ROOT / "perun_core" / "api").glob("*.py") if path.stem != "__init__"}
    assert not modules & set(api._EXPORTS), "a module of perun_core.api is named like a name it exports"


def test_the_export_table_is_complete():
    from perun_core import api

    for path in sorted((ROOT / "perun_core" / "api").glob("*.py")):
        if path.stem in ("__init__", "run_events", "check_events"):  # the event lists are namespaces of their own
            continue
        module = importlib.import_module(f"perun_core.api.{path.stem}")
        for name in getattr(module, "__all__", ()):
            assert name in api._EXPORTS, f"perun_core.api.{path.stem}.{name} is not exported"
            assert getattr(api, name) is getattr(module, name), name
