"""Run a Python script and count how often each of its arcs (line to line, so each branch taken) runs.

The fuzzer's hit-count guidance starts this file by path in the child
interpreter, in place of the script::

    python [options] hittrace.py COUNTS SCRIPT [ARGS...]

It runs SCRIPT as ``__main__`` (a fresh module) with ``sys.argv = [SCRIPT, *ARGS]`` and its
directory first on ``sys.path`` (as ``python SCRIPT`` would), and when the
script ends, however it ends short of ``os._exit``, writes one line per arc
to COUNTS: ``count<TAB>file<TAB>from-line<TAB>to-line`` (from-line 0 is the
entry to a function).  Code of the standard library and the interpreter's
frozen modules is not counted (their arcs say nothing about the program, and
tracing them costs most); installed packages are.  Only the standard library
is used here: the child may run with ``-S`` or in another environment.
"""

import os
import sys
import threading


def _counted(filename, stdlib):
    if filename.startswith("<") or filename == __file__:
        return False
    if filename.startswith(stdlib):
        return "-packages" in filename  # site- or dist-packages under the standard library's directory
    return True


def _tracer(counts, stdlib):
    decided = {}

    def on_call(frame, event, arg):
        code = frame.f_code
        wanted = decided.get(code.co_filename)
        if wanted is None:
            wanted = decided[code.co_filename] = _counted(code.co_filename, stdlib)
        if not wanted:
            return None
        filename = code.co_filename
        previous = 0

        def on_line(frame, event, arg):
            nonlocal previous
            if event == "line":
                line = frame.f_lineno
                key = (filename, previous, line)
                counts[key] = counts.get(key, 0) + 1
                previous = line
            return on_line

        return on_line

    return on_call


def _write(path, counts):
    partial = path + ".part"
    with open(partial, "w", encoding="utf-8", errors="surrogateescape") as handle:
        for (filename, start, end), count in counts.items():
            handle.write(f"{count}\t{filename}\t{start}\t{end}\n")
    os.replace(partial, path)


def main():
    if len(sys.argv) < 3:
        sys.stderr.write("usage: hittrace.py COUNTS SCRIPT [ARGS...]\n")
        return 2
    out, script = sys.argv[1], sys.argv[2]
    sys.argv = sys.argv[2:]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    counts = {}
    tracer = _tracer(counts, os.path.dirname(os.__file__) + os.sep)
    threading.settrace(tracer)
    sys.settrace(tracer)
    with open(script, "rb") as handle:
        code = compile(handle.read(), script, "exec")
    # a fresh __main__ (runpy would do the same, but importing it costs more than most runs of a small script)
    main_module = type(sys)("__main__")
    main_module.__file__ = script
    main_module.__builtins__ = __builtins__
    sys.modules["__main__"] = main_module
    try:
        exec(code, main_module.__dict__)
    finally:
        sys.settrace(None)
        threading.settrace(None)
        _write(out, counts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
