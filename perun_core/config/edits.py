"""Comment-keeping edits: set or remove one key in YAML text, keeping the rest of the text as written.

Every edit works on the node tree :func:`yaml.compose` gives (with the marks of
where each key and value sit in the text).  Whatever cannot be edited safely in
place raises :class:`_NoEdit`; the caller then dumps the whole mapping instead.
"""

from __future__ import annotations

from typing import Any

from .yamltext import _flow_yaml, _yaml, dump_yaml


class _NoEdit(Exception):
    """The text cannot be edited in place; dump the whole mapping instead."""


def _find_key(mapping_node: Any, part: str) -> tuple[Any, Any] | None:
    found = None
    for key_node, value_node in mapping_node.value:
        if (
            type(key_node).__name__ == "ScalarNode"
            and key_node.tag == "tag:yaml.org,2002:str"
            and key_node.value == part
        ):
            found = (key_node, value_node)  # the last duplicate wins, as in safe_load
    return found


def _end_index(node: Any) -> int:
    """Index just past the last character belonging to ``node``."""
    kind = type(node).__name__
    if kind in ("MappingNode", "SequenceNode") and not node.flow_style and node.value:
        last = node.value[-1]
        return _end_index(last[1] if kind == "MappingNode" else last)
    return node.end_mark.index


def _line_of(text: str, index: int) -> int:
    """Line number of the last non-blank character before ``index``."""
    return text[:index].rstrip().count("\n")


def _split_lines(text: str) -> list[str]:
    """Lines with their endings, broken at "\\n" only, as YAML marks count them.

    Text with other line breaks YAML knows (a lone CR, NEL, LS, PS) would
    number lines differently, so it is never edited in place.
    """
    if any(mark in text for mark in ("\x85", "\u2028", "\u2029")) or "\r" in text.replace("\r\n", ""):
        raise _NoEdit
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def _is_block_mapping(node: Any) -> bool:
    return type(node).__name__ == "MappingNode" and not node.flow_style


def _key_starts_line(lines: list[str], key_node: Any) -> bool:
    return lines[key_node.start_mark.line][: key_node.start_mark.column].strip() == ""


def _indented(text: str, column: int) -> list[str]:
    pad = " " * column
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])
    return [(pad + line if line.strip() else line) for line in lines]


def _nest(parts: list[str], value: Any) -> dict[str, Any]:
    nested: Any = value
    for part in reversed(parts):
        nested = {part: nested}
    return nested


def _edit_set(text: str, parts: list[str], value: Any) -> str:
    yaml = _yaml()
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        raise _NoEdit from None
    lines = _split_lines(text)
    if root is None:
        # Empty or comment-only file: append the new section at the end.
        prefix = text if not text or text.endswith("\n") else text + "\n"
        return prefix + dump_yaml(_nest(parts, value))
    if not _is_block_mapping(root):
        raise _NoEdit
    node = root
    parent_column = -1
    for depth, part in enumerate(parts):
        found = _find_key(node, part)
        if found is None:
            return _insert_into(text, lines, node, parent_column, parts[depth:], value, at_end=node is root)
        key_node, value_node = found
        if not _key_starts_line(lines, key_node):
            raise _NoEdit
        if depth == len(parts) - 1:
            return _replace_value(text, lines, key_node, value_node, part, value, parent_column)
        if _is_block_mapping(value_node):
            parent_column = key_node.start_mark.column
            node = value_node
            continue
        if type(value_node).__name__ == "ScalarNode" and value_node.tag == "tag:yaml.org,2002:null":
            # "section:" with nothing below: give it the new sub-mapping.
            return _replace_value(text, lines, key_node, value_node, part, _nest(parts[depth + 1:], value), parent_column)
        raise _NoEdit
    raise _NoEdit  # pragma: no cover - the loop always returns


def _indent_step(child_column: int, parent_column: int) -> int:
    step = child_column - parent_column if parent_column >= 0 else 2
    return step if 2 <= step <= 9 else 2


def _insert_into(
    text: str, lines: list[str], node: Any, parent_column: int, parts: list[str], value: Any, *, at_end: bool
) -> str:
    first_key = node.value[0][0]
    column = first_key.start_mark.column
    block = _indented(dump_yaml(_nest(parts, value), indent=_indent_step(column, parent_column)), column)
    if at_end:
        prefix = text if text.endswith("\n") else text + "\n"
        if prefix.strip() and not prefix.endswith("\n\n"):
            prefix += "\n"  # keep new top-level sections apart, like the templates do
        return prefix + "".join(block)
    after = _line_of(text, _end_index(node))
    if not lines[after].endswith("\n"):
        lines[after] += "\n"
    return "".join(lines[: after + 1] + block + lines[after + 1:])


def _replace_value(
    text: str, lines: list[str], key_node: Any, value_node: Any, part: str, value: Any, parent_column: int
) -> str:
    kind = type(value_node).__name__
    start, end = value_node.start_mark.index, value_node.end_mark.index
    # Same line, same shape: swap the characters of the value and keep the
    # rest of the line (a trailing comment in particular).
    inline_old = (kind == "ScalarNode" and value_node.style not in ("|", ">")) or (
        kind != "ScalarNode" and value_node.flow_style
    )
    inline_new = not isinstance(value, (list, dict)) or (kind != "ScalarNode" and value_node.flow_style)
    if inline_old and inline_new and not (kind == "ScalarNode" and start == end):
        return text[:start] + _flow_yaml(value) + text[end:]
    # Otherwise rewrite the lines of the key and its whole value.
    column = key_node.start_mark.column
    first = key_node.start_mark.line
    last = max(first, _line_of(text, _end_index(value_node)))
    if _is_block_mapping(value_node):
        step = _indent_step(value_node.value[0][0].start_mark.column, column)
    else:
        step = _indent_step(column, parent_column)
    block = _indented(dump_yaml({part: value}, indent=step), column)
    if first == last and block[0].rstrip().endswith(":"):
        # "key: old  # note" becoming a block: keep the note on the key line.
        line_end = text.find("\n", end)
        tail = text[end: line_end if line_end >= 0 else len(text)].strip()
        if tail.startswith("#"):
            block[0] = f"{block[0].rstrip()}  {tail}\n"
    return "".join(lines[:first] + block + lines[last + 1:])


def _edit_unset(text: str, parts: list[str]) -> str:
    yaml = _yaml()
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        raise _NoEdit from None
    if root is None or not _is_block_mapping(root):
        raise _NoEdit
    lines = _split_lines(text)
    node = root
    for depth, part in enumerate(parts):
        found = _find_key(node, part)
        if found is None:
            raise _NoEdit
        key_node, value_node = found
        if not _key_starts_line(lines, key_node):
            raise _NoEdit
        if depth == len(parts) - 1:
            first = key_node.start_mark.line
            last = max(first, _line_of(text, _end_index(value_node)))
            return "".join(lines[:first] + lines[last + 1:])
        if not _is_block_mapping(value_node):
            raise _NoEdit
        node = value_node
    raise _NoEdit  # pragma: no cover
