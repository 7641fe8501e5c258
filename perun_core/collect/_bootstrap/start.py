"""Starts pyboot.py: ``python start.py CONFIG -- (SCRIPT | -m MODULE) [ARGS...]``.

The collectors run this file and not pyboot.py for pymemory's sake: this
frame lies under the program's frames all the time, and tracemalloc walks
every frame of the stack and looks up its line (scanning its code from the
start) for every allocation.  So the program runs right here, in the one
frame it cannot do without, a few instructions into a short module, where
running it in pyboot.py would add three frames (``main``, ``run`` and a
long module) and make every allocation about 1.7 times as dear.  What this
does is :func:`pyboot.run`.
"""

if __name__ == "__main__":
    import pyboot

    session, module, code, where = pyboot.prepare()
    try:
        if code is not None:
            exec(code, module.__dict__)  # noqa: S102 - running the profiled program is the point
        else:
            pyboot.run_path(where)
    except BaseException as exc:  # noqa: BLE001 - reported like Python would
        raise pyboot.program_raised(session, exc) from None
    session.ended("ok")
