"""perun-tui: the full-screen terminal front end of perun, built on Textual.

It reaches the core only through its porcelain (:mod:`perun_core.api`),
:mod:`perun_core.errors`, :mod:`perun_core.params` and the dataclasses the
porcelain returns, exactly like the ``perun-core`` command line (a test,
tests/test_layers.py, holds both to it); every call goes through
:mod:`perun_tui.core`.  ``screens/`` holds the full screens, ``modals/``
the dialogs, ``widgets/`` their parts by pane.
"""
