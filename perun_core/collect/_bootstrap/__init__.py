"""Scripts that run *inside* a profiled Python program, not in perun.

perun never imports them: the pytrace and pymemory collectors start
``start.py``, which runs ``pyboot.py``, by its path with the interpreter of
the profiled program.
"""
