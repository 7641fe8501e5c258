"""What the frame names of folded stacks say besides the function: source, line, module, kind of code.

Tools that write folded stacks pack more than the function into a frame's
name, each in its own way; :func:`describe_frames` turns the names back
into trace entries (``function``, ``object``, ``source``, ``line``):

* perun's folded output: ``function()~source~line``;
* py-spy ``--format raw``: ``function (file.py:12)`` (``function (file.py)``
  with ``--nolineno``);
* DTrace and ``stackcollapse.pl``: ``module`function`` with an optional
  ``+0x1c`` offset (``--addrs``), the module becoming the ``object``;
* ``stackcollapse-perf.pl --all`` (or ``--kernel``, ``--jit``, ``--inline``):
  a trailing ``_[k]`` (kernel), ``_[j]`` (JIT-compiled), ``_[i]``
  (inlined) or ``_[w]`` (waker stack) annotation, which flamegraph.pl only
  uses for colour: it is taken off the name and kept as ``annotation``
  (kernel frames also get the object ``[kernel]``, so a kernel function
  and a user function of one name stay two functions).

A name none of these describe is the function's name as it stands,
spaces, parentheses and all.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["NO_FRAMES", "describe_frames"]

#: The frame of a sample that had no frames (py-spy writes ' 3' for samples with no Python code running).
NO_FRAMES = "[no frames]"

_ANNOTATIONS = {"k": "kernel", "j": "jit", "i": "inlined", "w": "waker"}
_ANNOTATED = re.compile(r"^(.+)_\[([kjiw])\]$")
_PY_SPY = re.compile(r"^(.+) \(([^()]+?)(?::(\d+))?\)$")
_MODULE = re.compile(r"^([^`;]+)`([^`]+?)(?:\+0x[0-9a-fA-F]+)?$")
#: py-spy's sources; a name ending in '(word)' without a line is only taken for a source when it is one
_SOURCE_SUFFIXES = (".py", ".pyx", ".pyw", ">")


def describe_frames(frames: list[dict[str, Any]]) -> None:
    """Rewrite each entry's ``function`` (the frame name as written) into the parts the name holds."""
    for entry in frames:
        entry.update(describe(entry["function"]))


def describe(name: str) -> dict[str, Any]:
    """The trace entry a folded frame name stands for."""
    entry: dict[str, Any] = {"function": name}
    annotated = _ANNOTATED.match(name)
    if annotated:
        name = annotated.group(1)
        entry["function"] = name
        entry["annotation"] = _ANNOTATIONS[annotated.group(2)]
        if annotated.group(2) == "k":
            entry["object"] = "[kernel]"
    if "()" in name:
        function, _, rest = name.partition("()")
        if not rest or rest.startswith("~"):
            entry["function"] = function
            parts = rest[1:].split("~") if rest else []
            if parts and parts[0]:
                entry["source"] = parts[0]
            if len(parts) > 1 and parts[1].isdigit():
                entry["line"] = int(parts[1])
            return entry
    spy = _PY_SPY.match(name)
    if spy and (spy.group(3) is not None or spy.group(2).endswith(_SOURCE_SUFFIXES)):
        entry["function"], entry["source"] = spy.group(1), spy.group(2)
        if spy.group(3) is not None:
            entry["line"] = int(spy.group(3))
        return entry
    module = _MODULE.match(name)
    if module:
        entry["function"], entry["object"] = module.group(2), module.group(1)
    return entry
