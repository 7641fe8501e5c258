"""The keys of the screen on view, read from the bindings of the screen and of every widget on it.

F1 lists them first (:class:`~perun_tui.modals.dialogs.HelpScreen`), the
footer shows only the important ones.  Nothing here is written by hand: a
new binding with a description shows up by itself, under the widget that
declares it (or, for widgets that name no ``HELP_NAME``, under their class
name in words).
"""

from __future__ import annotations

import re

from textual.binding import Binding
from textual.dom import DOMNode

#: The app's help keys inside a dialog: Textual does not pass a modal screen's keys on to the app's bindings,
#: so each dialog declares them itself (``?`` typed into a field of a dialog still goes to the field).
HELP_IN_DIALOG = Binding("f1,question_mark", "app.help", "Keys", key_display="f1", show=False, id="dialog.help")

#: a class name in words: "FlameView" -> "flame view"
_WORD = re.compile(r"[A-Z][a-z0-9]*|[a-z0-9]+")


def help_name(node: DOMNode) -> str:
    """What the help screen calls a screen or widget."""
    name = getattr(node, "HELP_NAME", None)
    if name:
        return str(name)
    return " ".join(word.lower() for word in _WORD.findall(type(node).__name__))


def own_bindings(cls: type) -> list[Binding]:
    """The bindings ``cls`` and its perun_tui base classes declare (Textual's own widgets' are left to them)."""
    found: list[Binding] = []
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith("perun_tui"):
            continue
        for binding in klass.__dict__.get("BINDINGS", ()):
            if isinstance(binding, Binding) and binding.description:
                found.append(binding)
    return found


def screen_legends(screen: DOMNode) -> list[tuple[str, str]]:
    """(term, meaning) of every widget on the screen that explains its short column names (``HELP_LEGEND``)."""
    found: list[tuple[str, str]] = []
    for node in (screen, *screen.walk_children(with_self=False)):
        for entry in getattr(node, "HELP_LEGEND", ()):
            if entry not in found:
                found.append(entry)
    return found


def screen_key_groups(screen: DOMNode) -> list[tuple[str, list[Binding]]]:
    """(where, bindings) for the screen and each kind of widget on it that declares keys, in DOM order."""
    groups: list[tuple[str, list[Binding]]] = []
    seen: set[type] = set()
    for node in (screen, *screen.walk_children(with_self=False)):
        cls = type(node)
        if cls in seen:
            continue
        seen.add(cls)
        bindings = own_bindings(cls)
        if bindings:
            groups.append((help_name(node), bindings))
    return groups
