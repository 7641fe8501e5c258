"""Files the user names on a command line: checked before the work, written atomically."""

from __future__ import annotations

from ..atomic import ensure_writable_target, write_user_file

__all__ = ["ensure_writable_target", "write_user_file"]
