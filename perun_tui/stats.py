"""Summary statistics of a profile for the details screen: computed by :func:`perun_core.api.summary`.

The core keeps numbers with their units (a time profile's seconds and bytes
are summarised apart); this module only gives the details screen its names.
numpy is imported only when a summary is computed (in a worker thread), so
starting the app stays quick.
"""

from __future__ import annotations

from perun_core.api import FieldStats, ModelRow, ProfileSummary
from perun_core.api import short_number as format_number
from perun_core.api import summary as summarize

__all__ = ["FieldStats", "ModelRow", "ProfileSummary", "format_number", "summarize"]
