"""Native functions get the source file and line of their definition: callgrind's line positions, nm + addr2line."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from runhelpers import FIVE_FUNCTIONS_C, needs_cc, perf_refused, run_env  # noqa: F401

from perun_core.collect import symbols
from perun_core.collect.callgrind import callgrind_resources, parse_callgrind

# positions compressed as callgrind writes them: absolute, +N/-N relative, * the same; a call's target position
# does not move the line of the cost line after it; fi= switches to an inlined file's lines
CALLGRIND = """\
version: 1
positions: line
events: Ir
ob=(1) /src/app
fl=(1) /src/app.c
fn=(1) leaf
5 10
+1 20
fn=(2) main
12 1
+1 3
cfn=(1)
calls=1 -8
* 30
fi=(2) /usr/include/stdlib.h
369 4
fe=(1)
-355 2
"""


def test_callgrind_line_positions_give_the_first_line_of_each_function():
    rows = {r["uid"]: r for r in callgrind_resources(parse_callgrind(CALLGRIND)) if r["subtype"] == "function"}
    assert (rows["leaf"]["source"], rows["leaf"]["line"]) == ("/src/app.c", 5)
    # 12, 13, the call at 13 and -355 from the inlined 369 -> 14; never the header's line 369 nor the call's target
    assert rows["main"]["line"] == 12
    assert rows["main"]["exclusive"] == 1 + 3 + 4 + 2


def test_without_line_positions_there_is_no_line():
    text = CALLGRIND.replace("positions: line", "positions: instr")
    rows = [r for r in callgrind_resources(parse_callgrind(text)) if r["subtype"] == "function"]
    assert rows and all("line" not in r for r in rows)


def _build(tmp_path, *flags):
    source = tmp_path / "app.c"
    source.write_text(FIVE_FUNCTIONS_C.replace("REPEAT", "1"))
    binary = tmp_path / ("app" + "".join(flags).replace("-", "_"))
    subprocess.run(["cc", "-O1", *flags, "-o", str(binary), str(source)], check=True)
    return str(binary), str(source)


binutils = pytest.mark.tools("nm", "addr2line")


@needs_cc
@binutils
def test_nm_and_addr2line_give_where_a_function_is_defined(tmp_path):
    binary, source = _build(tmp_path, "-g")
    found = symbols.function_lines(binary, ["middle", "alpha", "main", "no_such_function"])
    assert found["middle"] == (source, 7) and found["alpha"] == (source, 5) and found["main"] == (source, 10)
    assert "no_such_function" not in found
    rows = [{"subtype": "function", "uid": "middle", "object": binary},
            {"subtype": "function", "uid": "write", "object": "[kernel.kallsyms]"},
            {"subtype": "samples", "uid": "middle", "object": binary}]
    symbols.add_function_lines(rows)
    assert (rows[0]["source"], rows[0]["line"]) == (source, 7)
    assert "line" not in rows[1] and "line" not in rows[2]


@needs_cc
@binutils
def test_without_debug_information_or_binutils_the_name_stays_alone(tmp_path, monkeypatch):
    binary, _ = _build(tmp_path)  # no -g: symbols, but no line table
    assert symbols.function_lines(binary, ["middle"]) == {}
    with_lines, _ = _build(tmp_path, "-g")
    real = shutil.which
    monkeypatch.setattr(symbols.shutil, "which", lambda name: None if name == "addr2line" else real(name))
    rows = [{"subtype": "function", "uid": "middle", "object": with_lines}]
    symbols.add_function_lines(rows)
    assert rows == [{"subtype": "function", "uid": "middle", "object": with_lines}]
    assert symbols.function_lines(str(tmp_path / "missing"), ["middle"]) == {}


@needs_cc
@binutils
@pytest.mark.tools("perf")
@pytest.mark.skipif(perf_refused() is not None, reason=f"machine cannot: sampling with perf: {perf_refused()}")
def test_perf_explains_a_c_function_with_its_file_and_line(tmp_path, run_env):
    import json

    from conftest import run_cli
    from gitrepo import make_repo

    from check.test_explain import MAKEFILE, _configure

    root = tmp_path / "cproject"
    files = {"Makefile": MAKEFILE, ".gitignore": "app\n"}
    make_repo(root, [{"files": {**files, "app.c": FIVE_FUNCTIONS_C.replace("REPEAT", "1")}, "message": "v1"},
                     {"files": {**files, "app.c": FIVE_FUNCTIONS_C.replace("REPEAT", "3")}, "message": "v2"}])
    _configure(root, "./app", "40000000", pre_run=["make"])
    result = run_cli("check", "--compute-missing", "head", "--explain-with", "perf", "--format", "json", cwd=root)
    assert result.returncode == 3, result.stdout + result.stderr
    record = next(r for r in json.loads(result.stdout) if r["result"] == "Degradation")
    assert not record["explanation"]["message"], record["explanation"]
    assert record["explanation"]["collector"] == "perf" and record["explanation"]["rounds"] == 3
    top = record["explained_by"][0]
    assert top["function"] == "middle" and top["p_value"] is not None and top["p_value"] < 0.01, record
    assert (top["file"], top["line"]) == ("app.c", 7), top
    tree = run_cli("check", "head", cwd=root, env={"NO_COLOR": "1", "COLUMNS": "400"})  # the stored explanation again
    assert "1. middle (app.c:7)" in tree.stdout, tree.stdout
