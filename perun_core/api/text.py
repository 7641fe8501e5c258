"""Text from profiles, made safe for terminals (front ends escape what they did not write), and measured values as text."""

from __future__ import annotations

from ..amounts import (amount_scale, format_amount, format_change, format_percent, nice_ticks, relative_change,
                       wrap_text)
from ..safetext import drop_controls, escape_controls, escape_lines, escape_output, has_controls, json_bytes_safe

__all__ = ["amount_scale", "drop_controls", "escape_controls", "escape_lines", "escape_output", "format_amount",
           "format_change", "format_percent", "has_controls", "json_bytes_safe", "nice_ticks", "relative_change", "wrap_text"]
