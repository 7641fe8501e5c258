"""Tokens of the program's language for the mutations: a ``--dict`` file and the string literals of ``--source``.

A ``--dict`` file has one token a line.  A line may also be written the way
AFL's dictionaries are: ``"token"`` or ``name="token"``, where ``\\"``,
``\\\\`` and ``\\xNN`` are escapes (so a token can hold a quote, a newline
or any byte); such files may have comment lines starting with ``#``.  Any
other line is taken as it is (only a final carriage return is dropped).

``--source DIR`` walks the program's sources: from Python files (parsed with
:mod:`ast`) the string and bytes literals, and for the regular expressions
given to :mod:`re` the runs of literal characters in them as well (a
pattern ``java\\.lang\\.[A-Z]`` gives ``java.lang.``, the text the program
looks for); from C and C++ files the string and character literals, with
their escapes decoded.  Docstrings and literals longer than
:data:`MAX_TOKEN` bytes are left out.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from ..errors import FuzzError

__all__ = ["MAX_TOKEN", "c_literals", "python_literals", "read_dictionary", "regex_fragments", "source_tokens",
           "user_tokens"]

#: longest token kept, in bytes
MAX_TOKEN = 128
#: most tokens taken from the sources
MAX_SOURCE_TOKENS = 512
_MAX_FILES = 5000
_MAX_FILE_BYTES = 2 << 20
_C_SUFFIXES = frozenset({".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".c++", ".h++", ".inl"})
_AFL_LINE = re.compile(rb'^\s*(?:[A-Za-z0-9_@.\-]*\s*=\s*)?"(.*)"\s*$')
_AFL_ESCAPE = re.compile(rb'\\(x[0-9A-Fa-f]{2}|["\\])')
_RE_FUNCTIONS = frozenset({"compile", "match", "fullmatch", "search", "findall", "finditer", "sub", "subn", "split"})
_C_TOKEN = re.compile(rb'//[^\n]*|/\*.*?(?:\*/|\Z)|"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.){1,4})\'', re.DOTALL)
_C_ESCAPE = re.compile(rb"\\(x[0-9A-Fa-f]{1,2}|[0-7]{1,3}|.)", re.DOTALL)
_C_SIMPLE = {b"n": b"\n", b"t": b"\t", b"r": b"\r", b"0": b"\0", b"a": b"\a", b"b": b"\b", b"f": b"\f",
             b"v": b"\v", b"e": b"\x1b"}


def _afl_token(body: bytes) -> bytes:
    """The body of a quoted line with its escapes decoded; ValueError for a backslash that escapes nothing known
    or a bare quote."""
    out = bytearray()
    at = 0
    for escape in _AFL_ESCAPE.finditer(body):
        plain = body[at:escape.start()]
        if b"\\" in plain or b'"' in plain:
            raise ValueError
        out += plain
        code = escape.group(1)
        out += bytes([int(code[1:], 16)]) if code[:1] == b"x" else code
        at = escape.end()
    rest = body[at:]
    if b"\\" in rest or b'"' in rest:
        raise ValueError
    return bytes(out + rest)


def read_dictionary(path: str | None) -> list[bytes]:
    """The tokens of a ``--dict`` file (see the module's description); FuzzError naming the file (and line)
    when it cannot be read or a quoted line is malformed."""
    if not path:
        return []
    file = Path(path)
    if not file.is_file():
        raise FuzzError(f"dictionary {file} is not a file; expected a file of tokens, one a line")
    try:
        content = file.read_bytes()
    except OSError as exc:
        raise FuzzError(f"cannot read dictionary {file}: {exc.strerror or exc}") from None
    tokens: list[bytes] = []
    for number, raw in enumerate(content.split(b"\n"), 1):
        line = raw.rstrip(b"\r")
        stripped = line.strip()
        if stripped.startswith(b"#"):
            continue
        quoted = _AFL_LINE.match(line) if stripped.endswith(b'"') else None
        if quoted is None:
            if line:
                tokens.append(line)
            continue
        try:
            token = _afl_token(quoted.group(1))
        except ValueError:
            raise FuzzError(f"dictionary {file}, line {number}: {stripped[:60].decode('utf-8', 'replace')!r} is not "
                            'a valid quoted token; expected "text" with \\", \\\\ or \\xNN escapes') from None
        if token:
            tokens.append(token)
    return tokens


def regex_fragments(pattern: str | bytes) -> list[bytes]:
    """The runs of literal characters of a regular expression (two or more characters each); [] if it does
    not compile."""
    # lazy: the regex parser is only needed for --source
    from re import _parser as parser  # type: ignore[attr-defined]

    try:
        parsed = parser.parse(pattern)
    except (re.error, RecursionError, OverflowError, ValueError, TypeError):
        return []
    fragments: list[bytes] = []
    is_bytes = isinstance(pattern, bytes)

    def walk(items: object) -> None:
        run: list[int] = []

        def flush() -> None:
            if len(run) >= 2:
                fragments.append(bytes(run) if is_bytes else "".join(map(chr, run)).encode("utf-8", "replace"))
            run.clear()

        for op, value in items:  # type: ignore[attr-defined]
            if op is parser.LITERAL:
                run.append(value)
                continue
            flush()
            for nested in _nested(value, parser.SubPattern):
                walk(nested)
        flush()

    walk(parsed)
    return fragments


def _nested(value: object, kind: type) -> Iterator[object]:
    """The sub-patterns inside one parsed regex item's argument (groups, branches, repeats, assertions)."""
    if isinstance(value, kind):
        yield value
    elif isinstance(value, (tuple, list)):
        for part in value:
            yield from _nested(part, kind)


def python_literals(text: str) -> list[bytes]:
    """String and bytes literals of Python source (docstrings left out), and the literal runs of the regular
    expressions passed to ``re``; [] for source that does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    found: list[bytes] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and id(node) not in docstrings:
            value = node.value
            found.append(value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass"))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, (str, bytes)) and _calls_re(node.func):
            found.extend(regex_fragments(node.args[0].value))
    return found


def _calls_re(func: ast.expr) -> bool:
    """``re.compile(...)``, ``re.match(...)``, ... (or the same functions imported by name)."""
    if isinstance(func, ast.Attribute):
        return func.attr in _RE_FUNCTIONS and isinstance(func.value, ast.Name) and func.value.id in ("re", "regex")
    return isinstance(func, ast.Name) and func.id in _RE_FUNCTIONS


def _c_unescape(body: bytes) -> bytes:
    def decode(match: re.Match[bytes]) -> bytes:
        code = match.group(1)
        if code[:1] == b"x":
            return bytes([int(code[1:], 16)])
        if code[:1].isdigit() and code[:1] in b"01234567" and (len(code) > 1 or code != b"0"):
            return bytes([int(code, 8) & 0xFF])
        return _C_SIMPLE.get(code, code)

    return _C_ESCAPE.sub(decode, body)


def c_literals(text: bytes) -> list[bytes]:
    """String and character literals of C or C++ source (comments skipped, escapes decoded)."""
    found = []
    for match in _C_TOKEN.finditer(text):
        body = match.group(1) if match.group(1) is not None else match.group(2)
        if body is not None:
            found.append(_c_unescape(body))
    return found


def source_tokens(directory: str | None) -> list[bytes]:
    """The literals of every Python, C and C++ file under ``directory`` (see the module's description).

    FuzzError when ``directory`` is not a directory or holds no such file.
    """
    if not directory:
        return []
    root = Path(directory)
    if not root.is_dir():
        raise FuzzError(f"source directory {root} (--source) is not a directory; expected the program's sources "
                        "(.py, C or C++ files)")
    files = sorted(p for p in root.rglob("*") if p.suffix.lower() in _C_SUFFIXES | {".py"}
                   and not any(part.startswith(".") for part in p.relative_to(root).parts) and p.is_file())
    if not files:
        raise FuzzError(f"source directory {root} (--source) has no .py, C or C++ files; expected the program's "
                        "sources")
    tokens: dict[bytes, None] = {}
    for file in files[:_MAX_FILES]:
        try:
            if file.stat().st_size > _MAX_FILE_BYTES:
                continue
            content = file.read_bytes()
        except OSError:
            continue  # a file that vanished or cannot be read gives nothing, like one without literals
        found = python_literals(content.decode("utf-8", "surrogateescape")) if file.suffix == ".py" \
            else c_literals(content)
        for token in found:
            if 0 < len(token) <= MAX_TOKEN:
                tokens.setdefault(token)
        if len(tokens) >= MAX_SOURCE_TOKENS:
            break
    return list(tokens)[:MAX_SOURCE_TOKENS]


def user_tokens(dictionary: str | None, source: str | None) -> list[bytes]:
    """The tokens of the ``--dict`` file, then those of the ``--source`` directory (duplicates dropped)."""
    return list(dict.fromkeys([*read_dictionary(dictionary), *source_tokens(source)]))
