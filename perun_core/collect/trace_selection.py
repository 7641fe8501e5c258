"""Which functions of a binary the trace collector's rules select, and their sampling rates.

Functions are read from the binary's symbol table with ``nm`` (plain and
demangled); a rule matches a function by its symbol or its demangled name,
with or without the parameter list.
"""

from __future__ import annotations

import fnmatch
import subprocess
from typing import Any

from ..errors import CollectionError
from ..units import UnitContext

__all__ = ["functions_of", "matches", "selection", "text_symbols"]


def text_symbols(binary: str, *, demangle: bool) -> list[tuple[int, str]]:
    """``(address, name)`` of the functions defined in ``binary`` (from nm)."""
    command = ["nm", "--defined-only", *(["-C"] if demangle else []), binary]
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    symbols = []
    for line in done.stdout.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in ("T", "t", "W", "w", "i"):
            try:
                symbols.append((int(parts[0], 16), parts[2]))
            except ValueError:
                continue
    return symbols


def matches(names: tuple[str, ...], patterns: list[str]) -> bool:
    candidates = {n for name in names for n in (name, name.split("(", 1)[0])}
    return any(fnmatch.fnmatchcase(n, p) for n in candidates for p in patterns)


def functions_of(binary: str) -> list[tuple[int, str, str]]:
    """``(address, symbol, demangled name)`` of each function of ``binary``, one per address."""
    demangled = dict(text_symbols(binary, demangle=True))
    found: dict[int, tuple[int, str, str]] = {}
    for address, symbol in text_symbols(binary, demangle=False):
        found.setdefault(address, (address, symbol, demangled.get(address, symbol)))
    return sorted(found.values())


def selection(ctx: UnitContext, kwargs: dict[str, Any], binary: str
               ) -> tuple[list[tuple[int, str, str]], dict[int, int]]:
    """Functions the rules select (all of them without rules) and the sampling rate by address of named ones."""
    functions = functions_of(binary)
    rules = list(kwargs["rules"])
    if rules:
        chosen = [f for f in functions if matches(f[1:], rules)]
        if not chosen:
            raise CollectionError(ctx.label, f"no function of {binary} matches the rules {', '.join(rules)}"
                                  + ("" if functions else " (it has no symbol table: was it stripped?)"))
    else:
        chosen = functions
    rates: dict[int, int] = {}
    for item in kwargs["sampling"]:
        pattern, _, count = item.rpartition("=")
        matched = [address for address, *names in functions if matches(tuple(names), [pattern])]
        if not matched:
            raise CollectionError(ctx.label, f"the sampling pattern {pattern!r} matches no function of {binary}")
        rates.update((address, int(count)) for address in matched)
    return chosen, rates
