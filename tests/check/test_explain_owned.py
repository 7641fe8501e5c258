"""check --explain names the user's function whose calls of the C library (or a C extension) grew.

Each test builds a small git repository with two commits, lets ``check --compute-missing head --explain``
measure and explain them as a user would (a subprocess), and asserts that the first explained function is
the program's own, with its file and line, the library functions it called as its second level, and that no
entry costs more than the whole program.
"""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from gitrepo import make_repo
from check.owned_programs import (CHECKSUM_FAST, CHECKSUM_SLOW, DICTIONARY_FAST, DICTIONARY_SLOW, HASHES_FAST,
                                  HASHES_SLOW, MAKE_C, MAKE_C_O2, MAKE_CC, NESTED_FAST, NESTED_SLOW, SORT_FAST,
                                  SORT_SLOW, WORDS_FAST, WORDS_SLOW)
from runhelpers import leftover_worktrees, line_of, needs_cc, perf_refused, run_env  # noqa: F401

from check.test_explain import _configure

callgrind = pytest.mark.tools("valgrind")
needs_cxx = pytest.mark.tools("g++", "make")


def _explain(tmp_path, name, source, fast, slow, make, workload, *extra):
    root = tmp_path / name
    files = {"Makefile": make, ".gitignore": "app\n"} if make else {}
    make_repo(root, [{"files": {**files, source: fast}, "message": "v1"},
                     {"files": {**files, source: slow}, "message": "v2: more library calls"}])
    command = "./app" if make else f"python3 {source}"
    _configure(root, command, workload, pre_run=["make"] if make else None)
    result = run_cli("check", "--compute-missing", "head", "--explain", "--format", "json", *extra, cwd=root)
    assert result.returncode == 3, result.stdout + result.stderr
    record = next(r for r in json.loads(result.stdout) if r["result"] == "Degradation")
    assert not record["explanation"]["message"], record["explanation"]
    return root, record, result


def _within_totals(record):
    """Every entry, and every library function under it, costs at most the whole program on its side."""
    explanation = record["explanation"]
    for entry in record["explained_by"]:
        assert entry["baseline"] <= explanation["baseline_total"] + 1e-9, entry
        assert entry["target"] <= explanation["target_total"] + 1e-9, entry
        assert sum(t["target"] for t in entry["through"]) <= entry["target"] + 1e-9, entry
    assert sum(e["target"] for e in record["explained_by"]) <= explanation["target_total"] * (1 + 1e-9)


def _first_owned(record, function, source, marker, text):
    first = record["explained_by"][0]
    assert first["function"].split("(")[0] == function, record["explained_by"]
    assert first["owned"] is True and (first["file"], first["line"]) == (source, line_of(text, marker)), first
    assert first["share"] > 0.5, record["explained_by"]
    return first


def _through(first):
    return " ".join(t["function"] for t in first["through"])


@needs_cc
@callgrind
def test_a_c_function_copying_its_input_is_named_before_memcpy_and_strlen(tmp_path, run_env):
    root, record, result = _explain(tmp_path, "words", "app.c", WORDS_FAST, WORDS_SLOW, MAKE_C, "1500",
                                    "--explain-with", "callgrind")
    assert record["explanation"]["collector"] == "callgrind"
    # the expected cost is said before collecting
    assert "s expected, 240 s left of the explain budget)" in result.stderr, result.stderr
    first = _first_owned(record, "starts_word", "app.c", "static int starts_word", WORDS_SLOW)
    below = _through(first)
    assert "memcpy" in below or "memmove" in below, first["through"]
    assert "strlen" in below or "malloc" in below, first["through"]
    # no library function is ranked on its own: all of them had a caller in the program
    assert all(entry["owned"] for entry in record["explained_by"]), record["explained_by"]
    _within_totals(record)
    assert leftover_worktrees(run_env) == []
    # the tree and markdown say the same, the library functions one level below
    tree = run_cli("check", "head", cwd=root, env={"NO_COLOR": "1", "COLUMNS": "400"})  # a line per result
    lines = tree.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "1. starts_word (app.c:" in line)
    assert "through " in lines[at] and lines[at + 1].lstrip("| ").startswith("through "), tree.stdout
    markdown = run_cli("check", "head", "--format", "markdown", cwd=root)
    assert "| 1 | `starts_word` | `app.c:" in markdown.stdout and "↳ through `" in markdown.stdout, markdown.stdout


@needs_cc
@callgrind
def test_a_recursive_c_parser_calling_strlen_is_named_and_counted_once_per_stack(tmp_path, run_env):
    root, record, _ = _explain(tmp_path, "nested", "app.c", NESTED_FAST, NESTED_SLOW, MAKE_C, "9000",
                               "--explain-with", "callgrind")
    first = _first_owned(record, "parse", "app.c", "static long parse", NESTED_SLOW)
    assert "strlen" in _through(first), first["through"]
    _within_totals(record)
    # the collected profiles themselves: no function's and no call edge's cost exceeds the program's
    from perun_core.storage.repository import PerunRepository

    # kept with the explanation, as the objects its record names (not pending profiles)
    sources = record["explanation"]["sources"]
    assert len(sources) == 2 and all(source.startswith("object:") for source in sources), sources
    with PerunRepository(root) as repo:
        for source in sources:
            profile = repo.objects.read_profile(source[len("object:"):])
            assert profile.collector_info["name"] == "callgrind", source
            table = profile.global_region.resources
            total = profile.header["total_instructions"]
            assert max(table.column("amount")) <= total, source


@needs_cc
@callgrind
def test_a_qsort_comparator_formatting_its_keys_is_named_though_the_c_library_calls_it(tmp_path, run_env):
    _, record, _ = _explain(tmp_path, "sort", "app.c", SORT_FAST, SORT_SLOW, MAKE_C, "800")
    first = _first_owned(record, "by_name", "app.c", "static int by_name", SORT_SLOW)
    assert "printf" in _through(first) or "vfprintf" in _through(first), first["through"]
    _within_totals(record)


@needs_cxx
@callgrind
def test_a_cpp_dictionary_copying_the_rest_of_the_input_is_named_in_a_recursive_parser(tmp_path, run_env):
    _, record, _ = _explain(tmp_path, "dictionary", "app.cc", DICTIONARY_FAST, DICTIONARY_SLOW, MAKE_CC, "6000")
    first = _first_owned(record, "Dictionary::match", "app.cc", "size_t match(", DICTIONARY_SLOW)
    below = _through(first)
    assert "strlen" in below or "memcpy" in below or "operator new" in below or "malloc" in below, first["through"]
    # the recursive parser calling it is the program's too, but its own change is small
    assert all(not entry["function"].startswith("Parser::parse_list") or entry["share"] < 0.5
               for entry in record["explained_by"])
    _within_totals(record)


def test_a_python_function_calling_hashlib_more_often_is_named_before_the_extension(tmp_path, run_env):
    _, record, _ = _explain(tmp_path, "hashes", "prog.py", HASHES_FAST, HASHES_SLOW, None, "2000")
    assert record["explanation"]["collector"] == "pytrace"
    first = _first_owned(record, "fingerprint", "prog.py", "def fingerprint", HASHES_SLOW)
    assert "sha256" in _through(first) or "digest" in _through(first), first["through"]
    _within_totals(record)


@needs_cc
@pytest.mark.tools("perf")
@pytest.mark.skipif(perf_refused() is not None, reason=f"machine cannot: sampling with perf: {perf_refused()}")
def test_perf_stacks_charge_memcpy_to_the_function_that_calls_it(tmp_path, run_env):
    # the C library's memcpy keeps no frame pointer: its caller is found only by unwinding with DWARF
    _, record, _ = _explain(tmp_path, "words", "app.c", WORDS_FAST, WORDS_SLOW, MAKE_C, "600 10000",
                            "--explain-with", "perf")
    assert record["explanation"]["collector"] == "perf"
    first = _first_owned(record, "starts_word", "app.c", "static int starts_word", WORDS_SLOW)
    assert first["p_value"] is not None and first["p_value"] < 0.01, first
    below = _through(first)
    assert "memcpy" in below or "memmove" in below, first["through"]
    _within_totals(record)


@needs_cc
@pytest.mark.tools("perf", "addr2line")
@pytest.mark.skipif(perf_refused() is not None, reason=f"machine cannot: sampling with perf: {perf_refused()}")
def test_a_static_inline_function_at_o2_is_named_with_a_line_of_its_own_body(tmp_path, run_env):
    # at -O2 `checksum` is inlined into main and has no symbol: perf's inlined frame and addr2line -i name it
    root, record, _ = _explain(tmp_path, "checksum", "app.c", CHECKSUM_FAST, CHECKSUM_SLOW, MAKE_C_O2, "150000",
                               "--explain-with", "perf")
    assert record["explanation"]["collector"] == "perf"
    first = record["explained_by"][0]
    assert first["function"] == "checksum" and first["owned"] is True, record["explained_by"]
    opening = line_of(CHECKSUM_SLOW, "static inline unsigned long checksum")
    closing = line_of(CHECKSUM_SLOW, "return sum;")
    assert first["file"] == "app.c" and opening <= first["line"] <= closing, first
    assert "strlen" in _through(first), first["through"]
    assert not any(entry["function"] == "main" and entry["share"] > 0.5 for entry in record["explained_by"])
    _within_totals(record)
    tree = run_cli("check", "head", cwd=root, env={"NO_COLOR": "1", "COLUMNS": "400"})  # a line per result
    assert f"1. checksum (app.c:{first['line']})" in tree.stdout, tree.stdout
