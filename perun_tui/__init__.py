"""perun-tui: the full-screen terminal front end of perun, built on Textual.

It reaches the core only through :mod:`perun_core.api` (and the dataclasses
that API returns), exactly like the ``perun-core`` command line.
"""
