"""perun-tui: the full-screen terminal front end of perun, built on Textual.

It reaches the core only through its porcelain (:mod:`perun_core.api`,
``api_run``, ``api_check``, the views and the configuration) and the
dataclasses those return, exactly like the ``perun-core`` command line; every
such call goes through :mod:`perun_tui.core`.
"""
