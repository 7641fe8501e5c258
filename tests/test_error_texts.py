"""Error texts read as sentences.

Every message template handed to an error (a PerunError subclass, click's
errors), an ``error:``/``warning:`` line of the CLI, a check Notice or a
notification of the TUI is read from the source with :mod:`ast`, its
placeholders replaced by a token, and checked for doubled words ("the the"),
dangling colons (a text or an interpolated piece ending in ':') and a
missing subject (a message that starts with "is", "cannot", ...).  Branches
of conditional pieces (``{'is' if n == 1 else 'are'}``) are expanded, so
each spelling is checked.
"""

from __future__ import annotations

import ast
import itertools
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SLOT = "\u00abx\u00bb"
#: words a message never starts with: a verb that needs a subject before it ("is not a profile").
#: "cannot ..." / "could not ..." stay allowed: the conventional head of an error line, whose subject
#: is the program ("error: cannot open lock file x").
SUBJECTLESS = {"is", "are", "was", "were", "has", "have", "had", "must", "should", "does", "did", "will",
               "would", "needs", "need", "contains", "lacks", "expects"}
#: functions whose first argument is a user-facing message
MESSAGE_CALLS = {"notify", "Notice", "ClickException", "BadParameter", "Abort", "UsageError", "fail"}
ECHO_CALLS = {"echo", "secho", "write"}


@dataclass(frozen=True)
class Template:
    path: str
    line: int
    text: str
    #: a piece interpolated into a larger message (an argument that is not the whole message)
    piece: bool = False

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.text!r}"


def _error_names() -> set[str]:
    tree = ast.parse((ROOT / "perun_core" / "errors.py").read_text())
    names = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    return names | {"ValueError", "TypeError", "RuntimeError", "KeyError"} - {"Interrupted"}


def _spellings(node: ast.AST, depth: int = 0) -> list[str] | None:
    """Every text ``node`` can make (placeholders as SLOT), or None when it is not a string template."""
    if depth > 6:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        parts: list[list[str]] = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append([str(value.value)])
            elif isinstance(value, ast.FormattedValue):
                inner = value.value
                if isinstance(inner, ast.IfExp):
                    branches = [_spellings(inner.body, depth + 1), _spellings(inner.orelse, depth + 1)]
                    if all(b is not None for b in branches):
                        parts.append([s for b in branches for s in b])  # type: ignore[union-attr]
                        continue
                parts.append([SLOT])
        combos = list(itertools.islice(itertools.product(*parts), 64))
        return ["".join(c) for c in combos]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _spellings(node.left, depth + 1), _spellings(node.right, depth + 1)
        if left is None and right is None:
            return None
        return [a + b for a in (left or [SLOT]) for b in (right or [SLOT])][:64]
    if isinstance(node, ast.IfExp):
        body, orelse = _spellings(node.body, depth + 1), _spellings(node.orelse, depth + 1)
        if body is None and orelse is None:
            return None
        return (body or []) + (orelse or [])
    return None


def _call_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def templates() -> list[Template]:
    errors = _error_names()
    found: list[Template] = []
    files = sorted((ROOT / "perun_core").rglob("*.py")) + sorted((ROOT / "perun_tui").rglob("*.py"))
    for path in files:
        relative = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text(), relative)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = _call_name(node)
            if name in errors or name in MESSAGE_CALLS or (name == "__init__" and path.name == "errors.py"):
                args = list(node.args) + [k.value for k in node.keywords if k.arg in ("message", "reason", "hint")]
                for position, arg in enumerate(args):
                    for text in _spellings(arg) or ():
                        # the first argument is the message; later ones are pieces a message interpolates
                        found.append(Template(relative, node.lineno, text, piece=position > 0))
            elif name in ECHO_CALLS and node.args:
                for text in _spellings(node.args[0]) or ():
                    if text.startswith(("error: ", "warning: ")):
                        found.append(Template(relative, node.lineno, text))
    return found


def _words(text: str) -> str:
    return re.sub(r"^(error|warning): ", "", text.strip())


def problems(template: Template) -> list[str]:
    text = template.text
    out = []
    if template.piece:
        if text.rstrip().endswith(":"):
            out.append("an interpolated piece ends in a colon")
        return out
    doubled = re.search(r"(?<![\w'-])([A-Za-z]{2,})\s+\1(?![\w'-])", text, re.IGNORECASE)
    if doubled:
        out.append(f"doubled word '{doubled.group(0)}'")
    stripped = text.rstrip()
    if stripped.endswith(":") and stripped != ":":
        out.append("ends with a colon")
    if re.search(r"\s:(?!\S)|:\s*[,.;)]", text):
        out.append("dangling colon")
    first = _words(text).split(" ", 1)[0].lower()
    if first in SUBJECTLESS:
        out.append(f"no subject before '{first}'")
    return out


def test_the_scanner_sees_the_error_templates():
    found = templates()
    texts = [t.text for t in found]
    assert len(found) > 200
    assert any(text.startswith("tag '") and "out of range" in text for text in texts)
    assert any(t.path.startswith("perun_tui") for t in found)


@pytest.mark.parametrize("text, expected", [
    ("the the profile", "doubled word 'the the'"),
    ("there are 5 registered at de579c5: profiles:", "ends with a colon"),
    ("must be a number", "no subject before 'must'"),
    ("error: is not a profile", "no subject before 'is'"),
    ("value : expected a number", "dangling colon"),
])
def test_the_checks_catch_bad_texts(text, expected):
    assert expected in problems(Template("x.py", 1, text))


def test_a_piece_ending_in_a_colon_is_caught():
    assert problems(Template("x.py", 1, "registered at de579c5:", piece=True))


def test_every_error_text_reads_as_a_sentence():
    bad = [f"{t}: {', '.join(p)}" for t in templates() if (p := problems(t))]
    assert not bad, "\n".join(bad)


def test_tag_out_of_range_reads_well():
    from perun_core.errors import TagOutOfRange

    assert TagOutOfRange("9@i", 5, "registered", "at de579c5").message == (
        "tag '9@i' is out of range: 5 profiles are registered at de579c5 (tags 0@i to 4@i)")
    assert TagOutOfRange("1@p", 1, "pending").message == "tag '1@p' is out of range: 1 profile is pending (tag 0@p)"
    assert TagOutOfRange("0@i", 0, "registered", "at de579c5").message == (
        "tag '0@i' is out of range: no profile is registered at de579c5")
