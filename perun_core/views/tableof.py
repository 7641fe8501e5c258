"""Tables of resources or models: a terminal table, CSV, JSON or Markdown.

Resources are flattened: a nested key such as ``uid:function`` is a column
of its own; ``snapshots`` is each resource's region number.  By default the table has every top-level key; ``--key`` picks
columns (flattened keys included).  Models show their uid, kind, method,
R^2, coefficients and interval unless other keys are asked for.

Measured values carry their unit: ``amount`` (and ``exclusive``, the part of
it spent in the resource itself) has the unit the profile's header gives
the resource's type, any other key the unit the header names for it.  The
terminal and Markdown tables write them with the one amount formatter
(``510.0 ms``, ``5.00 MiB``); CSV and JSON keep the full number and add the
unit beside it (``unit`` for ``amount``, ``KEY_unit`` for another key).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..amounts import format_amount, wrap_text
from ..errors import EmptyProfile, InvalidParameter
from ..profile.query import all_models_of, flatten_value, resource_table
from ..safetext import escape_controls, json_text_safe
from .base import Param, RenderOptions, View, check_key, resource_keys
from .fits import needs_resources
from .style import fit, fit_end, fit_middle, format_number, pad, paint, text_width

if TYPE_CHECKING:  # pragma: no cover
    from ..profile.model import Profile

MODEL_COLUMNS = ("uid", "model", "method", "r_square", "coeffs", "x_interval_start", "x_interval_end")

#: Narrowest a column is squeezed to when the table is wider than the terminal.
_MIN_COLUMN = 4
_GAP = "  "


@dataclass(slots=True)
class Table:
    """Rows of values under named columns (``None`` where a value is absent)."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    #: the unit of each value, row by row ("" where the value has none); empty when no column has one
    units: list[list[str]] = field(default_factory=list)

    def unit_columns(self) -> list[int]:
        """The indexes of the columns where some value has a unit."""
        return [i for i in range(len(self.columns)) if any(row[i] for row in self.units)]


def _cell(value: Any) -> str:
    """The text of one cell; control characters from the profile are shown escaped, never sent raw."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple, dict)):
        return escape_controls(str(flatten_value(value)))
    return escape_controls(format_number(value))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _sort_key(value: Any) -> tuple:
    if value is None:
        return (2, 0, "")
    if _is_number(value):
        return (0, value, "")
    return (1, 0, _cell(value))


def _coeffs(value: Any) -> Any:
    if isinstance(value, list) and all(isinstance(c, dict) and "name" in c for c in value):
        return ", ".join(f"{c['name']}={format_number(c.get('value'))}" for c in value)
    return value


#: keys measured in the unit of their resource's type unless the header names a unit for the key itself
_TYPE_UNIT_KEYS = ("amount", "exclusive")


def _resource_units(profile: Profile, columns: list[str], data: dict[str, list]) -> list[list[str]]:
    """The unit of every cell, row by row: see the module's description."""
    declared = {str(key): str(unit) for key, unit in profile.units.items()}
    fixed = [declared.get(column, "") for column in columns]
    by_type = [i for i, column in enumerate(columns) if column in _TYPE_UNIT_KEYS and column not in declared]
    count = len(data[columns[0]]) if columns else 0
    if not by_type:
        return [list(fixed) for _ in range(count)] if any(fixed) else []
    units = []
    for kind, subtype, values in zip(data["type"], data["subtype"], zip(*(data[c] for c in columns))):
        row = list(fixed)
        unit = declared.get(f"{kind}({subtype})", declared.get(str(kind), ""))
        for i in by_type:
            row[i] = unit if values[i] is not None else ""
        units.append(row)
    return units


def _resource_table(profile: Profile, keys: tuple[str, ...]) -> Table:
    if profile.resource_count() == 0:
        raise EmptyProfile("tableof")
    available = resource_keys(profile)
    if keys:
        columns = [check_key("tableof", "key", k, available, "a resource key") for k in keys]
    else:
        columns = ["snapshots", *(k for k in available if ":" not in k and k != "snapshots")]
    data = resource_table(profile, list(dict.fromkeys([*columns, "type", "subtype"])))
    rows = [list(row) for row in zip(*(data[c] for c in columns))]
    return Table("resources", columns, rows, _resource_units(profile, columns, data))


def _model_table(profile: Profile, keys: tuple[str, ...]) -> Table:
    models = [model for _, model in all_models_of(profile)]
    if not models:
        raise EmptyProfile("tableof", "models")
    available = list(dict.fromkeys(key for model in models for key in model))
    if keys:
        columns = [check_key("tableof", "key", k, available, "a model key") for k in keys]
    else:
        columns = [k for k in MODEL_COLUMNS if k in available]
    rows = [[_coeffs(model.get(c)) if c == "coeffs" else model.get(c) for c in columns] for model in models]
    return Table("models", columns, rows)


def _parse_filter(text: str, columns: list[str]) -> tuple[int, str]:
    key, sep, value = text.partition("=")
    if not sep:
        raise InvalidParameter("tableof", "filter", text, "KEY=VALUE")
    if key not in columns:
        raise InvalidParameter("tableof", "filter", text, f"a KEY among the columns: {', '.join(columns)}")
    return columns.index(key), value


def build(profile: Profile, *, what: str, keys: tuple[str, ...], sort_by: str | None,
          filters: tuple[str, ...], limit: int | None) -> Table:
    """The table of ``what`` (resources or models), filtered, sorted and cut to ``limit`` rows."""
    table = _resource_table(profile, keys) if what == "resources" else _model_table(profile, keys)
    # each row travels with its units through filtering, sorting and cutting
    units: list[list[str]] = table.units or [[] for _ in table.rows]
    pairs = list(zip(table.rows, units))
    for condition in filters:
        index, value = _parse_filter(condition, table.columns)
        pairs = [pair for pair in pairs if _cell(pair[0][index]) == value]
    if sort_by is not None:
        index = table.columns.index(check_key("tableof", "sort_by", sort_by, table.columns, "one of the columns"))
        pairs.sort(key=lambda pair: _sort_key(pair[0][index]))
    if limit is not None:
        pairs = pairs[:limit]
    table.rows = [row for row, _ in pairs]
    table.units = [unit for _, unit in pairs] if table.units else []
    return table


# -- rendering -------------------------------------------------------------------------

def _widths(header: list[str], cells: list[list[str]], width: int) -> list[int]:
    content = [max((text_width(row[i]) for row in cells), default=0) for i in range(len(header))]
    widths = [max(text_width(h), c) for h, c in zip(header, content)]
    budget = width - len(_GAP) * (len(widths) - 1)
    # a name wider than its column's values gives way first: values cut to make room for a long name
    # ('b0=1346.31…' beside 'x_interval_start' over '1000') hid what the table is for
    while sum(widths) > budget:
        spare = [i for i in range(len(widths)) if widths[i] > max(content[i], _MIN_COLUMN)]
        if not spare:
            break
        widths[max(spare, key=lambda i: widths[i] - max(content[i], _MIN_COLUMN))] -= 1
    # squeeze the widest column one step at a time until the table fits (or cannot shrink)
    while sum(widths) > budget:
        widest = max(range(len(widths)), key=widths.__getitem__)
        if widths[widest] <= _MIN_COLUMN:
            break
        widths[widest] -= 1
    return widths


#: columns a narrow table keeps to the last: what a row is and how much it measured
_ESSENTIAL = ("uid", "amount", "model", "coeffs")
#: a column squeezed below this (or its values' width, if less) no longer shows its values: it is left out instead
_READABLE = 12


def _readable_columns(header: list[str], cells: list[list[str]], width: int) -> list[int]:
    """The indexes of the columns to show: all when each gets a readable width, else without the rightmost
    columns that are not essential (twelve columns at 80 all squeezed to four characters showed nothing)."""
    need = [min(max([text_width(row[i]) for row in cells] + [_MIN_COLUMN]), _READABLE) for i in range(len(header))]
    same = {i for i in range(len(header)) if len({row[i] for row in cells}) <= 1}
    kept = list(range(len(header)))
    while sum(need[i] for i in kept) + len(_GAP) * (len(kept) - 1) > width:
        optional = [i for i in kept if header[i] not in _ESSENTIAL]
        if not optional or len(kept) == 1:
            break
        # a column of one value says least (its value goes to the footer), then the rightmost
        kept.remove(([i for i in optional if i in same] or optional)[-1])
    return kept


def _header_names(columns: list[str], widths: list[int]) -> list[str]:
    """The columns' names cut to their widths, each still telling its column apart.

    Cut at the end, ``x_interval_start`` and ``x_interval_end`` both read
    ``x_i…``: names that would read alike keep their ends instead
    (``…tart``, ``…_end``).
    """
    names = [fit_middle(name, width) for name, width in zip(columns, widths)]
    for i, name in enumerate(names):
        if names.count(name) > 1 or name != columns[i] and any(
                other != i and columns[other].startswith(name.rstrip("…")) for other in range(len(names))):
            names[i] = fit_end(columns[i], widths[i])
    return names


def _shown_cells(table: Table) -> list[list[str]]:
    """The text of every cell as a reader sees it: a measured value with its unit (``510.0 ms``)."""
    if not table.units:
        return [[_cell(v) for v in row] for row in table.rows]
    return [[escape_controls(format_amount(v, unit, column=True)) if unit and _is_number(v) else _cell(v)
             for v, unit in zip(row, units)] for row, units in zip(table.rows, table.units)]


def _unit_header(table: Table, index: int) -> str:
    """The name of the column that holds the units of column ``index`` in CSV and JSON."""
    column = table.columns[index]
    return "unit" if column == "amount" and "unit" not in table.columns else f"{column}_unit"


def _with_unit_columns(table: Table) -> tuple[list[str], list[list[Any]]]:
    """The columns and rows of CSV and JSON: each column with units followed by its units' column."""
    carrying = set(table.unit_columns())
    columns: list[str] = []
    for i, column in enumerate(table.columns):
        columns.append(column)
        if i in carrying:
            columns.append(_unit_header(table, i))
    rows = []
    for row, units in zip(table.rows, table.units or [[] for _ in table.rows]):
        out: list[Any] = []
        for i, value in enumerate(row):
            out.append(value)
            if i in carrying:
                out.append(units[i] or None)
        rows.append(out)
    return columns, rows


def render_text(table: Table, options: RenderOptions) -> str:
    """The table aligned in columns, numbers to the right, cut to the width."""
    theme = options.theme
    cells = _shown_cells(table)
    numeric = [all(_is_number(row[i]) or row[i] is None for row in table.rows) and bool(table.rows)
               for i in range(len(table.columns))]
    kept = _readable_columns(table.columns, cells, options.width)
    left_out = [table.columns[i] + (f" (all {cells[0][i]})" if cells and len({row[i] for row in cells}) == 1
                                    and cells[0][i] else "")
                for i in range(len(table.columns)) if i not in kept]
    columns = [table.columns[i] for i in kept]
    cells = [[row[i] for i in kept] for row in cells]
    numeric = [numeric[i] for i in kept]
    widths = _widths(columns, cells, options.width)

    def line(values: list[str], *, header: bool = False) -> str:
        parts = []
        for i, value in enumerate(values):
            text = pad(fit(value, widths[i]), widths[i], right=numeric[i])
            if header and theme is not None:
                text = paint(text, colour=theme.text, bold=True)
            parts.append(text)
        return _GAP.join(parts).rstrip()

    rule = _GAP.join("─" * w for w in widths)
    if theme is not None and theme.axes is not None:
        rule = paint(rule, colour=theme.axes)
    names = _header_names([escape_controls(c) for c in columns], widths)
    out = [line(names, header=True), rule]
    out.extend(line(row) for row in cells)
    footer = f"{len(table.rows)} {table.title if len(table.rows) != 1 else table.title.rstrip('s')}"
    if left_out:
        footer += f"; left out for the width: {', '.join(escape_controls(c) for c in left_out)} (-k KEY chooses)"
    for part in wrap_text(footer, options.width, indent=2, first=0):
        out.append(paint(part, colour=theme.text) if theme is not None and theme.text else part)
    return "\n".join(out)


def render_csv(table: Table) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    columns, rows = _with_unit_columns(table)
    writer.writerow([escape_controls(c) for c in columns])
    for row in rows:
        # numbers keep their full precision; everything else as in the terminal table
        writer.writerow([v if _is_number(v) else _cell(v) for v in row])
    return buffer.getvalue().rstrip("\n")


def render_json(table: Table) -> str:
    columns, rows = _with_unit_columns(table)
    records = [dict(zip(columns, row)) for row in rows]
    return json_text_safe(json.dumps(records, indent=2, ensure_ascii=False, default=str))


def render_markdown(table: Table) -> str:
    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")

    numeric = [bool(table.rows) and all(_is_number(row[i]) or row[i] is None for row in table.rows)
               for i in range(len(table.columns))]
    out = ["| " + " | ".join(escape(escape_controls(c)) for c in table.columns) + " |",
           "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    out.extend("| " + " | ".join(escape(cell) for cell in row) + " |" for row in _shown_cells(table))
    return "\n".join(out)


def render(table: Table, options: RenderOptions) -> str:
    if options.fmt == "csv":
        return render_csv(table)
    if options.fmt == "json":
        return render_json(table)
    if options.fmt == "markdown":
        return render_markdown(table)
    return render_text(table, options)


VIEW = View(
    name="tableof",
    summary="Resources or models as a table (terminal, csv, json, markdown).",
    description=__doc__ or "",
    params=(
        Param("what", help="What to list.", kind="choice", default="resources", choices=("resources", "models"),
              positional=True, metavar="[resources|models]"),
        Param("keys", help="Column to show (repeatable; default: every top-level key).", kind="list",
              flags=("-k", "--key"), metavar="KEY"),
        Param("sort_by", help="Sort the rows by this column.", flags=("-s", "--sort-by"), metavar="KEY"),
        Param("filters", help="Keep rows whose KEY shows VALUE (repeatable).", kind="list",
              flags=("-F", "--filter"), metavar="KEY=VALUE"),
        Param("limit", help="Show at most this many rows.", kind="int", flags=("-n", "--limit"), minimum=1,
              maximum=10_000_000, metavar="N"),
    ),
    fits=needs_resources,
    build=build,
    render_result=render,
    formats=("table", "csv", "json", "markdown"),
    textual=("table",),
    extensions={".csv": "csv", ".json": "json", ".md": "markdown", ".markdown": "markdown",
                ".txt": "table", ".html": "table"},
    allows_empty=True,
)
