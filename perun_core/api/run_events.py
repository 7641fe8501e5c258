"""The typed progress events of running jobs (``collect``, ``run_matrix``), as front ends receive them.

The classes are :mod:`perun_core.events`'; a front end imports them
from here (``from perun_core.api import run_events as ev``) so that it never
reaches into the runner.
"""

from __future__ import annotations

from ..events import *  # noqa: F403 - this module is the runner's event list, re-exported
from ..events import __all__  # noqa: F401
