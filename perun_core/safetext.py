"""Text from profiles and file names made safe to print on a terminal.

A profile's command, a uid or a pending file name is data from somewhere
else: an escape sequence in it could retitle the terminal, move the cursor
or fake table rows.  Every front end passes such text through
:func:`escape_controls` before it reaches the screen.
"""

from __future__ import annotations

import re

# C0 controls (but tab), DEL, C1 controls, lone surrogates (which a
# terminal cannot show and an encoder refuses) and the noncharacters U+FFFE
# and U+FFFF (which XML 1.0 forbids, so a JUnit report holding one is invalid)
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\x1b": "\\e"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    """``text`` with control characters and lone surrogates written as visible escapes (``\\e``, ``\\x07``).

    What comes out is also a valid XML 1.0 character sequence (tab is the only control left).
    """
    if not isinstance(text, str):
        text = str(text)
    return _UNSAFE.sub(_escape, text)


def drop_controls(text: str) -> str:
    """``text`` without its control characters: for text already laid out in terminal cells.

    Control characters take no cell, so dropping them keeps every column
    where it was, where a visible escape would push the rest of the line
    out of its box; a lone surrogate or a noncharacter took one cell and
    becomes U+FFFD.  The TUI's last line of defence: what its panes show
    was escaped with :func:`escape_controls` before it was laid out.
    """
    return _UNSAFE.sub(lambda m: "\ufffd" if m.group() >= "\ud800" else "", text)


def has_controls(text: str) -> bool:
    """Whether :func:`escape_controls` would change ``text``."""
    return _UNSAFE.search(text) is not None


def json_text_safe(text: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with DEL, C1 controls and lone surrogates as ``\\uXXXX``.

    json escapes C0 controls itself; the others would reach a terminal raw
    (or fail to encode), and ``\\uXXXX`` keeps the document valid and equal.
    """
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_JSON_UNSAFE = re.compile("[\x7f-\x9f\ud800-\udfff]")
#: DEL and the C1 controls in UTF-8 (0xC2 is only ever a lead byte, so a match is always one of them)
_JSON_UNSAFE_UTF8 = re.compile(b"\x7f|\xc2[\x80-\x9f]")


def json_bytes_safe(data: bytes) -> bytes:
    """UTF-8 JSON text with DEL and C1 controls as ``\\uXXXX``, as :func:`json_text_safe` does for a str."""
    if _JSON_UNSAFE_UTF8.search(data) is None:
        return data
    return _JSON_UNSAFE_UTF8.sub(lambda m: b"\\u%04x" % ord(m.group().decode("utf-8")), data)


def escape_lines(text: str) -> str:
    """:func:`escape_controls` line by line: the line breaks of a multi-line text we wrote stay."""
    return "\n".join(escape_controls(line) for line in str(text).split("\n"))


#: the colour escapes our views write (SGR: ESC [ numbers m); nothing else they write is a control character
_SGR = re.compile("\x1b\\[[0-9;:]*m")


def escape_output(text: str, *, keep_colour: bool = False) -> str:
    """A rendered view or report made safe as a whole: every control character escaped but line breaks and tabs.

    Views escape the names they print; this is the net below them, applied
    once to everything a view renders, so a label one of them misses (a
    frame name in an icicle, a uid cut by a column) still cannot act on the
    terminal.  With ``keep_colour`` the SGR colour sequences stay.
    """
    if not keep_colour:
        return escape_lines(text)
    pieces: list[str] = []
    last = 0
    for match in _SGR.finditer(text):
        pieces.append(escape_lines(text[last:match.start()]))
        pieces.append(match.group())
        last = match.end()
    pieces.append(escape_lines(text[last:]))
    return "".join(pieces)
