"""The one text form of a measured value: an amount with its unit, scaled to a readable prefix.

Every front end (the check tree, Markdown, JUnit, ``show``, ``diff``, the
TUI) writes amounts through :func:`format_amount`, percentages through
:func:`format_percent` computed by :func:`relative_change`, and axis ticks
through :func:`nice_ticks`, so the same value reads the same everywhere.

* Time (``ns``, ``us``/``µs``, ``ms``, ``s``) moves to the prefix that puts
  the number between 1 and 1000: ``0.1839 s`` is ``183.9 ms``.
* Bytes (``B``, ``KiB``, ``MiB`` ... and ``KB``/``kB``, read as the KiB the
  kernel means) use binary prefixes: ``25276514304 B`` is ``23.5 GiB``.
* Other units (samples, instructions, allocations, none) are counts: from
  10,000 on they take ``k``, ``M``, ``G``, ``T``: ``58.6k samples``.

Numbers keep at least three significant digits (one decimal from 10 on), so
a value that is not zero never prints as ``0``; whole counts below 10,000
and whole bytes below 1 KiB print exactly.
"""

from __future__ import annotations

import math
import re
import textwrap
from typing import Any

__all__ = ["BELOW_RESOLUTION", "amount_scale", "format_amount", "format_change", "format_percent", "format_scaled",
           "in_base_unit", "nice_ticks", "relative_change", "unit_family", "UNIT_SPACE", "wrap_text"]

#: a change between two amounts of 0 (typical values too small for the measurements to resolve)
BELOW_RESOLUTION = "below resolution"

#: time units in seconds, smallest first; the first name is the one shown
_TIME = (("ns", 1e-9, ("ns",)), ("µs", 1e-6, ("us", "µs", "μs")), ("ms", 1e-3, ("ms",)), ("s", 1.0, ("s", "sec")))
#: byte units in bytes, smallest first
_BYTES = (("B", 1.0, ("B", "bytes")), ("KiB", 1024.0, ("KiB", "KB", "kB", "K")),
          ("MiB", 1024.0 ** 2, ("MiB", "MB")), ("GiB", 1024.0 ** 3, ("GiB", "GB")),
          ("TiB", 1024.0 ** 4, ("TiB", "TB")))
#: suffixes of large counts
_COUNT = (("", 1.0), ("k", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12))
#: whole counts below this print exactly (four digits fit where a scaled form would)
_EXACT_COUNT = 10_000


def _ladder(unit: str) -> tuple[tuple[str, float], ...] | None:
    """The prefixes of ``unit``'s family as (name, size in the family's base), or None for a count."""
    for family in (_TIME, _BYTES):
        for _name, _size, aliases in family:
            if unit in aliases:
                return tuple((name, size) for name, size, _aliases in family)
    return None


def unit_family(unit: str) -> str:
    """``time``, ``bytes`` or ``count`` (every unit that is neither)."""
    ladder = _ladder(unit)
    if ladder is None:
        return "count"
    return "time" if ladder[-1][0] == "s" else "bytes"


def _base_size(unit: str) -> float:
    """How many of the family's base units one ``unit`` is (1 for counts)."""
    for family in (_TIME, _BYTES):
        for _name, size, aliases in family:
            if unit in aliases:
                return size
    return 1.0


def in_base_unit(value: float, unit: str) -> float:
    """``value`` of ``unit`` in its family's base unit: seconds for times, bytes for sizes (counts unchanged)."""
    return value * _base_size(unit)


def _digits(magnitude: float) -> str:
    """A scaled number (from 1 to below 1000, or smaller when no prefix is left): three significant digits or more."""
    if magnitude >= 10:
        return f"{magnitude:.1f}"
    if magnitude >= 1:
        return f"{magnitude:.2f}"
    return f"{magnitude:.3g}"


def _prefix(magnitude: float, unit: str) -> tuple[float, str]:
    """``(divisor, prefix)`` for values of about ``magnitude``: a prefixed unit (``ms``) or a count's suffix (``k``)."""
    ladder = _ladder(unit)
    magnitude = abs(magnitude) if math.isfinite(magnitude) else 0.0
    if ladder is None:
        if magnitude < _EXACT_COUNT:
            return 1.0, ""
        name, size = max((step for step in _COUNT if magnitude >= step[1]), key=lambda step: step[1])
        return size, name
    base = _base_size(unit)
    in_base = magnitude * base
    fitting = [step for step in ladder if in_base >= step[1]]
    name, size = fitting[-1] if fitting else ladder[0]
    return size / base, name


def _label(prefix: str, unit: str) -> str:
    """The unit after a scaled number: the prefixed unit, or a count's suffix and its unit (``k samples``)."""
    if _ladder(unit) is not None:
        return prefix
    return f"{prefix} {unit}".strip()


def amount_scale(magnitude: float, unit: str) -> tuple[float, str]:
    """``(divisor, label)``: values of about ``magnitude`` (in ``unit``) divided by it read in ``label``.

    For an axis whose values share one scale: ``label`` is the prefixed unit
    (``ms``), or for counts the suffix and the unit (``k samples``).
    """
    divisor, prefix = _prefix(magnitude, unit)
    return divisor, _label(prefix, unit)


def format_amount(value: Any, unit: str = "", *, column: bool = False) -> str:
    """``value`` (in ``unit``) as text with a readable prefix: ``183.9 ms``, ``23.5 GiB``, ``58.6k samples``.

    None is ``-``; text (a model name) and booleans are shown as they are;
    infinities and NaN keep their name and the unit.  A count of exactly one
    takes the singular of a plural unit (``1 sample``, ``-1 call``); for a
    ``column`` of right-aligned cells the letters it dropped are spaces, so
    that its digits stand under those of ``56 samples``.
    """
    text = _amount_text(value, unit)
    if unit_family(str(unit or "")) == "count" and _is_one(value) and _plural(str(unit)):
        return text[:-1] + (" " if column else "")
    return text


def _is_one(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) == 1


def _plural(unit: str) -> bool:
    """Whether ``unit`` reads as a plural word (``samples``, ``calls``), not a symbol (``Ir``) or a single letter."""
    return len(unit) > 2 and unit.endswith("s") and not unit.endswith("ss") and unit.isalpha() and unit.islower()


def _amount_text(value: Any, unit: str) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    unit = str(unit or "")
    if not math.isfinite(value):
        return f"{value} {unit}".rstrip()
    magnitude = abs(float(value))
    sign = "-" if value < 0 else ""
    if magnitude == 0:
        return f"0 {unit}".rstrip()
    whole = float(value).is_integer()
    family = unit_family(unit)
    if whole and ((family == "count" and magnitude < _EXACT_COUNT)
                  or (family == "bytes" and magnitude * _base_size(unit) < 1024)):
        return f"{sign}{int(magnitude)} {unit}".rstrip()
    return sign + format_scaled(magnitude, unit)


#: the space between a number and its unit (``30.0 ns``, a count's ``64.0M Ir``, ``100 %``, ``3 commits``),
#: the one of a quoted command line's prompt (``'$ ./app``) and those of a p-value (``p < 0.0001``, ``p = 0.03``:
#: a lone ``p`` at a line's end read as a word), which a line is not broken at
UNIT_SPACE = re.compile(r"(?:(?<=\d)|(?<=\d[kMGT])) (?=[^\W\d]|%)|(?<='\$) |(?<=\bp) (?=[<=>] \d)|(?<=\bp [<=>]) (?=\d)")


def wrap_text(text: str, width: int, *, indent: int = 0, first: int | None = None) -> list[str]:
    """``text`` on lines of at most ``width`` characters, broken at spaces but never between an amount and its
    unit (:data:`UNIT_SPACE`); the first line starts after ``first`` spaces (``indent`` unless given), the
    others after ``indent`` (a hanging indent).  A word longer than a line is cut into pieces of a line each."""
    lead = " " * (indent if first is None else first)
    glued = UNIT_SPACE.sub("\0", text)
    lines = textwrap.wrap(glued, max(width, 1), initial_indent=lead, subsequent_indent=" " * indent,
                          break_long_words=True, break_on_hyphens=False)
    return [line.replace("\0", " ") for line in lines] or [lead]


def format_scaled(magnitude: float, unit: str) -> str:
    """A positive ``magnitude`` in its own best prefix; a number that rounds up to the next step takes the next prefix."""
    divisor, prefix = _prefix(magnitude, unit)
    text = _digits(magnitude / divisor)
    step = 1024 if unit_family(unit) == "bytes" else 1000
    if float(text) >= step:
        # 999.96 ms rounds to 1000.0 ms: the rounded value picks the prefix (1.00 s)
        bigger, bigger_prefix = _prefix(float(text) * divisor, unit)
        if bigger_prefix != prefix:
            divisor, prefix = bigger, bigger_prefix
            text = _digits(max(magnitude / divisor, 1.0))
    if _ladder(unit) is None:
        # a count's suffix sticks to its number (58.6k), the unit follows after a space
        return f"{text}{prefix} {unit}".rstrip()
    return f"{text} {prefix}"


def relative_change(before: Any, after: Any) -> float | None:
    """``after`` against ``before`` in percent of ``before`` (``+100``: doubled); None when it has no meaning.

    The one computation of a change in percent: the check's findings, the
    difference table and the TUI's compare view all use it.
    """
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (before, after)):
        return None
    if before == 0 or not math.isfinite(before) or not math.isfinite(after):
        return None
    return (after - before) / abs(before) * 100.0


def format_percent(percent: Any) -> str:
    """A change in percent with its sign and three significant digits: ``+43.6%``, ``-0.12%``, ``+1250%``.

    A change that is not zero never reads as ``0%`` (below 0.01 % it is
    ``+<0.01%``); None (no baseline to compare with) is ``n/a``.
    """
    if percent is None or isinstance(percent, bool) or not isinstance(percent, (int, float)):
        return "n/a"
    if not math.isfinite(percent):
        return f"{percent:+}%"
    if percent == 0:
        return "0%"
    magnitude = abs(percent)
    if magnitude >= 100:
        text = f"{magnitude:.0f}"
    elif magnitude >= 10:
        text = f"{magnitude:.1f}"
    elif magnitude >= 1:
        text = f"{magnitude:.2f}"
    elif magnitude >= 0.01:
        text = f"{magnitude:.2g}"
    else:
        # a change of less than a ten-thousandth: its digits would only be noise (8.12e-05%)
        text = "<0.01"
    return f"{'+' if percent > 0 else '-'}{text}%"


def format_change(percent: Any, before: Any) -> str:
    """A change of ``percent`` from ``before``: :func:`format_percent`, or ``below resolution`` when ``before`` is 0.

    A method may find a shift from a baseline whose typical value is 0 (CPU
    times below one clock tick): a percentage of nothing beside ``0 s ->
    3.44 ms`` (or ``0 s -> 0 s``) would only mislead, so such a change reads
    :data:`BELOW_RESOLUTION`.
    """
    zero = isinstance(before, (int, float)) and not isinstance(before, bool) and before == 0
    if zero and isinstance(percent, (int, float)) and not isinstance(percent, bool) and percent != 0:
        return BELOW_RESOLUTION
    return format_percent(percent)


def _noise(residual: float, step: float, bound: float) -> bool:
    """Whether ``bound`` lies ``residual`` short of a multiple of ``step`` by binary noise alone: a residual
    tiny against the step and against the bound itself (at most the 1e-9 a tick may miss the bound by)."""
    return (residual <= step * 1e-12 * max(1.0, abs(bound / step))
            and residual <= 1e-9 * max(1.0, abs(bound)))


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` evenly spaced, round values (steps of 1, 2 or 5 times a power of ten) covering low..high.

    The first tick is at or below ``low`` and the last at or above ``high``;
    a span of zero gets a span of its own size (or 1 around zero).
    """
    if not (math.isfinite(low) and math.isfinite(high)):
        return []
    if high < low:
        low, high = high, low
    if high == low:
        pad = abs(low) * 0.5 or 1.0
        low, high = low - pad, high + pad
    steps = max(count - 1, 1)
    rough = (high - low) / steps
    if math.isinf(rough):  # a span past the largest float (-1e308 .. 1e308): divided before subtracting
        rough = high / steps - low / steps
    if not rough > 0:  # a span of subnormal numbers, below what a division keeps: no step between them
        return [low, high]
    power = 10.0 ** math.floor(math.log10(rough))
    if power == 0:  # the power of ten below the smallest subnormal
        return [low, high]
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= rough * (1 - 1e-12))
    first = math.floor(low / step) * step
    last = math.ceil(high / step) * step
    if not (math.isfinite(first) and math.isfinite(last)):  # a round bound past the largest float
        return [low, high]
    # a bound on a multiple of the step but for binary noise (0.3 / 0.1 = 2.9999999999999996) is that multiple
    # (and only then: -6e-8 against a step of 1e5 is a value below zero, which the first tick must not leave out)
    if _noise(step - (low - first), step, low):
        first += step
    if _noise(step - (last - high), step, high):
        last -= step
    # multiples of the step, rounded to its decimals: no binary noise of adding it up (0.30000000000000004)
    decimals = max(0, 1 - math.floor(math.log10(step)))
    ticks = [round(first + index * step, decimals) for index in range(int(round(last / step - first / step)) + 1)]
    # near the largest float index * step alone can overflow where the tick itself does not
    return [tick if math.isfinite(tick) else (first / step + index) * step for index, tick in enumerate(ticks)]
