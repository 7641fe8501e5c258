"""Call stacks written by other profilers: Brendan Gregg's folded format and speedscope files.

``folded`` reads ``root;caller;leaf VALUE`` lines (``stackcollapse-*.pl``,
``perf script | stackcollapse-perf.pl``, py-spy ``--format raw``, perun's own
folded output): one stack resource per distinct stack (lines of the same
stack are added up) and one function resource per function, as the perf
collector makes them.  What frame names hold besides the function
(perun's ``function()~source~line``, py-spy's ``function (file.py:12)``,
DTrace's ``module`function``, stackcollapse-perf's ``_[k]`` annotations)
is read by :mod:`perun_core.importers.framenames`; the function resources
are per function, whatever line of it a frame was at.  Blank lines and
``#`` comments are skipped, any line break is read.  Values are samples
unless ``--unit`` says otherwise (``--type memory --unit B`` for
allocation stacks); a negative value is refused.

``py-spy`` is ``folded`` for ``py-spy record --format raw`` files, samples
without any Python frame counted under ``[no frames]``.

``speedscope`` reads speedscope.app files (``sampled`` and ``evented``
profiles): samples with their weights, or the time between open and close
events, per stack (a negative weight or time, or an event before the one
it follows, is refused).  The unit is the file's (``nanoseconds`` becomes ``ns``,
``bytes`` becomes ``B`` and a memory profile); a file of several profiles
(threads) puts each profile's name as the root frame of its stacks.

Both are vectorized (numpy over one flat array of frame ids).  A folded
file is read in bulk (:mod:`perun_core.importers.foldedscan`: numpy over
the positions of its separators, in chunks of lines, frame names numbered
without a string per frame); files with fractional values, other line breaks or a broken line
are read line by line, which names the bad line.  ``benchmarks/importdiff.py``
times a million-line folded file.
"""

from __future__ import annotations

import math
from itertools import repeat
from pathlib import Path
from typing import Any

from ..errors import ImportFailed
from ..params import Param
from ..profile.model import Profile
from ..profile.resources import ResourceTable
from .common import FrameIds, Importer, flatten, read_bytes, read_json, stack_table, stored_file_name, table_profile
from .foldedscan import FoldedScan, scan_folded_files
from .framenames import NO_FRAMES, describe_frames

__all__ = ["FoldedImporter", "PySpyImporter", "SpeedscopeImporter", "parse_folded"]

_SPEEDSCOPE_UNITS = {"nanoseconds": "ns", "microseconds": "us", "milliseconds": "ms", "seconds": "s",
                     "bytes": "B", "none": "samples"}


def parse_folded(data: bytes, path: Path, totals: list) -> None:
    """Append the stacks (texts) and values (a numpy array) of one folded file to ``totals``.

    Any line break (CR LF too); blank lines and ``#`` comments are skipped;
    the value is the last word of the line, whatever space or tab comes
    before it; a line of a value alone (py-spy's samples without frames)
    counts for :data:`~perun_core.importers.framenames.NO_FRAMES`.
    """
    import numpy as np

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportFailed(path, None, f"is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    lines = text.splitlines()
    stacks: list[str] = []
    values: list[str] = []
    for number, line in enumerate(lines, start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.rsplit(None, 1)  # at the last run of spaces or tabs: frame names may hold spaces
        stack, value = (parts[0], parts[1]) if len(parts) == 2 else ("", parts[0])
        cut = " (truncated?)" if number == len(lines) else ""
        if not _is_number(value):
            if not stack.strip():
                raise ImportFailed(path, f"line {number}", f"expected 'frame;frame;... VALUE', got '{line[:60]}'{cut}")
            raise ImportFailed(path, f"line {number}", f"expected a number after the stack, got '{value[:30]}'{cut}")
        if float(value) < 0:
            raise ImportFailed(path, f"line {number}", f"a negative value ({value[:30]}): amounts cannot be below 0")
        stacks.append(stack.rstrip() or NO_FRAMES)
        values.append(value)
    try:
        amounts = np.array(values, dtype=np.int64)
    except (ValueError, OverflowError):
        amounts = np.array(values, dtype=np.float64)
    totals.append((stacks, amounts))


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


class FoldedImporter(Importer):
    name = "folded"
    summary = "Folded stacks ('root;caller;leaf VALUE' lines, Brendan Gregg's format) as a profile with stacks."
    params = (
        Param("type", "choice", "time", "Profile type of the values.", choices=("time", "memory"),
              flags=("--type",)),
        Param("unit", "str", "samples", "Unit of the values (samples, ns, ms, B, ...).", flags=("--unit",),
              metavar="UNIT"),
    )

    def load(self, files: list[Path], options: dict[str, Any]) -> Profile:
        scan = scan_folded_files(files)
        if scan is None:  # something unusual, or a broken line to name: line by line
            scan = _scan_lines([read_bytes(path) for path in files], files)
        ids = FrameIds()
        for name in scan.names:
            ids[name]  # numbered in order: the scan numbered the names as they first occur
        describe_frames(ids.frames)
        kind = options.get("type") or "time"
        unit = options.get("unit") or "samples"
        table = stack_table(ids, scan.flat, scan.lengths, scan.values, kind=kind)
        header = {"type": kind, "units": {kind: unit},
                  "tool": {"name": self.name, "files": [stored_file_name(p) for p in files], "lines": scan.lines}}
        return table_profile(header, table)


class PySpyImporter(FoldedImporter):
    name = "py-spy"
    summary = "py-spy record --format raw files: Python stacks with their samples, function, file and line."
    params: tuple[Param, ...] = ()

    def load(self, files: list[Path], options: dict[str, Any]) -> Profile:
        return super().load(files, {"type": "time", "unit": "samples"})


def _scan_lines(datas: list[bytes], files: list[Path]) -> FoldedScan:
    """The stacks of folded files read line by line (any value, any line break), bad lines named."""
    import numpy as np

    totals: list = []
    for data, path in zip(datas, files):
        parse_folded(data, path, totals)
    texts = [text for stacks, _ in totals for text in stacks] if len(totals) > 1 else totals[0][0]
    values = np.concatenate([a for _, a in totals])
    if not texts:
        raise ImportFailed(files[0], None, "holds no stacks")
    integral = values.dtype.kind == "i"
    unique = list(dict.fromkeys(texts))
    if len(unique) < len(texts):  # lines of the same stack are added up
        index = dict(zip(unique, range(len(unique))))
        which = np.fromiter(map(index.__getitem__, texts), dtype=np.int64, count=len(texts))
        summed = np.bincount(which, weights=values.astype(np.float64), minlength=len(unique))
        values = np.rint(summed).astype(np.int64) if integral else summed
    # every frame of every stack, root first, in one split; then reversed as a whole, which puts
    # the stacks in reverse order with their frames innermost first
    lengths = np.fromiter(map(str.count, unique, repeat(";")), dtype=np.int64, count=len(unique)) + 1
    names = ";".join(unique).split(";")
    names.reverse()
    numbers: dict[str, int] = {}
    flat = np.fromiter(map(numbers.setdefault, names, map(len, repeat(numbers))), dtype=np.int64, count=len(names))
    return FoldedScan(list(numbers), flat, lengths[::-1].copy(), values[::-1].copy(), len(texts))


class SpeedscopeImporter(Importer):
    name = "speedscope"
    summary = "speedscope.app JSON files (sampled and evented profiles) as a profile with stacks."

    def load(self, files: list[Path], options: dict[str, Any]) -> Profile:
        import numpy as np

        ids = FrameIds()
        stacks: dict[tuple[int, ...], float] = {}
        units = set()
        names = []
        exporters: list[str] = []
        for path in files:
            doc = read_json(path)
            root = doc.get({"": doc.data}, "", "", dict)
            frame_ids = self._frames(doc, root, ids)
            if isinstance(root.get("exporter"), str) and root["exporter"] not in exporters:
                exporters.append(root["exporter"])  # the tool that wrote the file (py-spy, pyinstrument, ...)
            profiles = doc.get(root, "profiles", "", list)
            for p, _ in enumerate(profiles):
                where = f"profiles[{p}]"
                profile = doc.get(profiles, p, "profiles", dict)
                kind = doc.get(profile, "type", where, str)
                units.add(doc.get(profile, "unit", where, str, optional=True, default="none"))
                label = doc.get(profile, "name", where, str, optional=True, default=f"profile {p}")
                names.append(label)
                prefix = (ids[(f"[{label}]", "")],) if len(profiles) > 1 else ()
                if kind == "sampled":
                    self._sampled(doc, profile, where, frame_ids, prefix, stacks)
                elif kind == "evented":
                    self._evented(doc, profile, where, frame_ids, prefix, stacks)
                else:
                    raise doc.fail(f"{where}.type", f"expected 'sampled' or 'evented', got '{kind}'")
        if len(units) > 1:
            raise ImportFailed(files[0], None, f"mixes units ({', '.join(sorted(units))}); import them separately")
        unit = _SPEEDSCOPE_UNITS.get(next(iter(units), "none"), "samples")
        kind = "memory" if unit == "B" else "time"
        values = list(stacks.values())
        amounts = np.array(values, dtype=np.int64 if all(isinstance(v, int) for v in values) else np.float64)
        table = stack_table(ids, *flatten(list(stacks)), amounts, kind=kind) if stacks else ResourceTable([])
        header = {"type": kind, "units": {kind: unit},
                  "tool": {"name": "speedscope", "files": [stored_file_name(p) for p in files], "profiles": names,
                           **({"exporters": exporters} if exporters else {})}}
        return table_profile(header, table)

    @staticmethod
    def _frames(doc: Any, root: dict, ids: FrameIds) -> list[int]:
        """Frame ids of the file's shared frames, in their order (frames with a file keep it and the line)."""
        frames = doc.get(doc.get(root, "shared", "", dict), "frames", "shared", list)
        labels = []
        for i, _ in enumerate(frames):
            frame = doc.get(frames, i, "shared.frames", dict)
            name = doc.get(frame, "name", f"shared.frames[{i}]", str)
            labels.append((name, frame.get("file"), frame.get("line")))
        frame_ids = []
        for name, source, line in labels:
            number = ids[(name, "") if source is None else (f"{name}\x00{source}\x00{line}", "")]
            entry = ids.frames[number]
            if source is not None:
                entry["function"] = name
                entry["source"] = str(source)
                if isinstance(line, int):
                    entry["line"] = line
            frame_ids.append(number)
        return frame_ids

    def _sampled(self, doc: Any, profile: dict, where: str, frame_ids: list[int], prefix: tuple[int, ...],
                 stacks: dict[tuple[int, ...], float]) -> None:
        """Add each sample's weight to its stack."""
        samples = doc.get(profile, "samples", where, list)
        weights = doc.get(profile, "weights", where, list, optional=True, default=[1] * len(samples))
        if len(weights) != len(samples):
            raise doc.fail(f"{where}.weights", f"has {len(weights)} items for {len(samples)} samples")
        for s, sample in enumerate(samples):
            sample = doc.get(samples, s, f"{where}.samples", list)
            weight = doc.get(weights, s, f"{where}.weights", (int, float))
            if weight < 0:
                raise doc.fail(f"{where}.weights[{s}]", f"a negative weight ({weight}): amounts cannot be below 0")
            stack = tuple(self._frame(doc, frame_ids, f, f"{where}.samples[{s}]") for f in reversed(sample))
            stack += prefix
            if stack:
                stacks[stack] = stacks.get(stack, 0) + weight

    def _evented(self, doc: Any, profile: dict, where: str, frame_ids: list[int], prefix: tuple[int, ...],
                 stacks: dict[tuple[int, ...], float]) -> None:
        """Add the time between open and close events to the stack open in it."""
        events = doc.get(profile, "events", where, list)
        open_frames: list[int] = []
        last = doc.get(profile, "startValue", where, (int, float), optional=True, default=None)
        if last is not None and last < 0:
            raise doc.fail(f"{where}.startValue", f"a negative time ({last})")
        for e, _ in enumerate(events):
            event = doc.get(events, e, f"{where}.events", dict)
            at = doc.get(event, "at", f"{where}.events[{e}]", (int, float))
            if at < 0 or (last is not None and at < last):
                raise doc.fail(f"{where}.events[{e}].at", f"a time before the last one ({at} after {last})"
                               if at >= 0 else f"a negative time ({at})")
            what = doc.get(event, "type", f"{where}.events[{e}]", str)
            frame = self._frame(doc, frame_ids, event.get("frame"), f"{where}.events[{e}].frame")
            if e and at < last:  # a frame open for a negative time
                raise doc.fail(f"{where}.events[{e}].at", f"goes back in time ({at!r} after {last!r})")
            if open_frames and last is not None and at > last:
                stack = tuple(reversed(open_frames)) + prefix
                stacks[stack] = stacks.get(stack, 0) + (at - last)
            last = at
            if what == "O":
                open_frames.append(frame)
            elif what == "C":
                if not open_frames or open_frames[-1] != frame:
                    raise doc.fail(f"{where}.events[{e}]", "closes a frame that is not the innermost open one")
                open_frames.pop()
            else:
                raise doc.fail(f"{where}.events[{e}].type", f"expected 'O' or 'C', got '{what}'")
        if open_frames:
            raise doc.fail(f"{where}.events", f"ends with {len(open_frames)} frames still open (truncated?)")

    @staticmethod
    def _frame(doc: Any, frame_ids: list[int], index: Any, where: str) -> int:
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(frame_ids):
            raise doc.fail(where, f"expected a frame number below {len(frame_ids)}, got {index!r}")
        return frame_ids[index]
