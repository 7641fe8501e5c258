"""The terminal driver of the low-bandwidth mode: textual's, without mouse motion reports.

textual's driver asks the terminal for every mouse motion (any-event
tracking, mode 1003): over an ssh link each move of the mouse across the
window then sends reports up and hover redraws back.  This driver asks only
for presses, releases and the wheel (mode 1000, in SGR coordinates), so
clicks and scrolling still work and a resting hand sends nothing.
"""

from __future__ import annotations

from textual.drivers.linux_driver import LinuxDriver


class LowBandwidthDriver(LinuxDriver):
    """The Linux driver with mouse clicks and the wheel but no motion tracking."""

    def _enable_mouse_support(self) -> None:
        if not self._mouse:
            return
        self.write("\x1b[?1000h")  # presses, releases and the wheel
        self.write("\x1b[?1015h")  # urxvt coordinates (for terminals without the next one)
        self.write("\x1b[?1006h")  # SGR coordinates
        self.flush()
