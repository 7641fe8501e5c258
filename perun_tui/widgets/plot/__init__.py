"""The plot pane's widgets: a picture of a view's model, drawn in a worker at the widget's size.

:class:`~.picture.PictureWidget` is the common part (drawing off the UI
thread, the picture cache, the old picture kept until the new is ready);
:class:`~.chart.ChartView` shows scatter, bars and flow as the plotting
adapter draws them, :class:`~.flame.FlameView` and :class:`~.heap.HeapView`
draw the flame graph and the heap map from the layouts of perun_core's
views, with a cursor.  The screen is :mod:`perun_tui.screens.plot`.
"""

from __future__ import annotations

from .chart import ChartView
from .flame import FlameView
from .heap import HeapView
from .picture import VIEW_LABELS, VIEW_PHRASES, VIEWS, PictureWidget
from .title import MiddleTitle

__all__ = ["MiddleTitle", "VIEWS", "VIEW_LABELS", "VIEW_PHRASES", "ChartView", "FlameView", "HeapView", "PictureWidget"]
