"""perun_core: the headless core of the perun performance version system.

Nothing here prints, exits or imports a UI toolkit; front ends call
:mod:`perun_core.api` and render what it returns.
"""

__version__ = "0.1.0"
