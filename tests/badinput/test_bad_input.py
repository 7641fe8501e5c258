"""Every command given bad input: one ``error:`` line, the documented exit code, no traceback, ``.perun`` untouched.

The cases live in tables (:mod:`.cases`).  Most run in this process through
``perun_core.cli.main.main`` (the same code the ``perun-core`` script runs,
with its output captured), so the whole suite takes seconds; a sample also runs
as real subprocesses, where the exit status and the streams are the operating
system's.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools import machine_cannot

from .cases import CASES, NEW_COMMAND_CASES, Case, good_profile

from perun_core import api
from perun_core.errors import EXIT_CODES

pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.fixture(scope="session")
def template(tmp_path_factory):
    """A repository with two commits, one registered profile at HEAD and one pending profile; caches warmed.

    Each test copies it.  It is made once per worker (in a fraction of a second): a module-scoped fixture
    would put the module's 470 tests in one xdist group (tests/conftest.py), on one worker.
    """
    from gitrepo import make_repo

    base = tmp_path_factory.mktemp("badinput")
    root = base / "repo"
    shas = make_repo(root, [{"files": {"a.txt": "one\n"}, "message": "first"},
                            {"files": {"a.txt": "two\n"}, "message": "second"}])
    old = {name: os.environ.get(name) for name in ("HOME", "PERUN_CONFIG_DIR")}
    os.environ["HOME"] = str(base)
    os.environ["PERUN_CONFIG_DIR"] = str(base / "perun-config")
    try:
        api.init(root)
        head = shas[-1]
        for name in ("registered.perf", "pending.perf"):
            (root / ".perun/jobs" / name).write_text(json.dumps(good_profile(head)))
        api.add(["registered.perf"], cwd=root)
        api.status(cwd=root)
    finally:
        for name, value in old.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return root, shas


def tree_hashes(directory: Path) -> dict[str, str]:
    hashes = {}
    for path in sorted(directory.rglob("*")):
        if path.is_file():
            hashes[str(path.relative_to(directory))] = hashlib.sha1(path.read_bytes()).hexdigest()
        elif path.is_dir():
            hashes[str(path.relative_to(directory)) + "/"] = ""
    return hashes


@contextlib.contextmanager
def immutable(*paths: Path):
    """``paths`` (directories) made read-only even for root, with chattr +i; skips when the filesystem cannot."""
    done: list[Path] = []
    try:
        for path in paths:
            made = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
            if made.returncode != 0:
                machine_cannot("a read-only file for root", f"chattr +i {path}: {made.stderr.strip()}")
            done.append(path)
        yield
    finally:
        for path in done:
            subprocess.run(["chattr", "-i", str(path)], check=True)


def prepare(case: Case, template, tmp_path: Path) -> tuple[Path, list[str], contextlib.AbstractContextManager]:
    root, shas = template
    repo = tmp_path / "repo"
    shutil.copytree(root, repo, symlinks=True)
    files = tmp_path / "files"
    files.mkdir()
    head = shas[-1]
    good = files / "good.perf"
    good.write_text(json.dumps(good_profile(head)))
    other = files / "other.perf"
    other.write_text(json.dumps(good_profile(shas[0])))
    fresh = files / "fresh.perf"  # valid, and not in the store yet
    fresh.write_text(json.dumps({**good_profile(head), "header": {"type": "time", "cmd": "./fresh"}}))
    bad = files / "bad.perf"
    if case.bad is not None:
        content = case.bad()
        if isinstance(content, bytes):
            bad.write_bytes(content)
        elif isinstance(content, str):
            bad.write_text(content.replace("{head}", head), encoding="utf-8", errors="surrogatepass")
        else:
            bad.write_text(json.dumps(content).replace("{head}", head))
    guard: contextlib.AbstractContextManager = contextlib.nullcontext()
    if callable(case.setup):
        case.setup(repo)
    elif case.setup == "readonly-jobs":
        guard = immutable(repo / ".perun/jobs")
    elif case.setup == "readonly-objects":
        guard = immutable(repo / ".perun/objects")
    if case.readonly:
        for pattern in case.readonly:
            if "*" not in pattern:
                (tmp_path / pattern).mkdir(parents=True, exist_ok=True)
        guard = immutable(*(p for pattern in case.readonly for p in sorted(tmp_path.glob(pattern)) if p.is_dir()))
    argv = [a.format(bad=bad, good=good, other=other, fresh=fresh, head=head) for a in case.argv]
    return repo, argv, guard


def run_in_process(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    from perun_core.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(argv)
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        os.chdir(previous)
    return code, out.getvalue(), err.getvalue()


def run_as_subprocess(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-m", "perun_core.cli.entry", *argv], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    return done.returncode, done.stdout, done.stderr


#: control characters an error line must never carry raw (they would act on the terminal)
CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def check(case: Case, code: int, stderr: str, before: dict, after: dict, around: tuple[dict, dict] = ({}, {}),
          repo: Path | None = None) -> None:
    assert code in EXIT_CODES and code == case.code, f"exit {code}, expected {case.code}: {stderr!r}"
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, stderr
    assert stderr.startswith("error: "), stderr
    assert all(line.startswith(("error:", "hint:", "  ")) for line in stderr.splitlines()), stderr
    if case.words:  # alternatives separated by "|", compared without regard to case
        assert any(word.lower() in errors[0].lower() for word in case.words.split("|")), f"{case.words!r} not in {errors[0]!r}"
    assert after == before, "the store changed: " + ", ".join(
        sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k)))
    assert not CONTROLS.search(stderr), f"a raw control character on stderr: {stderr!r}"
    changed = sorted(k for k in around[0].keys() | around[1].keys() if around[0].get(k) != around[1].get(k))
    assert not changed, f"files around the repository changed: {changed}"
    for path in case.absent:
        assert repo is not None and not (repo / path).exists(), f"{path} was left behind"


def _params(cases: list[Case]) -> list:
    return [pytest.param(c, id=c.name, marks=[pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail else [])
            for c in cases]


def run_case(case: Case, template: Path, tmp_path: Path, runner) -> None:
    """Run ``case`` with ``runner`` (in this process or as a real one) and hold it to its expectations."""
    repo, argv, guard = prepare(case, template, tmp_path)
    with guard:
        before, outside = tree_hashes(repo / ".perun"), tree_hashes(tmp_path)
        code, _, stderr = runner(argv, repo)
        after, outside_after = tree_hashes(repo / ".perun"), tree_hashes(tmp_path)
    check(case, code, stderr, before, after, (outside, outside_after), repo)


@pytest.mark.parametrize("case", _params(CASES))
def test_bad_input(case, template, tmp_path):
    run_case(case, template, tmp_path, run_in_process)


#: a sample of the table, run as real processes
SUBPROCESS = [c for c in CASES if c.name in (
    "add: amount NaN", "add: uid with a lone surrogate", "add: very deep JSON (100000 levels)",
    "check profiles: no uid", "postprocessby: amount Infinity", "show bars --width 100000000",
    "show 99@i", "config set execute.timeout -1", "status with broken YAML in local.yml",
    "add into a read-only store", "show raw -f into a missing directory", "check profiles -o into a missing directory",
)]


#: the newer commands' sample, as real processes too
SUBPROCESS_NEW = [c for c in NEW_COMMAND_CASES if c.name in (
    "import pytest-benchmark: deeply nested", "import hyperfine: time Infinity", "import a named pipe nobody writes",
    "diff report -f onto a full disk", "diff --width 100000000", "fuzz -t nan", "deltadebugging -o in a read-only directory",
    "fetch from a newer perun format", "push to an empty remote name", "fsck --stale-after nan",
    "convert -o onto a full disk", "check head --explain-dir below a file",
)]


def test_the_sample_is_complete():
    assert len(SUBPROCESS) == 12 and len(CASES) >= 150
    assert len(SUBPROCESS_NEW) == 12 and len(NEW_COMMAND_CASES) >= 60


@pytest.mark.parametrize("case", _params(SUBPROCESS + SUBPROCESS_NEW))
def test_bad_input_in_a_subprocess(case, template, tmp_path):
    run_case(case, template, tmp_path, run_as_subprocess)
