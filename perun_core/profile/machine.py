"""A compact description of the machine a profile was collected on.

Profiles from different machines are not comparable; the ``machine`` entry
of a profile's header tells them apart.  It is small (well under 1 KB) and
cheap: read once per process from ``/proc`` and :mod:`platform`.
"""

from __future__ import annotations

import functools
import os
import platform
from typing import Any

from .. import __version__
from ..amounts import format_amount

__all__ = ["describe_machine", "load_average", "machine_info"]

_MAX_TEXT = 120


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Hardware", "cpu model", "Processor"):
                    return " ".join(value.split())
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_bytes() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 3] + "..."


@functools.lru_cache(maxsize=1)
def _collect() -> tuple[tuple[str, Any], ...]:
    uname = platform.uname()
    return (
        ("hostname", _clip(uname.node)),  # gethostname(2), without importing socket
        ("cpu", _clip(_cpu_model())),
        ("cores", os.cpu_count()),
        ("memory", _memory_bytes()),
        ("os", _clip(f"{uname.system} {uname.release}")),
        ("arch", uname.machine),
        ("python", f"{platform.python_implementation()} {platform.python_version()}"),
        ("perun", _perun_version()),
    )


def _perun_version() -> str:
    return str(__version__)


def load_average() -> float | None:
    """The one-minute load average (runnable and uninterruptible tasks), or None where unknown."""
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        return None


def machine_info() -> dict[str, Any]:
    """hostname, cpu (model), cores, memory (bytes), os (kernel), arch, python and perun (versions).

    Collection adds ``load_before`` and ``load_after`` (see :func:`load_average`).
    """
    return dict(_collect())


def describe_machine(machine: Any) -> list[tuple[str, str]]:
    """A profile's ``machine`` entry as ``(name, text)`` rows with units: ``memory`` is ``23.5 GiB``, not bytes.

    The load averages before and after the collection share a row
    (``0.52 -> 0.61``); keys this version does not know are shown as they
    are, after the known ones.  Anything but a mapping gives no rows.
    """
    if not isinstance(machine, dict):
        return []
    rows = []
    for key, value in machine.items():
        if value is None or key in ("load_before", "load_after"):
            continue
        if key == "memory" and isinstance(value, (int, float)) and not isinstance(value, bool):
            rows.append(("memory", format_amount(value, "B")))
        elif key == "cores":
            rows.append(("cores", str(value)))
        else:
            rows.append((str(key), str(value)))
    loads = [machine.get("load_before"), machine.get("load_after")]
    if any(isinstance(load, (int, float)) for load in loads):
        rows.append(("load", " -> ".join(f"{load:.2f}" if isinstance(load, (int, float)) else "?" for load in loads)))
    return rows
