"""Writing files for a front end: atomically (temp file, fsync, rename), so nothing is left half-written.

:func:`atomic_write` and :func:`atomic_write_text` keep a file private
(0600) unless given a mode, as the store's own files are; a file the user
asked for with the permissions the umask allows is
:func:`perun_core.api.views.write_output`.
"""

from __future__ import annotations

from ..storage.atomic import atomic_write, atomic_write_text

__all__ = ["atomic_write", "atomic_write_text"]
