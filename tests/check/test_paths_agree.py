"""One verdict, whatever the path: the same pair of time profiles judged by every way a user checks it.

Each pair shape below is a pair of time profiles with per-run rows (real,
user and sys time and preemptions of every run, the load of the machine),
as the time collector writes them.  The reference is ``check profiles A B``
on the two files in the documented layout; every other path must give the
same result and reason at every location and the same exit status:

* ``check profiles`` with the tags and the names of pending profiles;
* ``check head`` and ``check all`` on registered profiles and on pending ones;
* the installed post-commit hook, run as git runs it, read back from the
  check it stores;
* the TUI's check screen (``c`` then ``h``), driven with Pilot.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import run_cli, write_pending
from gitrepo import make_repo

from perun_core import api
from perun_core.api import check as api_check

from tests.tui.helpers import tui_check

from .helpers import spread, time_profile

#: name: (baseline, target, the verdict at [real], the exit status of a check)
SHAPES = {
    # identical code, the target measured while other work ran: its wall time only grew
    "wall-only-loaded-target": (dict(real=spread(0.10), user=spread(0.095), load=0.4, switches=1),
                                dict(real=spread(0.20), user=spread(0.095), load=4.9, switches=30),
                                "MaybeDegradation", 0),
    # the program does 1.5 times the work: CPU time backs the wall time
    "cpu-slowdown": (dict(real=spread(0.10), user=spread(0.095), load=0.3, switches=1),
                     dict(real=spread(0.15), user=spread(0.1425), load=0.3, switches=1),
                     "Degradation", 3),
    "identical": (dict(real=spread(0.10), user=spread(0.095)), dict(real=spread(0.10), user=spread(0.095)),
                  "NoChange", 0),
    # both sides measured on a busy machine; the target waited longer for a CPU, preempted all along
    "both-loaded-waiting": (dict(real=spread(0.015), user=spread(0.008), load=5.0, switches=3),
                            dict(real=spread(0.040), user=spread(0.008), load=5.0, switches=3),
                            "MaybeDegradation", 0),
    # 5.8 times the work on a busy machine: preempted more often per run (40 vs 10), less per CPU-second
    "slower-and-more-preempted": (dict(real=spread(0.10), user=spread(0.095), load=4.0, switches=10),
                                  dict(real=spread(0.58), user=spread(0.55), load=4.0, switches=40),
                                  "Degradation", 3),
}


def _doc(shape: dict, origin: str | None = None) -> dict:
    doc = time_profile(**shape).to_dict()
    if origin is not None:
        doc["origin"] = origin
    return doc


def _verdicts(records) -> dict[str, tuple[str, str]]:
    return {r["uid"]: (r["result"], r["reason"]) for r in records}


def _cli_verdicts(*args, cwd) -> tuple[dict, int]:
    result = run_cli(*args, "--format", "json", cwd=cwd)
    assert result.returncode in (0, 3), result.stderr
    assert "Traceback" not in result.stderr
    return _verdicts(json.loads(result.stdout)), result.returncode


def _stored(root, sha) -> dict[str, tuple[str, str]]:
    stored = api_check.stored_check(sha, cwd=root)
    assert stored is not None, "the check stored nothing"
    return {f.location: (f.result.value, f.reason) for pair in stored.pairs for f in pair.findings}


def _changes(verdicts: dict) -> dict:
    """The findings that are not NoChange (stored checks and the TUI keep only those)."""
    return {k: v for k, v in verdicts.items() if v[0] != "NoChange"}


@pytest.fixture(scope="module")
def references(tmp_path_factory) -> dict[str, tuple[dict, int]]:
    """By shape, its reference: the verdicts and exit status of ``check profiles`` on its two files.

    The files and so the reference are the same in every test of a shape:
    it is run once a module (four tests share each shape), not once a test.
    """
    found = {}
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:  # the function-scoped clean_env comes later
        patch.setenv("HOME", str(home))
        patch.setenv("PERUN_CONFIG_DIR", str(home / "perun-config"))
        patch.delenv("XDG_CONFIG_HOME", raising=False)
        for name, (base, target, real, status) in SHAPES.items():
            files = tmp_path_factory.mktemp(f"files-{name}")
            (files / "base.perf").write_text(json.dumps(_doc(base)))
            (files / "target.perf").write_text(json.dumps(_doc(target)))
            reference, code = _cli_verdicts("check", "profiles", "base.perf", "target.perf", cwd=files)
            assert reference["./app [real]"][0] == real, reference
            assert code == status
            found[name] = reference, code
    return found


@pytest.fixture(params=sorted(SHAPES))
def shape(request, tmp_path, references):
    """(name, the project with two commits, their shas, the reference verdicts and exit status)."""
    return _shape(request.param, tmp_path, references)


@pytest.fixture
def cpu_slowdown(tmp_path, references):
    """:func:`shape` of the CPU slow-down alone."""
    return _shape("cpu-slowdown", tmp_path, references)


def _shape(name, tmp_path, references):
    reference, code = references[name]
    root = tmp_path / "project"
    shas = make_repo(root, [{"files": {"a.txt": "one\n"}, "message": "first"},
                            {"files": {"a.txt": "two\n"}, "message": "second"}])
    api.init(root)
    return name, root, shas, reference, code


def _pending(root, shas, name):
    base, target, _real, _status = SHAPES[name]
    write_pending(root, "base.perf", _doc(base, shas[0]))
    write_pending(root, "target.perf", _doc(target, shas[1]))


def _registered(root, shas, name):
    _pending(root, shas, name)
    api.add(["base.perf"], minor=shas[0], cwd=root)
    api.add(["target.perf"], minor=shas[1], cwd=root)


def test_pending_profiles_by_tag_name_head_and_all(shape):
    name, root, shas, reference, code = shape
    _pending(root, shas, name)
    for args in (("check", "profiles", "0@p", "1@p"), ("check", "profiles", "base.perf", "target.perf"),
                 ("check", "head"), ("check", "all")):
        verdicts, status = _cli_verdicts(*args, cwd=root)
        assert (verdicts, status) == (reference, code), args


def test_registered_profiles_by_head_all_and_the_hook(shape):
    name, root, shas, reference, code = shape
    _registered(root, shas, name)
    for args in (("check", "head"), ("check", "all"), ("check", "head", "--no-pending")):
        verdicts, status = _cli_verdicts(*args, cwd=root)
        assert (verdicts, status) == (reference, code), args
    # the post-commit hook, run as git runs it after a commit: in the work tree, no arguments
    api_check.install_hook(cwd=root)
    hook = root / ".git" / "hooks" / "post-commit"
    env = {**os.environ, "NO_COLOR": "1"}
    ran = subprocess.run([str(hook)], cwd=root, env=env, capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, ran.stderr
    assert "Traceback" not in ran.stderr
    assert _stored(root, shas[1]) == reference


async def test_the_tui_check_screen_gives_the_same_verdicts(shape):
    name, root, shas, reference, _code = shape
    _registered(root, shas, name)
    rows, _subtitle = await tui_check(root, "h", timeout=60)
    shown = {f.location: (f.result.value, f.reason) for f in rows}
    assert _changes(shown) == _changes(reference)
    assert _stored(root, shas[1]) == reference


def test_a_strategy_from_a_shared_configuration_is_named_once(cpu_slowdown, tmp_path):
    name, root, shas, _reference, _code = cpu_slowdown
    shared = tmp_path / "elsewhere" / "shared.yml"
    shared.parent.mkdir()
    # what another tool's shared configuration may hold: a different method and a cut-off
    shared.write_text("degradation:\n  strategies:\n    - method: average_amount_threshold\n  cutoff: 1\n")
    _pending(root, shas, name)
    for args in (("check", "head"), ("check", "profiles", "0@p", "1@p")):
        # a wide terminal: the note is read whole, not where it wraps
        result = run_cli(*args, cwd=root, env={"PERUN_CONFIG_DIR": str(shared.parent), "NO_COLOR": "1",
                                               "COLUMNS": "400"})
        text = result.stdout + result.stderr
        note = f"degradation.strategies, degradation.cutoff taken from {shared}, not from the repository's local.yml"
        assert text.count(note) == 1, text
    # the repository's own settings need no note, nor do the built-in defaults
    plain = run_cli("check", "head", cwd=root, env={"NO_COLOR": "1"})
    assert "taken from" not in plain.stdout + plain.stderr


def test_a_profile_registered_and_kept_pending_counts_once(cpu_slowdown):
    name, root, shas, reference, code = cpu_slowdown
    _pending(root, shas, name)
    for pending, sha in (("base.perf", shas[0]), ("target.perf", shas[1])):
        added = run_cli("add", "--keep-profile", pending, "-m", sha, cwd=root)
        assert added.returncode == 0, added.stderr
    result = run_cli("check", "head", "--format", "json", cwd=root)
    records = json.loads(result.stdout)
    assert len(records) == len(reference), records  # one pair, not the registered and the pending copy
    assert (_verdicts(records), result.returncode) == (reference, code)
