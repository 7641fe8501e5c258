"""Text from profiles, made safe for terminals (front ends escape what they did not write)."""

from __future__ import annotations

from ..safetext import drop_controls, escape_controls, escape_lines, escape_output, has_controls

__all__ = ["drop_controls", "escape_controls", "escape_lines", "escape_output", "has_controls"]
