"""callgrind.out files as profiles of instructions per function, with call edges.

The files of ``valgrind --tool=callgrind`` (any event list; the first event,
usually ``Ir``, is the cost) are parsed by the callgrind collector's parser,
so an imported file gives the very resources that collector makes:
``function`` (inclusive ``amount``, ``exclusive``, ``calls``, ``object``,
``source``) and ``call`` (one per caller -> callee edge).  Several files
(the processes of one run) are numbered with ``process``.  The unit is the
event's name (``Ir``: instructions); a negative cost is refused.  The
header keeps the ``cmd``, ``pid``, ``creator`` and ``totals`` the file
records.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..collect.callgrind import callgrind_resources, parse_callgrind
from ..errors import ImportFailed
from ..profile.model import Profile
from .common import Importer, read_bytes, stored_file_name, table_profile

__all__ = ["CallgrindImporter", "check_callgrind_text"]


def check_callgrind_text(text: str, path: Path) -> dict[str, str]:
    """The file's header fields; ImportFailed when it is not a callgrind file or is cut short."""
    fields: dict[str, str] = {}
    lines = text.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise ImportFailed(path, None, "is empty")
    head = lines[first].strip()
    if not (head.startswith("# callgrind format") or head.split(":", 1)[0] in ("version", "creator", "pid", "cmd",
                                                                                 "events", "positions")):
        raise ImportFailed(path, f"line {first + 1}", f"expected a callgrind.out file ('# callgrind format' or "
                                                      f"'version: 1'), got '{head[:60]}'")
    for line in lines[first:first + 200]:
        key, sep, value = line.partition(":")
        if sep and key in ("version", "creator", "pid", "cmd", "part", "events", "positions", "summary"):
            fields.setdefault(key, value.strip())
    if "events" not in fields:
        raise ImportFailed(path, None, "has no 'events:' line: not a callgrind.out file")
    last = len(lines) - 1
    while last > 0 and not lines[last].strip():
        last -= 1
    if not lines[last].startswith(("totals:", "summary:")):
        raise ImportFailed(path, f"line {last + 1}", "ends without a 'totals:' line (truncated?)")
    fields["totals"] = lines[last].partition(":")[2].strip()
    for number, line in enumerate(lines, start=1):
        if line.startswith("calls="):
            if number >= len(lines) or not lines[number].strip():
                raise ImportFailed(path, f"line {number}", "a 'calls=' line without the cost line after it")
            count = line[6:].split(maxsplit=1)[:1]
            if not count or not count[0].isdigit():
                raise ImportFailed(path, f"line {number}", f"expected 'calls=COUNT TARGET' with a whole number of "
                                                           f"calls, got '{line[:60]}'")
    return fields


class CallgrindImporter(Importer):
    name = "callgrind"
    summary = "callgrind.out files: inclusive and exclusive instructions per function, and call edges."

    def load(self, files: list[Path], options: dict[str, Any]) -> Profile:
        rows: list[dict] = []
        metas = []
        for number, path in enumerate(files, start=1):
            raw = read_bytes(path)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ImportFailed(path, None, f"is not a text file ({exc.reason} at byte {exc.start})") from None
            fields = check_callgrind_text(text, path)
            data = parse_callgrind(text)
            if data.negative_line is not None:
                raise ImportFailed(path, f"line {data.negative_line}", "a negative cost: event counts cannot be below 0")
            rows += callgrind_resources(data, number if len(files) > 1 else None)
            metas.append({"file": stored_file_name(path), **fields})
        events = metas[0]["events"].split()
        header: dict[str, Any] = {
            "type": "mixed",  # as the callgrind collector's profiles
            "units": {"instructions": events[0] if events else "events"},
            "tool": {"name": "callgrind", "files": metas},
        }
        return table_profile(header, rows)
