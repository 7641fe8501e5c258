"""The built-in detection methods, one module each (see :mod:`perun_core.check`)."""
