"""The shape of the tree: no import cycle between packages, and no module or function so long
that it hides more than one job.

Package graph: every module of perun_core belongs to its package (``perun_core.check.methods.x``
belongs to ``check``; a root module such as ``perun_core/atomic.py`` is its own node). An edge is
any import that runs, at module level or inside a function; imports under ``if TYPE_CHECKING:``
only serve annotations and are left out. The graph must have no strongly connected component of
more than one node.

Imports inside functions: an import of a project module inside a function has a comment on its
line or the line above saying why it waits (a cycle at load, a start-up path kept light, a heavy
dependency); every other one sits with the module's imports at the top.

Sizes: a module over MAX_MODULE_LINES lines, or a function over MAX_FUNCTION_LINES lines, must
say why in its docstring with the words "long because".
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("perun_core", "perun_tui")
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
EXCUSE = "long because"


def _modules(package: str) -> list[Path]:
    return sorted(p for p in (ROOT / package).rglob("*.py") if "__pycache__" not in p.parts)


def _dotted(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _node(dotted: str) -> str | None:
    """The package a module counts for: ``perun_core.check.x`` -> ``perun_core.check``."""
    parts = dotted.split(".")
    if parts[0] not in PACKAGES:
        return None
    return ".".join(parts[:2])


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                if not is_package:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            found.add(prefix)
            found.update(f"{prefix}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in _modules(package):
            dotted = _dotted(path)
            source = _node(dotted)
            tree = ast.parse(path.read_text(encoding="utf-8"))
            targets = graph.setdefault(source, set())
            for name in _imports(tree, dotted, path.name == "__init__.py"):
                target = _node(name)
                if target and target != source:
                    targets.add(target)
    # A name such as perun_core.api.show maps onto perun_core.api already; imports of a root
    # package itself (``from perun_core import api``) resolve through the ``.api`` form.
    graph = {src: {t for t in dst if t in graph} for src, dst in graph.items()}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def connect(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def _edges_inside(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    members = set(component)
    return [f"{a} -> {b}" for a in component for b in sorted(graph[a]) if b in members]


def test_no_import_cycle_between_packages():
    graph = _package_graph()
    cycles = _cycles(graph)
    assert not cycles, "import cycles between packages:\n" + "\n".join(
        "  " + "; ".join(_edges_inside(graph, c)) for c in cycles
    )


def _too_long() -> list[str]:
    problems = []
    for package in PACKAGES:
        for path in _modules(package):
            text = path.read_text(encoding="utf-8")
            tree = ast.parse(text)
            lines = text.count("\n")
            docstring = ast.get_docstring(tree) or ""
            rel = path.relative_to(ROOT)
            if lines > MAX_MODULE_LINES and EXCUSE not in docstring:
                problems.append(f"{rel}: module of {lines} lines")
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    length = node.end_lineno - node.lineno + 1
                    if length > MAX_FUNCTION_LINES and EXCUSE not in (
                        ast.get_docstring(node) or ""
                    ):
                        problems.append(f"{rel}:{node.lineno}: {node.name} of {length} lines")
    return problems


def test_no_oversized_module_or_function():
    problems = _too_long()
    assert not problems, "too long without a reason:\n  " + "\n  ".join(problems)


def _is_project_import(node: ast.stmt) -> bool:
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] in PACKAGES for alias in node.names)
    return isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").split(".")[0] in PACKAGES)


def _unexplained_imports(text: str) -> list[int]:
    """Lines of imports of project modules inside functions with no comment on their line or the one above."""
    lines = text.splitlines()
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for sub in child.orelse:
                    visit(ast.Module(body=[sub], type_ignores=[]), in_function)
                continue
            if in_function and _is_project_import(child):
                own = lines[child.lineno - 1 : child.end_lineno]
                above = lines[child.lineno - 2].strip() if child.lineno >= 2 else ""
                if not above.startswith("#") and not any("#" in line for line in own):
                    found.append(child.lineno)
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(text), False)
    return found


def test_every_import_inside_a_function_says_why():
    """An import of a project module belongs at the top of its module unless it must wait: a cycle at
    load, a start-up path it keeps light, a heavy dependency. Such an import carries a comment saying so."""
    problems = [
        f"{path.relative_to(ROOT)}:{line}"
        for package in PACKAGES
        for path in _modules(package)
        for line in _unexplained_imports(path.read_text(encoding="utf-8"))
    ]
    assert not problems, "imports inside functions without a comment:\n  " + "\n  ".join(problems)


def test_unexplained_import_finder():
    source = (
        "from perun_core import api\n"
        "def f():\n"
        "    from perun_core.vcs import GitVcs\n"
        "    # cycle: vcs imports this module back\n"
        "    from . import storage\n"
        "    import json\n"
        "    import perun_tui.app  # the TUI's first frame\n"
        "    if TYPE_CHECKING:\n"
        "        from ..config import Config\n"
        "    class Inner:\n"
        "        from .x import y\n"
    )
    assert _unexplained_imports(source) == [3, 11]


@pytest.mark.parametrize(
    "graph, expected",
    [
        ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ],
)
def test_cycle_finder(graph, expected):
    assert _cycles(graph) == expected
