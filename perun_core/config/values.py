"""Values typed on a command line (``config set KEY VALUE``) read the way a user means them."""

from __future__ import annotations

from typing import Any

from .yamltext import _yaml

__all__ = ["parse_cli_value"]


_NULL_SPELLINGS = frozenset({"null", "Null", "NULL", "~"})


def parse_cli_value(text: str) -> Any:
    """Turn the VALUE of ``config set KEY VALUE`` into a configuration value.

    Follows ``yaml.safe_load`` for scalars (``true`` -> True, ``3`` -> 3,
    ``'x'`` -> "x", ``null`` -> None) and for flow collections (``[a, b]``,
    ``{name: time}``), but keeps the text as typed whenever YAML would read
    it as something else: block scalars (``|``), ``a: b`` mappings, ``- a``
    lists, comments, directives, dates and plain text whose spacing YAML would
    fold.  So ``"| %source% | %collector% |"`` stays that string.
    """
    if not isinstance(text, str):
        return text
    stripped = text.strip()
    if not stripped:
        return text
    if stripped[0] in "|>#%&*!-?:@`,":
        # block scalars, comments, directives, anchors, aliases, tags, block
        # lists, complex keys, reserved characters: plain text on a command line
        if not _looks_numeric(stripped):
            return text
    yaml = _yaml()
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    if value is None:
        return None if stripped in _NULL_SPELLINGS else text
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        if stripped[0] in "'\"":
            return value  # explicitly quoted: YAML's reading is what was meant
        return text
    if isinstance(value, list):
        return value if stripped.startswith("[") else text
    if isinstance(value, dict):
        return value if stripped.startswith("{") else text
    return text  # dates, timestamps, binary: keep what was typed


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
