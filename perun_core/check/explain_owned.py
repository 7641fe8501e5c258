"""Whose code a function is, and what each of the user's functions costs with the library calls it makes.

A time change that lives in ``memcpy`` is fixed in the function that calls
``memcpy``.  :class:`Ownership` classifies a function as the user's (its
source file lies in the repository, or, without a source file, its object
was built there) or foreign (the C library, the dynamic loader, the
interpreter and its built-ins, system headers, third-party packages).
:func:`attribute` then charges the cost of every foreign function to its
nearest caller in the user's code:

* with sampled call stacks (perf), each sample goes to the innermost owned
  frame of its stack, exactly;
* with caller edges only (callgrind, cProfile), a foreign function's own
  cost is split over its callers in proportion to the cost of the calls
  each made of it, and passed on up through foreign callers until it
  reaches owned ones (a cycle of foreign functions is cut where it closes).

Every unit of cost lands on one owned function or, when no owned function
is above it (start-up, the loader), stays with the foreign function
itself, so the charged costs add up to the program's total and none
exceeds it, whatever the recursion.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from ..profile.resources import MISSING
from ..runner.worktree import WORKTREE_PREFIX

__all__ = ["Attribution", "Ownership", "attribute"]

#: Directories of installed third-party code, foreign even inside the repository.
_INSTALLED = frozenset({"site-packages", "dist-packages", "node_modules", ".venv", "venv"})
#: Start-up code the toolchain links into every program (crt files): not written by the user.
_STARTUP = frozenset({"_start", "_init", "_fini", "__libc_csu_init", "__libc_csu_fini", "frame_dummy",
                      "register_tm_clones", "deregister_tm_clones", "__do_global_dtors_aux"})
#: Names the C and C++ standards reserve for the implementation (``__memcpy_avx2``, ``_IO_vfprintf``) and the
#: standard library's namespaces, whose templates are compiled into the program but are not its code.
_RESERVED = re.compile(r"^(?:__|_[A-Z]|(?:std|__gnu_cxx|__cxxabiv1)::)")
#: Steps up the call graph at most (cost still on its way after them stays with the foreign function).
_DEEPEST = 200
#: ``file:line(name)``: cProfile's uid of a Python function.
_PY_UID = re.compile(r"^(?P<file>.+?):(?P<line>\d+)\((?P<name>.*)\)$")


@dataclass(frozen=True)
class Ownership:
    """Which paths hold the user's code: the repository ``roots`` and any temporary worktree of it."""

    roots: tuple[str, ...] = ()

    def owns_path(self, path: str) -> bool:
        """A source or object path in the repository (relative paths are relative to the job's directory)."""
        if not path or path.startswith(("<", "[", "~")) or path == "???":
            return False
        pure = PurePath(path)
        if _INSTALLED.intersection(pure.parts):
            return False
        if not pure.is_absolute():
            return True
        if any(part.startswith(WORKTREE_PREFIX) for part in pure.parts):
            return True
        return any(pure.is_relative_to(root) for root in self.roots)

    def owns(self, name: str, obj: str = "", source: str = "") -> bool:
        """Whether function ``name`` of object ``obj`` defined in ``source`` is the user's.

        Native functions (with an object) are the user's when their object
        was built in the repository and their source, if an absolute path is
        known, lies there too (an inlined system header or a linked-in crt
        file is not); Python functions (without an object) when their file does.
        """
        if not name or name.startswith(("(", "0x", "[")) or name in _STARTUP or _RESERVED.match(name):
            return False
        if obj and obj != "???":
            # perf names no object for a frame inlined into another: the physical frame around it decides
            if obj == "inlined" or not self.owns_path(obj):
                return False
            return not source or not PurePath(source).is_absolute() or self.owns_path(source)
        return bool(source) and self.owns_path(source)


@dataclass
class Attribution:
    """One profile's cost charged to the user's functions (see the module docstring)."""

    #: owned function -> its own cost plus the foreign cost charged to it
    charged: dict[str, float] = field(default_factory=dict)
    #: owned function -> foreign function -> the part of the foreign function's cost charged to it
    through: dict[str, dict[str, float]] = field(default_factory=dict)
    #: foreign function -> its cost that no owned function is above
    unowned: dict[str, float] = field(default_factory=dict)
    #: function -> whether it is the user's
    owned: dict[str, bool] = field(default_factory=dict)
    total: float = 0.0

    def charge(self, owner: str, amount: float, foreign: str | None = None) -> None:
        self.charged[owner] = self.charged.get(owner, 0.0) + amount
        if foreign is not None:
            into = self.through.setdefault(owner, {})
            into[foreign] = into.get(foreign, 0.0) + amount


def _number(value: Any) -> float | None:
    return float(value) if type(value) in (int, float) else None


def _text(value: Any) -> str:
    return "" if value is MISSING or value is None else str(value)


class _Rows:
    """The function rows, caller edges and stacks of a call-level profile."""

    def __init__(self, profile: Any) -> None:
        self.own: dict[str, float] = {}
        self.where: dict[str, tuple[str, str]] = {}  # name -> (object, source)
        self.edges: dict[str, dict[str, float]] = {}  # callee -> caller -> cost of the calls
        self.stacks: list[tuple[list[tuple[str, str]], float]] = []  # (frames innermost first, samples)
        for _, region in profile.regions():
            table = region.resources
            if len(table):
                self._read(table, table.columns()[0])

    def _read(self, table: Any, keys: list[str]) -> None:
        def column(key: str) -> list:
            return table.column(key) if key in keys else [MISSING] * len(table)

        rows = zip(column("subtype"), column("uid"), column("amount"), column("exclusive"), column("caller"),
                   column("object"), column("source"), column("every_level"), column("trace"))
        for subtype, uid, amount, exclusive, caller, obj, source, every_level, trace in rows:
            name = _text(uid)
            if subtype == "function" and _number(exclusive) is not None:
                self.own[name] = self.own.get(name, 0.0) + (_number(exclusive) or 0.0)
                self.where.setdefault(name, (_text(obj), _text(source)))
            elif subtype == "exclusive" and _number(amount) is not None:  # cProfile
                self.own[name] = self.own.get(name, 0.0) + (_number(amount) or 0.0)
                self.where.setdefault(name, ("", _text(source)))
            elif subtype == "call" and caller is not MISSING:
                cost = _number(every_level) if _number(every_level) is not None else _number(amount)
                if cost and cost > 0:
                    callers = self.edges.setdefault(name, {})
                    callers[_text(caller)] = callers.get(_text(caller), 0.0) + cost
            elif subtype == "samples" and isinstance(trace, list) and trace and _number(amount):
                frames = [(_text(f.get("function")), _text(f.get("object"))) if isinstance(f, dict) else (str(f), "")
                          for f in trace]
                self.stacks.append((frames, _number(amount) or 0.0))


def _owned_names(rows: _Rows, ownership: Ownership) -> dict[str, bool]:
    owned = {}
    for name, (obj, source) in rows.where.items():
        match = _PY_UID.match(name) if not source else None
        owned[name] = ownership.owns(match["name"] if match else name, obj, source or (match["file"] if match else ""))
    return owned


def attribute(profile: Any, ownership: Ownership) -> Attribution | None:
    """The profile's cost charged to the user's functions, or None for a profile without function rows."""
    rows = _Rows(profile)
    if not rows.own and not rows.stacks:
        return None
    result = Attribution(owned=_owned_names(rows, ownership))
    if rows.stacks:
        _from_stacks(rows, ownership, result)
        result.total = sum(samples for _, samples in rows.stacks)
    else:
        _from_edges(rows, result)
        result.total = sum(rows.own.values())
    return result


def _from_stacks(rows: _Rows, ownership: Ownership, result: Attribution) -> None:
    """Each sample to the innermost owned frame of its stack.

    perf names no object for a frame inlined into another (``inlined``): it
    is in the object of the next frame out that has one, and its name says
    whether it is the library's.
    """
    seen: dict[tuple[str, str], bool] = {}
    for frames, samples in rows.stacks:
        leaf = frames[0][0]
        owner = None
        outer = ""
        objects = []
        for function, obj in reversed(frames):
            outer = obj if obj and obj != "inlined" else outer
            objects.append(outer)
        for (function, obj), where in zip(frames, reversed(objects)):
            known = seen.get((function, where))
            if known is None:
                known = seen[(function, where)] = ownership.owns(function, where, rows.where.get(function, ("", ""))[1])
                result.owned[function] = result.owned.get(function, False) or known
            if known:
                owner = function
                break
        if owner is None:
            result.unowned[leaf] = result.unowned.get(leaf, 0.0) + samples
        else:
            result.charge(owner, samples, None if owner == leaf else leaf)


def _from_edges(rows: _Rows, result: Attribution) -> None:
    """Own costs of foreign functions split over their callers by the cost of the calls each made."""
    for name, own in rows.own.items():
        if result.owned.get(name, False):
            result.charge(name, own)
            continue
        if own == 0:
            continue
        placed = 0.0
        for owner, share in _owners(name, rows.edges, result.owned).items():
            result.charge(owner, own * share, name)
            placed += own * share
        if own - placed > 1e-9 * max(abs(own), 1.0):
            result.unowned[name] = result.unowned.get(name, 0.0) + own - placed


def _owners(name: str, edges: dict[str, dict[str, float]], owned: dict[str, bool]) -> dict[str, float]:
    """owned function -> the share of ``name``'s cost it carries (shares add up to at most 1).

    The share flows from each function to its callers, split by the cost of
    their calls, step by step up the call graph until it reaches owned
    functions; a cycle of foreign functions passes it round until it leaves
    the cycle (what is still going round after :data:`_DEEPEST` steps, or
    reaches a function nobody called, stays with ``name``).
    """
    spread: dict[str, float] = {}
    frontier = {name: 1.0}
    for _ in range(_DEEPEST):
        following: dict[str, float] = {}
        for function, share in frontier.items():
            callers = [(caller, weight) for caller, weight in edges.get(function, {}).items() if caller != function]
            whole = sum(weight for _, weight in callers)
            for caller, weight in callers:
                into = spread if owned.get(caller, False) else following
                into[caller] = into.get(caller, 0.0) + share * weight / whole
        frontier = {function: share for function, share in following.items() if share > 1e-12}
        if not frontier:
            break
    return spread


def repository_roots(repo: Any) -> tuple[str, ...]:
    """The roots whose files are the user's: the repository's working tree (none without a repository)."""
    if repo is None:
        return ()
    return (str(Path(repo.root).resolve()),)
