"""The terminal driver of the low-bandwidth mode: textual's, sending less.

textual's driver asks the terminal for every mouse motion (any-event
tracking, mode 1003): over an ssh link each move of the mouse across the
window then sends reports up and hover redraws back.  This driver asks only
for presses, releases and the wheel (mode 1000, in SGR coordinates), so
clicks and scrolling still work and a resting hand sends nothing.

It also drops the style sequences that change nothing (:class:`StyleCompactor`):
textual ends every run of text with a reset and starts the next with its
whole style, so a row of cells in one style is sent as a reset and the same
style again and again.
"""

from __future__ import annotations

import re

from textual.drivers.linux_driver import LinuxDriver

#: a control sequence with plain numeric parameters: ``ESC [ params final``
_CSI = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])")


class StyleCompactor:
    """Rewrites terminal output without the style (SGR) sequences that change nothing.

    It keeps the style in effect, as far as it knows it: a reset followed
    (after nothing but cursor positioning) by the very style in effect
    before the reset is dropped; another style after a reset is sent as one
    sequence (``ESC[0;...m``); a reset that would restore what is in effect
    is not sent.  Whatever it does not understand (other sequences, a stray
    escape) is passed on unchanged after any reset held back, and makes the
    style unknown, so nothing is ever dropped on a guess.  At the end of
    each write the terminal is in the state the original text left it in.
    """

    def __init__(self) -> None:
        #: the parameters of the style in effect since the last reset, "" for none, None when unknown
        self.active: str | None = None
        self.reset_held = False

    def _release(self, out: list[str]) -> None:
        if self.reset_held:
            if self.active != "":
                out.append("\x1b[0m")
            self.active = ""
            self.reset_held = False

    def __call__(self, data: str) -> str:
        out: list[str] = []
        position = 0
        for match in _CSI.finditer(data):
            self._text(data[position:match.start()], out)
            position = match.end()
            params, final = match.groups()
            if final == "m" and params in ("", "0"):
                self.reset_held = True
            elif final == "m" and not params.startswith("?"):
                if self.reset_held:
                    self.reset_held = False
                    if params != self.active:
                        out.append(f"\x1b[0;{params}m")
                        self.active = params
                else:
                    out.append(match.group(0))
                    # from no style it is exactly this one; added to another, what is in effect is unknown
                    self.active = params if self.active == "" else None
            elif final == "H":
                out.append(match.group(0))  # moving the cursor neither uses nor changes the style
            else:
                self._release(out)  # erasing paints with the style in effect
                out.append(match.group(0))
        self._text(data[position:], out)
        self._release(out)
        return "".join(out)

    def _text(self, text: str, out: list[str]) -> None:
        if not text:
            return
        self._release(out)
        out.append(text)
        if "\x1b" in text:  # a sequence this class does not parse: it may have changed the style
            self.active = None


class LowBandwidthDriver(LinuxDriver):
    """The Linux driver with mouse clicks and the wheel but no motion tracking, and compact styles."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._compact = StyleCompactor()

    def write(self, data: str) -> None:
        super().write(self._compact(data))

    def _enable_mouse_support(self) -> None:
        if not self._mouse:
            return
        self.write("\x1b[?1000h")  # presses, releases and the wheel
        self.write("\x1b[?1015h")  # urxvt coordinates (for terminals without the next one)
        self.write("\x1b[?1006h")  # SGR coordinates
        self.flush()
