"""The typed progress events of degradation checks (``check_head``, ``check_all``, ``check_profiles``).

The classes are :mod:`perun_core.check.events`'; front ends import them from
here so that they never reach into the check engine.
"""

from __future__ import annotations

from ..check.events import *  # noqa: F403 - this module is the check engine's event list, re-exported
from ..check.events import __all__  # noqa: F401
