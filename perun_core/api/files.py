"""Writing files for a front end: atomically (temp file, fsync, rename), so nothing is left half-written.

A file the user names on a command line (a report, a plot) goes through
:func:`write_user_file`: refused up front when its directory is missing or
not writable (:func:`ensure_writable_target`), never creating directories,
with the permissions the umask allows.  :func:`atomic_write` and
:func:`atomic_write_text` are the store's own primitives; a front end calls
:func:`write_deferred` when a command has succeeded, to keep the caches it
learnt, inside the :func:`command_scope` its command runs in (a failed
command changes no file).
"""

from __future__ import annotations

from ..atomic import (atomic_write, atomic_write_text, command_scope, ensure_writable_directory, ensure_writable_target,
                      write_deferred, write_user_file)

__all__ = ["atomic_write", "atomic_write_text", "command_scope", "ensure_writable_directory", "ensure_writable_target",
           "write_deferred", "write_user_file"]
