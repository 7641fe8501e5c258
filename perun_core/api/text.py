"""Text from profiles, made safe for terminals (front ends escape what they did not write), measured values as text,
and advice naming its settings in the words of a front end."""

from __future__ import annotations

from ..advice import in_words_of
from ..amounts import amount_scale, format_amount, format_change, format_percent, nice_ticks, relative_change
from ..safetext import drop_controls, escape_controls, escape_lines, escape_output, has_controls, json_bytes_safe

__all__ = ["amount_scale", "drop_controls", "escape_controls", "escape_lines", "escape_output", "format_amount",
           "format_change", "format_percent", "has_controls", "in_words_of", "json_bytes_safe", "nice_ticks", "relative_change"]
