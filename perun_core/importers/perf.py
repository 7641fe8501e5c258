"""``perf script`` text and ``perf.data`` files as time profiles with call stacks.

``perf-script`` reads the text ``perf script`` prints (its default fields,
or any ``-F`` selection that keeps the event and the call chain): a header
line per sample (``comm pid time: period event:``) followed by one line per
frame (``address symbol+offset (object)``), innermost first, and a blank
line.  ``perf-record`` runs ``perf script`` on a ``perf.data`` file and
reads its output the same way (perf must be installed; the file must come
from a machine with the same binaries for symbols to resolve).

The profile is the perf collector's: one ``samples`` resource per distinct
stack (``amount`` the samples taken in it, ``period`` the sum of their
periods) and one ``function`` resource per function (inclusive ``amount``,
``exclusive``), unit ``samples``.  Samples of several events are kept
apart (``event`` on the stack resources and in the uid of each).

The file is read whole.  The common text is read in bulk with numpy
(:mod:`perun_core.importers.perfscan`: lines found by their byte positions,
each distinct stack's frames parsed once, each distinct symbol and object
made a string once); any other text is split into samples in C and its
distinct stacks are parsed by one regular-expression scan, or line by line
to name a bad line (``benchmarks/importdiff.py`` times a 100 MB file).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..collect.perf import HOW_TO_GET_PERF
from ..errors import ExternalToolError, ImportFailed, InvalidParameter
from ..params import Param
from ..profile.model import Profile
from .common import FrameIds, Importer, flatten, read_bytes, stack_table, stored_file_name, table_profile
from .perfscan import scan_perf_script

__all__ = ["PerfRecordImporter", "PerfScriptImporter", "parse_perf_script_text"]

#: ``... time: [period] event:`` ending a sample's header line (period and event as perf prints them).
_HEADER = re.compile(rb"^[^\n]*?:\s+(?:(\d+)\s+)?([A-Za-z][\w\-.:/=,]*?):[ \t]*(?:[^\n]*)$", re.M)
_OFFSET = re.compile(r"\+0x[0-9a-fA-F]+$")
_FRAME = re.compile(r"^\s*([0-9a-fA-F]+)\s+(.*?)\s+\((.*)\)\s*$")
_SYMBOL_ONLY = re.compile(r"^\s*([0-9a-fA-F]+)\s+(\S.*?)\s*$")


def _line_of(data: bytes, block: int, blocks: list[bytes], line_in_block: int = 0) -> int:
    """The 1-based line number of line ``line_in_block`` of block ``block`` (blocks split on blank lines)."""
    offset = sum(len(b) + 2 for b in blocks[:block])
    return data.count(b"\n", 0, offset) + 1 + line_in_block


class _Script:
    """A ``perf script`` text cut into samples (blocks split on blank lines): header lines and stack texts."""

    def __init__(self, data: bytes, path: Path) -> None:
        text = data.replace(b"\r\n", b"\n")
        if b"\x00" in text[:4096]:
            raise ImportFailed(path, None,
                               "is binary (a perf.data file?); import it as perf-record, or run 'perf script' on it")
        lines_start = 0
        # header comments of 'perf script --header'
        while text.startswith(b"#", lines_start):
            end = text.find(b"\n", lines_start)
            lines_start = len(text) if end < 0 else end + 1
        self.data = data
        self.path = path
        self.skipped_lines = data[:lines_start].count(b"\n")
        self.body = text[lines_start:].strip(b"\n")
        if not self.body:
            raise ImportFailed(path, None, "holds no samples (is it the output of 'perf script'?)")
        self.blocks = re.split(rb"\n\s*\n", self.body)
        self.heads: list[bytes] = []
        self.stacks: list[bytes] = []
        for block in self.blocks:
            head, _, rest = block.partition(b"\n")
            self.heads.append(head)
            self.stacks.append(rest)

    def line(self, block: int, line_in_block: int = 0) -> int:
        """The line number in the file of line ``line_in_block`` of block ``block``."""
        return self.skipped_lines + _line_of(self.body, block, self.blocks, line_in_block)

    def header_fields(self) -> list[tuple[bytes, bytes]]:
        """(period, event) of every sample line; ImportFailed naming the first line that is not one."""
        found = _HEADER.findall(b"\n".join(self.heads))
        if len(found) != len(self.heads):
            for number, head in enumerate(self.heads):
                if not _HEADER.match(head) or head.startswith((b"\t", b" ")):
                    shown = head.decode("utf-8", "replace").strip()[:60]
                    raise ImportFailed(self.path, f"line {self.line(number)}",
                                       f"expected a sample line 'COMMAND PID TIME: PERIOD EVENT:', got '{shown}'")
        for number, head in enumerate(self.heads):
            if head.startswith((b"\t", b" ")):
                raise ImportFailed(self.path, f"line {self.line(number)}", "a stack frame without a sample line before it")
        return found


#: Periods are summed per stack as 64-bit integers; a larger one is no period perf can print.
_LARGEST_PERIOD = float(2**62)


def _check_periods(script: _Script, period_values: Any) -> None:
    """ImportFailed naming the first sample line whose period is not a count a sum of them can hold."""
    import numpy as np

    bad = np.flatnonzero(~(period_values <= _LARGEST_PERIOD))
    if len(bad):
        raise ImportFailed(script.path, f"line {script.line(int(bad[0]))}",
                           f"expected a sample period up to 2**62, got {period_values[bad[0]]:g}")


def parse_perf_script_text(data: bytes, path: Path) -> tuple[FrameIds, list[tuple[int, ...]], list[int], list[int] | None,
                                                               list[str], list[str]]:
    """Distinct stacks of a ``perf script`` text: ids, stacks, sample counts, period sums, events, commands.

    The common text is read in bulk (:mod:`perun_core.importers.perfscan`);
    anything else line by line, which names a bad line.
    """

    scanned = scan_perf_script(data, _HEADER)
    if scanned is not None:
        ids, fast, which, period_values, distinct_events, heads = scanned
        return _tallied(path, ids, fast, which, period_values, distinct_events, heads)
    return parse_by_lines(data, path)


def parse_by_lines(data: bytes, path: Path) -> tuple[FrameIds, list[tuple[int, ...]], list[int], list[int] | None,
                                                      list[str], list[str]]:
    """What :func:`parse_perf_script_text` answers, read line by line (any text; ImportFailed naming a bad line)."""
    import numpy as np

    script = _Script(data, path)
    found = script.header_fields()
    events_raw = [e for _, e in found]
    distinct_events = sorted(set(events_raw))
    several = len(distinct_events) > 1
    index: dict[bytes, int] = {}
    keys = [events_raw[i] + b"\n" + s for i, s in enumerate(script.stacks)] if several else script.stacks
    which = [index.setdefault(k, len(index)) for k in keys]
    # perf script prints every frame's object unless -F left it out: then no frame has one
    sample_body = next((body for body in script.stacks if body.strip()), b"")
    with_objects = _FRAME.match(sample_body.split(b"\n", 1)[0].decode("utf-8", "replace")) is not None
    ids = FrameIds()
    fast = _frames_fast(list(index), several, ids) if with_objects else None
    if fast is None:
        fast = _frames_slow(script, index, which, several, with_objects, ids)
    period_values = None
    if all(p for p, _ in found):
        period_values = np.array([p for p, _ in found], dtype=np.float64)
        _check_periods(script, period_values)
    return _tallied(path, ids, fast, which, period_values, distinct_events, script.heads)


def _tallied(path: Path, ids: FrameIds, fast: list[tuple[int, ...]], which: list[int], period_values: Any,
             distinct_events: list[bytes], heads: list[bytes]) -> tuple[FrameIds, list[tuple[int, ...]], list[int],
                                                                       list[int] | None, list[str], list[str]]:
    """The distinct stacks of ``fast`` (frame ids of each distinct stack text), with the samples and periods of
    each: ``which`` is the stack text of every sample, ``period_values`` (or None) its period."""
    import numpy as np

    distinct: dict[tuple[int, ...], int] = {}
    remap = [distinct.setdefault(frames, len(distinct)) for frames in fast]
    # text that differs only in addresses or offsets gives the same stack
    which_arr = np.asarray(remap, dtype=np.int64)[np.asarray(which, dtype=np.int64)]
    counts = np.bincount(which_arr, minlength=len(distinct))
    periods = None
    if period_values is not None:
        periods = np.rint(np.bincount(which_arr, weights=period_values, minlength=len(distinct)))
        if len(periods) and not periods.max() < 2.0**63:
            raise ImportFailed(path, "periods", "the periods of one stack add up beyond 64 bits")
        periods = periods.astype(np.int64).tolist()
    commands = sorted({h.split(None, 1)[0].decode("utf-8", "replace") for h in heads[:1000] if h.strip()})
    return ids, list(distinct), counts.tolist(), periods, [e.decode() for e in distinct_events], commands


def _frames_slow(script: _Script, index: dict[bytes, int], which: list[int], several: bool, with_objects: bool,
                 ids: FrameIds) -> list[tuple[int, ...]]:
    """Frame ids of every distinct stack text, line by line; ImportFailed naming a line that is not a frame."""
    first_block: dict[int, int] = {}
    for block_number, k in enumerate(which):
        first_block.setdefault(k, block_number)
    stacks = []
    for key, number in index.items():
        event = b""
        if several:
            event, _, key = key.partition(b"\n")
        frames = []
        for line_in_block, raw in enumerate(key.decode("utf-8", "replace").split("\n"), start=1):
            if not raw.strip():
                continue
            match = _FRAME.match(raw)
            if match is None:
                block = first_block[number]
                if _SYMBOL_ONLY.match(raw) is None or with_objects or "(" in raw:
                    raise ImportFailed(script.path, f"line {script.line(block, line_in_block)}",
                                       f"expected a stack frame 'ADDRESS SYMBOL (OBJECT)', got '{raw.strip()[:60]}'"
                                       + (" (truncated?)" if block == len(script.blocks) - 1 else ""))
                symbol, obj = match_symbol(raw), ""
            else:
                symbol, obj = _OFFSET.sub("", match.group(2).strip()) or "[unknown]", match.group(3)
            frames.append(ids[(symbol, obj)])
        if not frames:
            frames.append(ids[("[unknown]", "")])
        if several:  # stacks of two events stay apart: the event is the root frame
            frames.append(ids[(f"[{event.decode('utf-8', 'replace')}]", "")])
        stacks.append(tuple(frames))
    return stacks


#: a frame line, symbol and object; the symbol ends at the last " (" (greedy: no backtracking per character)
_FRAMES = re.compile(r"^[ \t]*[0-9a-fA-F]+[ \t]+(\S[^\n]*) \(([^\n]*)\)[ \t]*$", re.M)


def _frames_fast(keys: list[bytes], several: bool, ids: FrameIds) -> list[tuple[int, ...]] | None:
    """Frame ids of every distinct stack text, all parsed by one regular-expression scan; None if a line is odd.

    The slow path then finds the odd line and names it.
    """
    events: list[bytes] = []
    if several:
        split = [key.partition(b"\n") for key in keys]
        events = [event for event, _, _ in split]
        keys = [rest for _, _, rest in split]
    bodies = [key.strip(b"\n") for key in keys]
    if any(not body or b"\n\n" in body for body in bodies):
        return None
    lengths = [body.count(b"\n") + 1 for body in bodies]
    found = _FRAMES.findall(b"\n".join(bodies).decode("utf-8", "replace"))
    if len(found) != sum(lengths):
        return None
    # each distinct (symbol, object) once: its frame id, the symbol without its offset
    numbers = {pair: ids[(_without_offset(pair[0]), pair[1])] for pair in dict.fromkeys(found)}
    flat = list(map(numbers.__getitem__, found))
    stacks = []
    start = 0
    for number, length in enumerate(lengths):
        frames = tuple(flat[start:start + length])
        start += length
        if several:
            frames += (ids[(f"[{events[number].decode('utf-8', 'replace')}]", "")],)
        stacks.append(frames)
    return stacks


_HEX = "0123456789abcdefABCDEF"


def _without_offset(symbol: str) -> str:
    """``symbol`` stripped and without a final ``+0xOFFSET`` (what ``_OFFSET.sub`` does, without a regex)."""
    text = symbol.strip()
    head, plus, tail = text.rpartition("+0x")
    if plus and tail and not tail.strip(_HEX):
        text = head
    return text or "[unknown]"


def match_symbol(raw: str) -> str:
    match = _SYMBOL_ONLY.match(raw)
    assert match is not None
    return _OFFSET.sub("", match.group(2)) or "[unknown]"


def profile_of_script(data: bytes, path: Path, tool: str) -> Profile:
    ids, stacks, counts, periods, events, commands = parse_perf_script_text(data, path)
    table = stack_table(ids, *flatten(stacks), counts, periods=periods)
    header: dict[str, Any] = {
        "type": "time",
        "units": {"time": "samples"},
        "event": events[0] if len(events) == 1 else ",".join(events),
        "tool": {"name": "perf", "format": tool, "file": stored_file_name(path), "samples": int(sum(counts)),
                 "events": events, "commands": commands[:20]},
    }
    return table_profile(header, table)


class PerfScriptImporter(Importer):
    name = "perf-script"
    summary = "The text of 'perf script' (samples with call stacks) as a time profile."

    def load(self, files: list[Path], options: dict[str, Any]) -> Profile:
        profiles = [profile_of_script(read_bytes(path), path, "perf script") for path in files]
        return merge_stack_profiles(profiles, files)


class PerfRecordImporter(Importer):
    name = "perf-record"
    summary = "A perf.data file (through 'perf script') as a time profile with call stacks."
    params = (
        Param("symfs", "str", None, "Look for the binaries (and their symbols) under this directory "
              "(perf script --symfs).", flags=("--symfs",), metavar="DIR"),
    )

    def load(self, files: list[Path], options: dict[str, Any]) -> Profile:
        import shutil
        import subprocess
        import tempfile

        symfs = options.get("symfs")
        if symfs is not None and (not str(symfs).strip() or not Path(symfs).expanduser().is_dir()):
            # perf script ignores a --symfs that is not there and leaves every frame unresolved
            raise InvalidParameter(self.name, "symfs", str(symfs), "an existing directory holding the binaries")
        if shutil.which("perf") is None:
            raise ExternalToolError("perf", HOW_TO_GET_PERF)
        profiles = []
        for path in files:
            read_bytes(path)[:0]  # a missing or unreadable file is reported like the other importers do
            with tempfile.TemporaryDirectory(prefix="perun-import-") as work:
                command = ["perf", "--buildid-dir", str(Path(work) / "buildid"), "script", "-i", str(path)]
                if symfs is not None:
                    command += ["--symfs", str(Path(symfs).expanduser())]
                try:
                    done = subprocess.run(command, capture_output=True, stdin=subprocess.DEVNULL, timeout=600,
                                          check=False)
                except (OSError, subprocess.SubprocessError) as exc:
                    raise ImportFailed(path, None, f"perf script failed: {exc}") from None
            if done.returncode != 0 or not done.stdout.strip():
                message = next((line for line in done.stderr.decode("utf-8", "replace").splitlines()
                                if line.strip() and not line.startswith("#")), "it printed no samples")
                raise ImportFailed(path, None, f"perf script cannot read it: {message.strip()}")
            profiles.append(profile_of_script(done.stdout, path, "perf record"))
        return merge_stack_profiles(profiles, files)


def merge_stack_profiles(profiles: list[Profile], files: list[Path]) -> Profile:
    """One profile of several files of stacks: their resources side by side, the file names in the header."""
    if len(profiles) == 1:
        return profiles[0]

    rows: list[dict] = []
    for profile, path in zip(profiles, files):
        assert profile.global_region is not None
        rows.extend({**row, "file": stored_file_name(path)} for row in profile.global_region.resources)
    header = dict(profiles[0].header)
    header["tool"] = {**header["tool"], "file": [stored_file_name(p) for p in files],
                      "samples": sum(p.header["tool"].get("samples", 0) for p in profiles)}
    return table_profile(header, rows)
