"""Shared fixtures: a scrubbed environment and ready-made perun repositories.

The developer's own git and perun configuration must never leak into tests,
so HOME, XDG_CONFIG_HOME, PERUN_CONFIG_DIR, EDITOR, VISUAL, PAGER and GIT_*
are replaced for every test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

# What `make test` does, for pytest run by hand too: where PYTHONDONTWRITEBYTECODE is set, every perun subprocess
# (and every xdist worker, started after this) would compile perun's modules anew, 0.35 s CPU for `perun-core
# status` against 0.22 s; bytecode is kept beside the interpreter's environment instead, out of the source tree.
if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
    os.environ["PYTHONDONTWRITEBYTECODE"] = ""
    os.environ["PYTHONPYCACHEPREFIX"] = str(Path(sys.prefix) / "pycache")

# The programs the tests measure run as `python3 prog.py` (and the Python collectors take `python3` from PATH),
# as they would where the environment is activated: `python3` is the interpreter running the tests.  Where a
# version manager's shim came first (pyenv's is a bash script that looks the version up), every run of a measured
# program paid about 0.08 s of CPU before Python started, 0.1 s against 0.015 s for `python3 -c pass`.
_BIN = Path(sys.executable).parent
if (_BIN / "python3").exists() and os.environ.get("PATH", "").split(os.pathsep)[0] != str(_BIN):
    os.environ["PATH"] = os.pathsep.join(filter(None, (str(_BIN), os.environ.get("PATH"))))

import progress  # noqa: E402 - found through the line above
from hypothesis import settings  # noqa: E402 - after the path, with the other imports

# Property tests draw the same examples on every run: a red CI must be reproducible on a developer's machine,
# and a counterexample found by chance is a bug to file, not a CI run that fails once.  Exploring new examples
# is a separate run: HYPOTHESIS_PROFILE=explore.
settings.register_profile("perun", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "perun"))
from tools import need_tools  # noqa: E402 - found through the line above


def pytest_configure(config):
    config.addinivalue_line("markers", "tools(*names): programs the test runs; missing ones skip it, or fail it "
                            "under PERUN_REQUIRE_NATIVE_TOOLS=1 (see tests/tools.py)")
    config.addinivalue_line("markers", "busy: starts busy sessions (runhelpers.busy_sessions); never runs beside "
                            "another busy test or a TUI snapshot test under pytest-xdist (see machine_share)")
    if not config.pluginmanager.hasplugin("xdist"):  # the groups below are then only names
        config.addinivalue_line("markers", "xdist_group(name): tests pytest-xdist runs on one worker")
    progress.register(config)


def pytest_runtest_setup(item):
    for mark in item.iter_markers("tools"):
        need_tools(*mark.args)


#: test files whose tests take the longest (a minute or more each, or a module fixture that long), longest
#: first: ``make test`` starts them first, so that no worker begins one while the others are idle at the end.
#: The fuzzing files with short budgets (-t 60 or less: a search on a crowded machine may run out of it) sit
#: between others, not beside the fuzzing of test_fuzz_programs.py.
SLOW_FILES = (
    # a killed callgrind run waits out its half of an 80 s budget: 50 s of wall time and 4 s of CPU, started
    # first so that its wait overlaps the others' work instead of ending the run alone
    "tests/check/test_explain_budget.py",
    "tests/check/test_rerun_paths.py",
    "tests/fuzz/test_fuzz_programs.py",
    "tests/test_demo_collected.py",
    "tests/tui/test_tmux_walk.py",
    "tests/fuzz/test_fuzz_cli.py",
    "tests/tui/test_explain_finding.py",
    "tests/fuzz/test_pumping.py",
    "tests/check/test_explain_native.py",
    "tests/fuzz/test_guidance.py",
    "tests/formats/test_layouts.py",
    "tests/tui/test_escaped_text.py",
    "tests/tui/test_keys.py",
)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Tests on a module-scoped fixture share an xdist group per module (``make test`` runs ``--dist loadgroup``).

    So the fixture (a collected demo, compiled programs) is built once, not
    once per worker; a plain run ignores the groups.  It runs before xdist
    adds the group names to the test ids (tryfirst).  The order is then:
    the files of :data:`SLOW_FILES`, the groups by their number of tests
    (largest first), the other tests as collected; whole files move, so a
    module's fixture is still built once.  ``make test`` keeps that order
    (``--no-loadscope-reorder``): a worker takes the next test when it is
    almost out of work, so the long ones start while all workers are busy
    and short ones fill the end.
    """
    groups: dict[str, int] = {}
    for item in items:
        definitions = getattr(item, "_fixtureinfo", None)
        scopes = {d.scope for defs in (definitions.name2fixturedefs.values() if definitions else ()) for d in defs}
        if "module" in scopes:
            module = item.nodeid.split("::")[0]
            item.add_marker(pytest.mark.xdist_group(module))
            groups[module] = groups.get(module, 0) + 1

    def rank(item) -> tuple[int, int]:
        module = item.nodeid.split("::")[0]
        if module in SLOW_FILES:
            return 0, SLOW_FILES.index(module)
        return (1, -groups[module]) if module in groups else (2, 0)

    items.sort(key=rank)


@pytest.fixture(autouse=True)
def machine_share(request, tmp_path_factory):
    """Keep busy tests and TUI snapshot tests apart when pytest-xdist runs tests side by side.

    A test marked ``busy`` loads the machine with busy sessions; a snapshot
    test draws a screen on it.  A lock file shared by the run's workers is
    held exclusively by a busy test and shared by snapshot tests: snapshots
    draw beside each other, a busy test runs beside neither another busy
    test nor a snapshot (ordinary tests run beside both; they must pass on
    a busy machine anyway).  In a run without workers the lock is free.
    """
    exclusive = request.node.get_closest_marker("busy") is not None
    if not exclusive and "snap_compare" not in request.fixturenames:
        yield
        return
    import fcntl

    run_directory = tmp_path_factory.getbasetemp()
    if hasattr(request.config, "workerinput"):  # each worker's directory lies in the run's
        run_directory = run_directory.parent
    with open(run_directory / "machine-share.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(autouse=True)
def clean_env(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    for name in list(os.environ):
        if name.startswith("GIT_"):
            monkeypatch.delenv(name)
    for name in ("EDITOR", "VISUAL", "PAGER", "XDG_CONFIG_HOME", "PERUN_CONFIG_DIR", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PERUN_CONFIG_DIR", str(home / "perun-config"))
    return home


def time_profile(origin: str | None, *, cmd: str = "ls", args: str = "-al", workload: str = "/", amounts=(0.5,)) -> dict:
    data = {
        "header": {"type": "time", "units": {"time": "s"}, "cmd": cmd, "params": args, "workload": workload},
        "collector_info": {"name": "time", "params": {"repeat": len(amounts), "warmup": 0}},
        "postprocessors": [],
        "snapshots": [
            {
                "time": "0.1",
                "resources": [
                    {"amount": a, "type": "time", "subtype": "real", "uid": cmd, "order": i + 1}
                    for i, a in enumerate(amounts)
                ],
                "models": [],
            }
        ],
    }
    if origin is not None:
        data = {"origin": origin, **data}
    return data


def write_pending(repo_root: Path, name: str, data: dict | str) -> Path:
    path = repo_root / ".perun" / "jobs" / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.fixture
def perun_repo(tmp_path):
    """A git repository with two commits and an initialized .perun; returns (root, [shas])."""
    from gitrepo import make_repo

    from perun_core import api

    root = tmp_path / "project"
    shas = make_repo(root, [{"files": {"a.txt": "one\n"}, "message": "first"},
                            {"files": {"a.txt": "two\n"}, "message": "second"}])
    api.init(root)
    return root, shas


def run_cli(*args: str, cwd: Path, env: dict | None = None, input: str | None = None) -> subprocess.CompletedProcess:
    """Run perun-core in a subprocess, as a user would."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "perun_core.cli.entry", *args],
        # a hang guard only: a bisect or a confirmation takes minutes on a busy machine
        cwd=cwd, env=full_env, capture_output=True, text=True, input=input, timeout=900,
    )
