"""Whose code a function is, and charging library costs to the nearest caller in the user's code."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perun_core.check.explain_owned import Ownership, attribute
from perun_core.profile.model import Profile, Snapshot
from perun_core.profile.resources import ResourceTable

ROOT = "/home/dev/project"
WORKTREE = "/tmp/perun-worktree-abc1234-x1/app"
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"


def test_the_users_code_is_what_lies_in_the_repository_or_a_worktree_of_it():
    mine = Ownership((ROOT,))
    assert mine.owns("parse", f"{ROOT}/build/app", f"{ROOT}/src/parse.c")
    assert mine.owns("parse", WORKTREE, "/tmp/perun-worktree-abc1234-x1/parse.c")
    assert mine.owns("parse", WORKTREE)  # built without -g: its object says whose it is
    assert mine.owns("parse", WORKTREE, "parse.c")  # a relative name in the debug information
    assert not mine.owns("memcpy", LIBC, "../sysdeps/x86_64/memcpy.S")
    # inlined from a system header into the program: the library's code
    assert not mine.owns("std::vector<int>::push_back", WORKTREE, "/usr/include/c++/12/bits/stl_vector.h")
    # start-up code and callgrind's made-up names are nobody's change to make
    assert not mine.owns("_start", WORKTREE) and not mine.owns("(below main)", WORKTREE)
    assert not mine.owns("0x000000000001ab70", WORKTREE)
    # names reserved for the implementation, and the standard library's templates compiled into the program
    assert not mine.owns("__strlen_avx2", WORKTREE) and not mine.owns("_IO_vfprintf", WORKTREE)
    assert not mine.owns("std::vector<int>::_M_realloc_insert", WORKTREE)
    assert mine.owns("peg::Trie::match", WORKTREE) and mine.owns("_parse", WORKTREE)
    # Python: relative files are the job's; installed packages and the standard library are not
    assert mine.owns("lookup", "", "prog.py")
    assert not mine.owns("findall", "", "/usr/lib/python3.11/re/__init__.py")
    assert not mine.owns("get", "", f"{ROOT}/.venv/lib/python3.11/site-packages/requests/api.py")
    assert not mine.owns("<built-in method builtins.len>")


def _profile(rows):
    return Profile(header={"type": "mixed", "units": {"instructions": "Ir"}},
                   global_region=Snapshot(ResourceTable(rows), [], {}))


def _function(name, own, obj, source=None):
    row = {"type": "instructions", "subtype": "function", "uid": name, "amount": own, "exclusive": own,
           "object": obj}
    return {**row, "source": source} if source else row


def _call(caller, callee, cost):
    return {"type": "instructions", "subtype": "call", "uid": callee, "caller": caller, "amount": cost,
            "every_level": cost, "calls": 1}


def test_a_library_chain_is_charged_to_the_nearest_owned_caller_in_proportion_to_its_calls():
    rows = [_function("main", 10, WORKTREE), _function("parse", 20, WORKTREE), _function("report", 5, WORKTREE),
            _function("helper", 30, LIBC), _function("memcpy", 300, LIBC), _function("_dl_start", 7, LIBC),
            _call("main", "parse", 650), _call("main", "report", 35), _call("parse", "helper", 300),
            _call("report", "helper", 30), _call("helper", "memcpy", 300)]
    result = attribute(_profile(rows), Ownership())
    # helper (and memcpy below it) run ten times longer for parse than for report
    assert result.charged["parse"] == pytest.approx(20 + 330 * 10 / 11)
    assert result.charged["report"] == pytest.approx(5 + 330 / 11)
    assert result.through["parse"] == pytest.approx({"helper": 300 / 11, "memcpy": 3000 / 11})
    assert result.charged["main"] == 10 and "main" not in result.through
    assert result.unowned == {"_dl_start": 7}  # nothing of the program's called it
    assert result.total == 372


def test_recursion_and_library_cycles_neither_lose_nor_double_cost():
    rows = [_function("parse", 50, WORKTREE), _function("a", 40, LIBC), _function("b", 60, LIBC),
            _call("parse", "parse", 900), _call("parse", "a", 100), _call("a", "b", 60), _call("b", "a", 30)]
    result = attribute(_profile(rows), Ownership())
    assert result.charged == {"parse": pytest.approx(150)} and not result.unowned
    assert result.total == 150


def test_sampled_stacks_go_to_their_innermost_owned_frame():
    app = WORKTREE
    trace = [{"function": "memcpy", "object": LIBC}, {"function": "copy", "object": app},
             {"function": "main", "object": app}]
    rows = [{"type": "time", "subtype": "samples", "uid": "memcpy", "amount": 40, "trace": trace},
            {"type": "time", "subtype": "samples", "uid": "copy", "amount": 10, "trace": trace[1:]},
            {"type": "time", "subtype": "samples", "uid": "memcpy", "amount": 3,
             "trace": [trace[0], {"function": "_dl_start", "object": "/usr/lib/ld.so"}]}]
    result = attribute(_profile(rows), Ownership())
    assert result.charged == {"copy": 50} and result.through == {"copy": {"memcpy": 40}}
    assert result.unowned == {"memcpy": 3} and result.total == 53


def test_inlined_frames_are_in_the_object_around_them_and_the_standard_library_is_not_the_users():
    app = WORKTREE
    trace = [{"function": "__memcpy_avx_unaligned_erms", "object": "inlined"},
             {"function": "std::string::_M_construct<char const*>", "object": app},
             {"function": "peg::Trie::match", "object": "inlined"},
             {"function": "peg::Dictionary::parse_core", "object": app}]
    rows = [{"type": "time", "subtype": "samples", "uid": "memcpy", "amount": 30, "trace": trace},
            {"type": "time", "subtype": "samples", "uid": "parse_core", "amount": 5, "trace": trace[3:]}]
    result = attribute(_profile(rows), Ownership())
    assert result.charged == {"peg::Trie::match": 30, "peg::Dictionary::parse_core": 5}
    assert result.through == {"peg::Trie::match": {"__memcpy_avx_unaligned_erms": 30}}


names = st.sampled_from(["main", "parse", "emit", "memcpy", "strlen", "helper", "qsort"])


@settings(max_examples=150, deadline=None)
@given(own=st.dictionaries(names, st.integers(0, 1000), min_size=1),
       edges=st.lists(st.tuples(names, names, st.integers(1, 1000)), max_size=20))
def test_charged_costs_add_up_to_the_program_and_none_exceeds_it(own, edges):
    owned = {"main", "parse", "emit"}
    rows = [_function(name, cost, WORKTREE if name in owned else LIBC) for name, cost in own.items()]
    rows += [_call(caller, callee, cost) for caller, callee, cost in edges]
    result = attribute(_profile(rows), Ownership())
    whole = sum(own.values())
    assert result.total == pytest.approx(whole)
    assert all(0 <= value <= whole + 1e-6 for value in result.charged.values())
    assert set(result.charged) <= owned and not set(result.unowned) & owned
    for name, below in result.through.items():
        assert sum(below.values()) <= result.charged[name] + 1e-6
