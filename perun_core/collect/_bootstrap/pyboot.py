"""Runs a Python program under perun's pytrace or pymemory collector.

This file is not part of perun's library: the collectors start it, through
the tiny ``start.py`` next to it (see there why), by its path in the
profiled program's own interpreter::

    python start.py CONFIG -- SCRIPT ARGS...
    python start.py CONFIG -- -m MODULE ARGS...

(``python pyboot.py ...`` works the same, only slower under pymemory.)

It uses only the standard library and runs on Python 3.8 and newer.  It is
long because it must be one file: it runs inside the profiled program's own
interpreter, before and without perun's package, so it cannot import helpers
from modules beside it without putting them on the program's path.  CONFIG
is a JSON file::

    {"mode": "functions" | "cprofile" | "memory",
     "out": directory for the results,
     "functions": [[module glob, qualname glob, size expression or null], ...],
     "clock": "wall" (time.perf_counter_ns) or "cpu" (time.thread_time_ns),
     "interval": seconds between memory snapshots,
     "frames": frames kept per allocation trace,
     "limit": allocation traces kept per snapshot,
     "timeout": seconds after which perun kills the program (optional),
     "deadline": when it does, as time.time() (optional)}

The program runs as ``__main__``, with ``sys.argv`` and ``sys.path[0]`` set
as ``python SCRIPT`` or ``python -m MODULE`` set them.  Results go to the
``out`` directory: ``meta.json`` is written when the interpreter exits
normally (not after ``os._exit`` or a kill) and says how the program ended;
with a timeout, ``hang.txt`` gets the stacks of all threads shortly before
the deadline (faulthandler; see :func:`arm_hang_report`).  Mode
``functions`` also writes ``calls.bin``, a sequence of chunks::

    count (uint32, little-endian), then count records of four float64
    (native byte order, unpadded): function id, caller id, duration in ns,
    size (NaN for none).

Selected functions are wrapped without editing the program's files.  Those
of the main script get a decorator added to its compiled syntax tree, so they
are wrapped before the script's own top-level code can call them; those of
other modules are wrapped right after the module is imported (an import
hook), or at once for modules imported before the program starts.  A glob
matches only functions defined in the module (not ones it imported) and
dunder methods only when the pattern spells ``__``.  Every wrapped call adds
a frame, so the recursion limit is doubled.

Nothing here writes to standard output.  An exception that ends the program
is reported on standard error as Python reports it (without the
bootstrap's frames), and the exit status is 1.
"""

import ast
import atexit
import builtins
import fnmatch
import functools
import json
import math
import operator
import os
import struct
import sys
import threading
import time
import types

FLUSH_EVERY = 1 << 16
HANG_REPORT = "hang.txt"
HOOK_NAME = "__perun_pytrace_wrap__"
THIS_FILE = os.path.abspath(__file__)
START_FILE = os.path.join(os.path.dirname(THIS_FILE), "start.py")
#: the bootstrap's files: their frames are perun's, not the program's
OWN_FILES = frozenset((THIS_FILE, START_FILE))
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_KEPT = []


# -- selected functions -------------------------------------------------------------------

class Selector:
    """Which functions the ``[module glob, qualname glob, size expression]`` patterns select."""

    def __init__(self, patterns):
        self.patterns = [(str(m), str(q), s) for m, q, s in patterns]
        self.matched = [False] * len(self.patterns)

    def module_selected(self, name):
        return any(fnmatch.fnmatchcase(name, pattern) for pattern, _, _ in self.patterns)

    def select(self, module_names, qualname, *, defined_here=True):
        """Index of the first pattern selecting ``qualname`` in one of ``module_names``, or None."""
        last = qualname.rsplit(".", 1)[-1]
        dunder = last.startswith("__") and last.endswith("__")
        for index, (module_glob, qual_glob, _) in enumerate(self.patterns):
            if not any(fnmatch.fnmatchcase(name, module_glob) for name in module_names):
                continue
            literal = not any(char in qual_glob for char in "*?[")
            if not defined_here and not literal:
                continue
            if dunder and "__" not in qual_glob:
                continue
            if fnmatch.fnmatchcase(qualname, qual_glob):
                return index
        return None


class Recorder:
    """Call records of the wrapped functions, written to ``calls.bin`` in chunks.

    ``log`` is a ``bytearray`` of packed records, four float64 per call
    (function id, caller id, duration in ns, size or NaN): a wrapper adds one
    with a single ``extend``, which no other thread can interleave, and the
    buffer is neither a burden for the garbage collector nor large.  It is
    written out every FLUSH_EVERY calls and at exit.
    """

    record = struct.Struct("=dddd")

    def __init__(self, out, main_file, main_name):
        self.log = bytearray()
        self.lock = threading.Lock()
        # unbuffered: a forked child must not inherit half-written records
        self.file = open(os.path.join(out, "calls.bin"), "wb", buffering=0)
        self.pid = os.getpid()
        self.functions = []
        self.function_ids = {}
        self.callers = []
        self.caller_ids = {}
        self.size_errors = {}
        self.calls = 0
        self.main_file = main_file
        self.main_name = main_name
        self.module_files = {}

    def function_id(self, uid):
        fid = self.function_ids.get(uid)
        if fid is None:
            fid = self.function_ids[uid] = len(self.functions)
            self.functions.append(uid)
        return fid

    def caller_id(self, code):
        """The id of a caller's code object (registered on first sight; the hot path looks it up itself)."""
        cid = self.caller_ids.get(code)
        if cid is None:
            cid = self.caller_ids[code] = len(self.callers)
            self.callers.append(self.caller_name(code))
        return cid

    def size_failed(self, fid, reason):
        entry = self.size_errors.get(fid)
        if entry is None:
            self.size_errors[fid] = [1, reason]
        else:
            entry[0] += 1
        return math.nan

    def odd_size(self, fid, value):
        """A size that is not an int or float: a number-like value converted, anything else an error."""
        if isinstance(value, (str, bytes, bool)):
            return self.size_failed(fid, "the size expression gave %s, not a number" % type(value).__name__)
        try:
            return operator.index(value)
        except TypeError:
            pass
        try:
            number = float(value)
        except (TypeError, ValueError):
            return self.size_failed(fid, "the size expression gave %s, not a number" % type(value).__name__)
        return number if math.isfinite(number) else self.size_failed(fid, "the size expression gave %r" % number)

    def module_name(self, filename):
        if filename.startswith("<"):
            return filename
        path = os.path.abspath(filename)
        if path == self.main_file:
            return self.main_name
        name = self.module_files.get(path)
        if name is None:
            for module_name, module in list(sys.modules.items()):
                location = getattr(module, "__file__", None)
                if isinstance(location, str):
                    self.module_files.setdefault(os.path.abspath(location), module_name)
            name = self.module_files.setdefault(path, os.path.splitext(os.path.basename(path))[0] or path)
        return name

    def caller_name(self, code):
        return "%s:%s" % (self.module_name(code.co_filename), getattr(code, "co_qualname", code.co_name))

    def flush(self):
        if os.getpid() != self.pid:
            del self.log[:]  # a forked child: its calls are not ours to write
            return
        if not self.lock.acquire(False):
            return
        try:
            length = len(self.log)
            if not length:
                return
            chunk = bytes(self.log[:length])
            del self.log[:length]
            count = length // self.record.size
            self.file.write(struct.pack("<I", count) + chunk)
            self.calls += count
        finally:
            self.lock.release()

    def close(self):
        self.flush()
        self.file.close()


def make_wrapper(func, fid, size_of, recorder, clock):
    """A function that calls ``func`` and adds one record per call to ``recorder.log``."""
    frame = sys._getframe
    extend = recorder.log.extend
    pack = recorder.record.pack
    log = recorder.log
    flush = recorder.flush
    limit = recorder.record.size * FLUSH_EVERY
    known_callers = recorder.caller_ids.get
    new_caller = recorder.caller_id
    nan = math.nan

    if size_of is None:
        def wrapper(*args, **kwargs):
            code = frame(1).f_code
            caller = known_callers(code)
            if caller is None:
                caller = new_caller(code)
            start = clock()
            try:
                return func(*args, **kwargs)
            finally:
                extend(pack(fid, caller, clock() - start, nan))
                if len(log) >= limit:
                    flush()
    else:
        size_failed = recorder.size_failed
        odd_size = recorder.odd_size

        def wrapper(*args, **kwargs):
            try:
                size = size_of(args, kwargs)
                if size.__class__ is not int and size.__class__ is not float:
                    size = odd_size(fid, size)
            except Exception as exc:  # noqa: BLE001 - reported with the results
                size = size_failed(fid, "%s: %s" % (type(exc).__name__, exc))
            code = frame(1).f_code
            caller = known_callers(code)
            if caller is None:
                caller = new_caller(code)
            start = clock()
            try:
                return func(*args, **kwargs)
            finally:
                extend(pack(fid, caller, clock() - start, size))
                if len(log) >= limit:
                    flush()
    return wrapper


class Tracer:
    """Wraps the selected functions: in the main script's syntax tree and in imported modules."""

    def __init__(self, selector, recorder, cpu_clock=False):
        self.selector = selector
        self.recorder = recorder
        self.clock = time.thread_time_ns if cpu_clock else time.perf_counter_ns
        self.wrapped = {}
        self.size_functions = {}

    def size_function(self, index):
        expression = self.selector.patterns[index][2]
        if not expression:
            return None
        function = self.size_functions.get(expression)
        if function is None:
            function = eval("lambda args, kwargs: (%s)" % expression, {"__builtins__": builtins})  # noqa: S307
            self.size_functions[expression] = function
        return function

    def wrap(self, obj, uid, index):
        if isinstance(obj, (staticmethod, classmethod)):
            inner = self.wrap(obj.__func__, uid, index)
            return obj if inner is obj.__func__ else type(obj)(inner)
        if not callable(obj) or isinstance(obj, type) or hasattr(obj, "__perun_original__"):
            return obj
        known = self.wrapped.get(id(obj))
        if known is not None and known[0] is obj:
            return known[1]
        wrapper = make_wrapper(obj, self.recorder.function_id(uid), self.size_function(index), self.recorder,
                               self.clock)
        try:
            functools.update_wrapper(wrapper, obj)
        except (AttributeError, TypeError):
            pass
        wrapper.__perun_original__ = obj
        self.wrapped[id(obj)] = (obj, wrapper)
        self.selector.matched[index] = True
        return wrapper

    # -- the main script: decorators in the syntax tree ----------------------------------
    def decorate_tree(self, tree, module_names):
        """Put ``@__perun_pytrace_wrap__(index, qualname)`` first on every selected function of ``tree``."""
        def visit(node, scope):
            for child in ast.iter_child_nodes(node):
                if not isinstance(child, _DEFINITIONS):
                    visit(child, scope)
                    continue
                qualname = ".".join(scope + [child.name])
                if not isinstance(child, ast.ClassDef):
                    index = self.selector.select(module_names, qualname)
                    if index is not None:
                        call = ast.Call(func=ast.Name(id=HOOK_NAME, ctx=ast.Load()),
                                        args=[ast.Constant(index), ast.Constant(qualname)], keywords=[])
                        child.decorator_list.insert(0, ast.copy_location(call, child))
                visit(child, scope + [child.name if isinstance(child, ast.ClassDef) else child.name + ".<locals>"])

        visit(tree, [])
        return ast.fix_missing_locations(tree)

    def decorator(self, main_name):
        def hook(index, qualname):
            return lambda obj: self.wrap(obj, "%s:%s" % (main_name, qualname), index)
        return hook

    # -- other modules: wrapped after import ------------------------------------------------
    def patch_module(self, module):
        name = getattr(module, "__name__", None)
        if not isinstance(name, str) or not self.selector.module_selected(name):
            return
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            return
        for attribute, value in list(namespace.items()):
            self._patch(module, name, attribute, attribute, value, 0)

    def _patch(self, owner, module_name, attribute, qualname, value, depth):
        if isinstance(value, type):
            if depth < 4 and getattr(value, "__module__", None) == module_name:
                for member, member_value in list(vars(value).items()):
                    self._patch(value, module_name, member, qualname + "." + member, member_value, depth + 1)
            return
        function = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        if not isinstance(function, types.FunctionType):
            return
        defined_here = getattr(function, "__module__", None) == module_name
        index = self.selector.select((module_name,), qualname, defined_here=defined_here)
        if index is None:
            return
        wrapped = self.wrap(value, "%s:%s" % (module_name, qualname), index)
        if wrapped is not value:
            try:
                setattr(owner, attribute, wrapped)
            except (AttributeError, TypeError):
                pass


class PatchingLoader:
    """Delegates to the real loader; wraps the selected functions once the module ran."""

    def __init__(self, inner, tracer):
        self._inner = inner
        self._tracer = tracer

    def create_module(self, spec):
        create = getattr(self._inner, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):
        self._inner.exec_module(module)
        self._tracer.patch_module(module)

    def __getattr__(self, name):
        return getattr(self._inner, name)


class ImportHook:
    """A meta path finder that gives selected modules a :class:`PatchingLoader`."""

    def __init__(self, tracer):
        self.tracer = tracer

    def find_spec(self, name, path, target=None):
        if not self.tracer.selector.module_selected(name):
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        if isinstance(loader, type) or not hasattr(loader, "__dict__"):
            spec.loader = PatchingLoader(loader, self.tracer)   # a class (frozen modules): wrap it
        elif not getattr(loader.exec_module, "__perun_hook__", False):
            # hook the loader object itself, so the module's __loader__ keeps its real type
            loader.exec_module = self._hooked(loader.exec_module)
        return spec

    def _hooked(self, exec_module):
        tracer = self.tracer

        def hooked(module):
            exec_module(module)
            tracer.patch_module(module)

        hooked.__perun_hook__ = True
        return hooked

    def invalidate_caches(self):
        pass


# -- whole-program profiles ---------------------------------------------------------------

def cprofile_entries(stats):
    """cProfile's stats as ``[file, line, name, primitive calls, calls, tt, ct, callers]`` rows.

    Entries of this file and the builtins only this file called (exec,
    disable) are left out, and so are edges from them.  ``callers`` holds
    ``[index of the caller, calls, primitive calls, tt, ct]`` (cProfile's order for edges).
    """
    dropped = {key for key in stats if key[0] in OWN_FILES}
    for key, (_, _, _, _, callers) in stats.items():
        if key[0] == "~" and set(callers) <= dropped:
            dropped.add(key)
    kept = [key for key in stats if key not in dropped]
    index = {key: number for number, key in enumerate(kept)}
    rows = []
    for key in kept:
        cc, nc, tt, ct, callers = stats[key]
        edges = [[index[caller]] + list(numbers) for caller, numbers in callers.items() if caller in index]
        rows.append([key[0], key[1], key[2], cc, nc, tt, ct, edges])
    return rows


class MemorySampler:
    """tracemalloc snapshots grouped by allocation trace, taken by a thread within a time budget.

    A snapshot copies and walks every live trace (one per live block), so it
    costs time in proportion to the number of live objects, and the program
    is held up meanwhile.  Hence:

    * the wait after a snapshot is at least BUDGET times the CPU time the
      snapshot took, so snapshotting takes at most about 1/BUDGET of the
      run (CPU time: on a busy machine the wall time also counts what
      other processes ran meanwhile, and the wait would skip the moment
      the snapshots are for);
      ``interval`` is the wait when snapshots are cheap;
    * every POLL seconds the thread reads tracemalloc's cheap counters and,
      when traced memory stands PEAK_GROWTH above the most any snapshot saw
      (and at least PEAK_BYTES more) and has stopped growing fast, takes a
      snapshot at once if the budget allows it (so the snapshot of the
      program's largest state is not left to chance);
    * one more is taken when the program ends: tracing stops right after
      taking it, so grouping it costs no tracing.

    Every allocation made while tracing costs a traceback, so grouping
    allocates as little as it can.  The blocks it allocates would count as
    the program's memory: after each snapshot tracemalloc's peak is reset
    (Python 3.9+) and the peak reported is the largest measured outside
    the snapshots.
    """

    BUDGET = 10
    POLL = 0.01
    PEAK_GROWTH = 1.2
    PEAK_BYTES = 256 * 1024
    STILL_GROWING = 1.02    # traced memory up by more than this factor since the last poll

    def __init__(self, interval, frames, limit, entry_files):
        import tracemalloc

        self.tracemalloc = tracemalloc
        self.pid = os.getpid()
        self.entry_files = set(entry_files)
        self.interval = interval
        self.poll = min(interval, self.POLL)
        self.limit = limit
        self.snapshots = []
        self.files = []
        self.file_ids = {}
        self.lock = threading.Lock()
        self.stopped = False
        self.peak = 0           # the program's traced peak, without the snapshots' own blocks
        self.high = 0           # the most traced memory any snapshot saw
        self.earliest = 0.0     # no snapshot before this (perf_counter): the budget
        self.due = float("inf")     # the next regular snapshot (none until tracing started)
        self.started = time.perf_counter()      # set again once tracing started
        # traces through these files are the sampler's own (tracemalloc's Filter is too slow for this)
        self.own_files = set(OWN_FILES) | {tracemalloc.__file__}
        # the thread starts before tracing does, so its own start-up is not traced
        ready = threading.Event()
        self.thread = threading.Thread(target=self._loop, args=(ready,), name="perun-pymemory", daemon=True)
        self.thread.start()
        ready.wait()
        tracemalloc.start(frames)
        self.started = time.perf_counter()
        self.due = self.started + interval

    def _loop(self, ready):
        ready.set()
        traced = self.tracemalloc.get_traced_memory
        clock = time.perf_counter
        sleep = time.sleep
        previous = 0
        while True:
            sleep(self.poll)    # not Event.wait: that allocates on every call
            if self.stopped:
                return
            now = clock()
            current = traced()[0]
            if now >= self.earliest and (
                    now >= self.due
                    or (current >= self.high * self.PEAK_GROWTH and current - self.high >= self.PEAK_BYTES
                        and current <= previous * self.STILL_GROWING)):
                self.take(False)
                current = traced()[0]
            previous = current

    def _file_id(self, filename):
        number = self.file_ids.get(filename)
        if number is None:
            number = self.file_ids[filename] = len(self.files)
            self.files.append(filename)
        return number

    def _program_frames(self, frames):
        """The program's part of a trace (oldest first), innermost first; None for this file's allocations.

        The program runs under the bootstrap's frames: they are cut off, and
        a trace whose next frame is not the program's entry, or that passes
        through the bootstrap again (the snapshot thread), is not the program's.
        """
        start = 0
        while start < len(frames) and frames[start][0] in OWN_FILES:
            start += 1
        if start and (start == len(frames) or frames[start][0] not in self.entry_files):
            return None
        if any(name in self.own_files for name, _ in frames[start:]):
            return None
        kept = frames[start:]
        kept.reverse()
        return kept

    @staticmethod
    def _by_trace(snapshot):
        """``{frames (most recent first): [bytes, blocks]}`` of a snapshot."""
        raw = getattr(getattr(snapshot, "traces", None), "_traces", None)
        if isinstance(raw, (list, tuple)):
            # CPython's raw (domain, size, frames, ...) tuples, far faster than Statistic objects.  The
            # sizes of a trace go into a list: appending allocates (and so traces) only now and then,
            # where summing as we go would allocate an int for every block
            sizes_of = {}
            get = sizes_of.get
            for trace in raw:
                sizes = get(trace[2])
                if sizes is None:
                    sizes_of[trace[2]] = [trace[1]]
                else:
                    sizes.append(trace[1])
            return {frames: [sum(sizes), len(sizes)] for frames, sizes in sizes_of.items()}
        totals = {}
        for statistic in snapshot.statistics("traceback"):
            frames = tuple((frame.filename, frame.lineno) for frame in statistic.traceback)
            totals[frames[::-1]] = [statistic.size, statistic.count]
        return totals

    def take(self, final):
        """Take a snapshot (the last one when ``final``: tracing stops after it)."""
        tracemalloc = self.tracemalloc
        with self.lock:
            if not tracemalloc.is_tracing():
                return
            began = time.perf_counter()
            began_cpu = time.thread_time()
            current, peak = tracemalloc.get_traced_memory()
            self.peak = max(self.peak, peak)
            snapshot = tracemalloc.take_snapshot()
            if final:
                tracemalloc.stop()
            totals = self._by_trace(snapshot)
            snapshot = None
            groups = []
            for frames, (size, count) in totals.items():
                frames = self._program_frames(list(reversed(frames)))
                if frames:
                    groups.append([size, count, [[self._file_id(name), line] for name, line in frames]])
            totals = None
            groups.sort(key=lambda group: -group[0])
            rest = groups[self.limit:]
            self.snapshots.append({
                "time": began - self.started, "current": current, "peak": self.peak, "final": final,
                "groups": groups[:self.limit],
                "omitted": [len(rest), sum(group[0] for group in rest)],
            })
            groups = rest = None
            reset_peak = getattr(tracemalloc, "reset_peak", None)      # Python 3.9+
            if not final and reset_peak is not None:
                reset_peak()
            ended = time.perf_counter()
            self.high = max(self.high, current)
            self.earliest = ended + self.BUDGET * (time.thread_time() - began_cpu)
            self.due = max(ended + self.interval, self.earliest)

    def stop(self):
        """Stop the thread and take the final snapshot (in a forked child: only stop tracing)."""
        self.stopped = True
        if os.getpid() != self.pid:
            self.tracemalloc.stop()
            return
        if self.thread.is_alive() and self.thread is not threading.current_thread():
            self.thread.join()
        self.take(True)
        self.tracemalloc.stop()


# -- running the target -------------------------------------------------------------------

def arm_hang_report(config):
    """Have faulthandler write every thread's stack to ``hang.txt`` shortly before perun's timeout kills us.

    ``config["deadline"]`` is when perun kills the program (``time.time()``),
    ``config["timeout"]`` the timeout it was computed from.  The stacks are
    written by faulthandler's own thread, so even a program stuck in C code
    holding the GIL gets them; the collector filters out the bootstrap's
    frames and shows the rest.  Returns the open file, or None without a
    timeout (or when the deadline already passed).
    """
    deadline, timeout = config.get("deadline"), config.get("timeout")
    if not deadline or not timeout:
        return None
    import faulthandler

    remaining = float(deadline) - time.time()
    margin = min(1.0, max(0.05, 0.1 * float(timeout)))
    delay = max(remaining - margin, remaining / 2)
    if delay <= 0:
        return None
    handle = open(os.path.join(config["out"], HANG_REPORT), "w")
    faulthandler.dump_traceback_later(delay, exit=False, file=handle)
    ends = time.time() + delay

    # faulthandler's watchdog is a thread: a child forked while it runs has its lock but not the thread,
    # and then waits for it for ever when it exits.  So the watchdog stops for the moment of every fork
    # and goes on in the parent with the time it had left; the child has none.
    def pause():
        faulthandler.cancel_dump_traceback_later()

    def resume():
        left = ends - time.time()
        if left > 0 and not handle.closed:
            faulthandler.dump_traceback_later(left, exit=False, file=handle)

    if hasattr(os, "register_at_fork"):
        os.register_at_fork(before=pause, after_in_parent=resume)
    return handle


class Session:
    """One run of the target: how it ended, and writing the results at exit."""

    def __init__(self, config):
        self.pid = os.getpid()
        self.config = config
        self.out = config["out"]
        self.mode = config.get("mode", "cprofile")
        self.started = None
        self.elapsed_ns = None
        self.ending = {"status": "not started"}
        self.recorder = None
        self.selector = None
        self.profiler = None
        self.memory = None
        self.hang_report = None

    def start(self, entry_file):
        self.hang_report = arm_hang_report(self.config)
        if self.mode == "cprofile":
            import cProfile

            self.profiler = cProfile.Profile()
        elif self.mode == "memory":
            import runpy

            self.memory = MemorySampler(float(self.config.get("interval", 0.1)), int(self.config.get("frames", 16)),
                                        int(self.config.get("limit", 1000)),
                                        (entry_file, "<frozen runpy>", getattr(runpy, "__file__", "")))
        self.started = time.perf_counter_ns()
        if self.profiler is not None:
            self.profiler.enable()

    def ended(self, status, **details):
        if self.profiler is not None:
            self.profiler.disable()
        if self.started is not None and self.elapsed_ns is None:
            self.elapsed_ns = time.perf_counter_ns() - self.started
        self.ending = dict(details, status=status)
        if self.memory is not None:
            self.memory.stop()

    def finish(self):
        """Write ``meta.json`` (registered with atexit, after the program's own handlers)."""
        if os.getpid() != self.pid:
            return  # a forked child of the program: the results are the parent's to write
        if self.hang_report is not None:
            import faulthandler

            faulthandler.cancel_dump_traceback_later()
            self.hang_report.close()
        meta = {"version": 1, "mode": self.mode, "python": sys.version.split()[0], "elapsed_ns": self.elapsed_ns,
                "pid": os.getpid()}
        meta.update(self.ending)
        if self.recorder is not None:
            self.recorder.close()
            meta.update(functions=self.recorder.functions, callers=self.recorder.callers,
                        calls=self.recorder.calls,
                        size_errors={str(k): v for k, v in self.recorder.size_errors.items()})
        if self.selector is not None:
            meta["unmatched"] = [":".join(p[:2]) for p, hit in zip(self.selector.patterns, self.selector.matched)
                                 if not hit]
        if self.profiler is not None:
            self.profiler.create_stats()
            meta["cprofile"] = cprofile_entries(self.profiler.stats)
        if self.memory is not None:
            meta.update(files=self.memory.files, snapshots=self.memory.snapshots)
        temporary = os.path.join(self.out, "meta.json.tmp")
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(meta, handle, separators=(",", ":"))
        os.replace(temporary, os.path.join(self.out, "meta.json"))


def _complain(message):
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
    raise SystemExit(2)


def _read_source(path):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        _complain("%s: can't open file %r: [Errno %s] %s" % (sys.executable, path, exc.errno, exc.strerror))


def prepare_target(target, tracer):
    """(module, code or None, runner) for ``target``; the module becomes ``__main__``."""
    import importlib.util

    module = types.ModuleType("__main__")
    module.__builtins__ = builtins
    bootstrap_first = bool(sys.path) and os.path.abspath(sys.path[0] or ".") == os.path.dirname(THIS_FILE)
    if target[0] == "-m":
        if len(target) < 2:
            _complain("Argument expected for the -m option")
        name = target[1]
        if bootstrap_first:
            sys.path[0] = os.getcwd()
        try:
            spec = importlib.util.find_spec(name)
            if spec is not None and spec.submodule_search_locations is not None:
                spec = importlib.util.find_spec(name + ".__main__")
        except (ImportError, ValueError) as exc:
            _complain("%s: Error while finding module specification for %r (%s: %s)"
                      % (sys.executable, name, type(exc).__name__, exc))
        if spec is None or spec.loader is None:
            _complain("%s: No module named %s" % (sys.executable, name))
        filename = spec.origin or name
        module.__dict__.update(__file__=filename, __cached__=spec.cached, __loader__=spec.loader,
                               __package__=spec.parent, __spec__=spec)
        sys.argv = [filename] + list(target[2:])
        source = None
        if tracer is not None and hasattr(spec.loader, "get_source"):
            source = spec.loader.get_source(spec.name)
        code = None
        if source is not None:
            tree = ast.parse(source, filename=filename)
            code = compile(tracer.decorate_tree(tree, ("__main__", name, spec.name)), filename, "exec",
                           dont_inherit=True)
        else:
            code = spec.loader.get_code(spec.name)
        return module, code, name
    script = target[0]
    path = os.path.abspath(script)
    if bootstrap_first:
        sys.path[0] = os.path.dirname(path)
    sys.argv = list(target)
    if os.path.isdir(path) or (os.path.isfile(path) and _is_zip(path)):
        return module, None, path
    source = _read_source(path)
    from importlib.machinery import SourceFileLoader

    module.__dict__.update(__file__=path, __cached__=None, __package__=None, __spec__=None,
                           __loader__=SourceFileLoader("__main__", path))
    stem = os.path.splitext(os.path.basename(path))[0]
    tree = ast.parse(source, filename=path)
    if tracer is not None:
        tree = tracer.decorate_tree(tree, ("__main__", stem))
    return module, compile(tree, path, "exec", dont_inherit=True), path


def _is_zip(path):
    import zipfile

    return zipfile.is_zipfile(path)


def _trim(exc, depth=0):
    """Take this file's frames (the runner, the wrappers) out of the tracebacks of ``exc`` and its chain."""
    if exc is None or depth > 20:
        return
    kept = []
    traceback = exc.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code.co_filename not in OWN_FILES:
            kept.append(traceback)
        traceback = traceback.tb_next
    for entry, following in zip(kept, kept[1:] + [None]):
        entry.tb_next = following
    exc.__traceback__ = kept[0] if kept else None
    _trim(exc.__cause__, depth + 1)
    _trim(exc.__context__, depth + 1)


def prepare(arguments=None):
    """Read the config, set up the session and the target: (session, module, code, where) for :func:`run`.

    ``code`` is None for a directory or zip file (``where``), run by
    :func:`run_path`.  The session starts last, when nothing but running
    the code is left.
    """
    if __name__ == "pyboot":    # imported by start.py: out of the way of a program's own module "pyboot"
        sys.modules["_perun_pyboot"] = sys.modules.pop(__name__)
    if arguments is None:
        arguments = sys.argv[1:]
    if len(arguments) < 3 or arguments[1] != "--":
        _complain("usage: start.py CONFIG -- (SCRIPT | -m MODULE) [ARGS...]")
    with open(arguments[0], encoding="utf-8") as handle:
        config = json.load(handle)
    target = arguments[2:]
    session = Session(config)
    atexit.register(session.finish)
    tracer = None
    if session.mode == "functions":
        main_file = os.path.abspath(target[0]) if target[0] != "-m" else ""
        main_name = target[1] if target[0] == "-m" else os.path.splitext(os.path.basename(main_file))[0]
        session.selector = Selector(config.get("functions") or [])
        session.recorder = Recorder(session.out, main_file, main_name)
        tracer = Tracer(session.selector, session.recorder, config.get("clock") == "cpu")
        setattr(builtins, HOOK_NAME, tracer.decorator(main_name))
        # every wrapped call adds a frame: keep the program's room for recursion
        sys.setrecursionlimit(2 * sys.getrecursionlimit())
        sys.meta_path.insert(0, ImportHook(tracer))
        for name, module in list(sys.modules.items()):
            if module is not None and name != "__main__":
                tracer.patch_module(module)
    module, code, where = prepare_target(target, tracer)
    if code is not None and tracer is not None and target[0] == "-m":
        session.recorder.main_file = os.path.abspath(module.__file__)
    # the bootstrap's own module stays referenced while the program runs as __main__
    _KEPT.append(sys.modules.get("__main__"))
    sys.modules["__main__"] = module
    session.start(code.co_filename if code is not None else "<frozen runpy>")
    return session, module, code, where


def run(session, module, code, where):
    """Run the program; exit as ``python`` would (``start.py`` does the same in its own frame)."""
    try:
        if code is not None:
            exec(code, module.__dict__)  # noqa: S102 - running the profiled program is the point
        else:
            run_path(where)
    except BaseException as exc:  # noqa: BLE001 - reported like Python would
        raise program_raised(session, exc) from None
    session.ended("ok")


def program_raised(session, exc):
    """Record that the program ended by ``exc``; return the exception that exits as ``python`` would.

    That is ``exc`` itself for SystemExit and KeyboardInterrupt; for any
    other exception the traceback is printed (without the bootstrap's
    frames) and SystemExit(1) returned.
    """
    if isinstance(exc, SystemExit):
        code = exc.code
        session.ended("exit", exit_code=code if isinstance(code, int) or code is None else 1)
        return exc
    if isinstance(exc, KeyboardInterrupt):
        session.ended("interrupted")
        return exc
    text = str(exc).strip().splitlines()
    summary = type(exc).__name__ + (": " + text[0][:300] if text else "")
    session.ended("raised", exception=summary)
    _trim(exc)
    sys.excepthook(type(exc), exc, exc.__traceback__)
    return SystemExit(1)


def run_path(where):
    """Run a directory or zip file with a ``__main__`` module."""
    import runpy

    runpy.run_path(where, run_name="__main__")


def main(arguments=None):
    """Run the program ``arguments`` (default: ``sys.argv[1:]``) name: ``CONFIG -- TARGET...``."""
    run(*prepare(arguments))


if __name__ == "__main__":
    main()
