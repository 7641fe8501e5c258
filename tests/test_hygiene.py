"""Import hygiene: the core stays headless and --help stays light."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("textual", "plotext", "numpy", "scipy")


def modules_after(code: str) -> set[str]:
    result = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sys.modules))"],
                            capture_output=True, text=True, cwd=ROOT, check=True)
    return set(result.stdout.split())


def test_help_imports_nothing_heavy():
    code = ("import sys\nsys.argv=['perun-core','--help']\nfrom perun_core.cli.main import cli\n"
            "try:\n    cli.main(standalone_mode=False)\nexcept SystemExit:\n    pass")
    loaded = modules_after(code)
    assert "perun_core.cli.main" in loaded
    assert not {m for m in loaded if m.split(".")[0] in HEAVY + ("rich", "dulwich", "yaml")}


CORE_MODULES = sorted(
    "perun_core." + str(p.relative_to(ROOT / "perun_core").with_suffix("")).replace("/", ".")
    for p in (ROOT / "perun_core").rglob("*.py") if p.name != "__init__.py")

#: Imports each module named in argv in a child forked from one interpreter, which is as fresh as a new one for
#: the question asked (the parent has loaded no perun module and no textual), but 230 modules then cost one
#: start-up, not 230: the parent loads the third-party libraries the modules share, once.  Prints a JSON object:
#: module -> the modules its child had loaded, or "!" and the error its import raised.
FORKED_IMPORTS = r"""
import json, os, sys
import click, dulwich.repo, numpy, yaml
assert not [m for m in sys.modules if m.split(".")[0] in ("perun_core", "textual")], "the parent must be fresh"
loaded = {}
for module in sys.argv[1:]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            __import__(module)
            text = "\n".join(sys.modules)
        except BaseException as error:
            text = "!" + repr(error)
        with os.fdopen(write, "w") as out:
            out.write(text)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as source:
        loaded[module] = source.read()
    os.waitpid(pid, 0)
print(json.dumps(loaded))
"""


@pytest.fixture(scope="module")
def loaded_by_core_module() -> dict[str, str]:
    result = subprocess.run([sys.executable, "-c", FORKED_IMPORTS, *CORE_MODULES], capture_output=True, text=True,
                            cwd=ROOT, check=True)
    return json.loads(result.stdout)


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_modules_never_import_textual(module, loaded_by_core_module):
    loaded = loaded_by_core_module[module]
    assert not loaded.startswith("!"), f"import {module} failed: {loaded[1:]}"
    assert "textual" not in {m.split(".")[0] for m in loaded.split()}


def test_core_never_prints_or_exits():
    offenders = []
    for path in (ROOT / "perun_core").rglob("*.py"):
        if "cli" in path.parts:
            continue
        text = path.read_text()
        for needle in ("print(", "sys.exit(", "input("):
            if needle in text:
                offenders.append(f"{path.name}: {needle}")
    assert offenders == []


def help_run(cache: Path, *argv: str, columns: str = "100") -> tuple[str, set[str]]:
    """stdout of ``perun-core ARGV`` through the console script's entry, and the modules it loaded."""
    code = ("import sys, io, contextlib\nout = io.StringIO()\n"
            "from perun_core.cli.entry import main\n"
            f"with contextlib.redirect_stdout(out):\n    main({list(argv)!r})\n"
            "sys.stderr.write(out.getvalue())\nprint('\\n'.join(sys.modules))")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cache), "XDG_CACHE_HOME": str(cache), "COLUMNS": columns}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                            env=env)
    return result.stderr, set(result.stdout.split())


def test_top_level_help_is_cached_and_printed_without_click(tmp_path):
    first, loaded_first = help_run(tmp_path, "--help")
    assert "click" in loaded_first and "Commands:" in first
    again, loaded_again = help_run(tmp_path, "--help")
    assert again == first
    assert "click" not in loaded_again and "perun_core.cli.main" not in loaded_again
    assert help_run(tmp_path, "-h")[0] == first
    # the same text click prints when it renders the help itself
    direct = subprocess.run([sys.executable, "-m", "perun_core.cli.main", "--help"], capture_output=True, text=True,
                            cwd=ROOT, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "COLUMNS": "100"})
    assert direct.stdout == first


def test_help_cache_is_per_width_and_ignores_a_damaged_file(tmp_path):
    wide, _ = help_run(tmp_path, "--help", columns="100")
    narrow, loaded = help_run(tmp_path, "--help", columns="60")
    assert "click" in loaded and narrow != wide
    cached = sorted((tmp_path / "perun").glob("cli-help-*.txt"))
    assert len(cached) == 2
    for path in cached:
        path.write_text(path.read_text()[:40])  # cut short, as by a full disk
    redone, loaded = help_run(tmp_path, "--help", columns="100")
    assert redone == wide and "click" in loaded


#: What `status` and `log` never need: the sharing and view engines, numeric and plotting libraries, and
#: (on a warm cache) neither git's object machinery nor the YAML parser.
LISTING_NEVER = ("perun_core.remote.sync", "perun_core.remote.transport", "perun_core.remote.store",
                 "perun_core.views", "perun_core.api.views", "perun_core.profile.codec", "numpy", "scipy",
                 "plotext", "textual", "rich")
LISTING_NOT_WHEN_WARM = ("dulwich", "yaml")


def listing_modules(root: Path, *argv: str) -> set[str]:
    """The modules ``perun-core ARGV`` loaded, run through the console script's entry in ``root``."""
    code = ("import sys, io, contextlib\nfrom perun_core.cli.entry import main\nout = io.StringIO()\n"
            f"with contextlib.redirect_stdout(out):\n    main({list(argv)!r})\n"
            "sys.stderr.write(out.getvalue())\nprint('\\n'.join(sys.modules))")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root.parent), "PERUN_CONFIG_DIR": str(root.parent / "cfg")}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=True,
                            env=env)
    assert "benchmark commit" in result.stderr or "On major version" in result.stderr
    return set(result.stdout.split())


@pytest.mark.parametrize("argv", [("--no-pager", "status"), ("--no-pager", "log", "-s"), ("--no-pager", "log")])
def test_status_and_log_load_only_what_they_use(tmp_path, argv):
    sys.path.insert(0, str(ROOT / "tests"))
    from gitrepo import fast_linear_history

    from perun_core import api

    root = tmp_path / "project"
    fast_linear_history(root, 5)
    api.init(root)
    first = listing_modules(root, *argv)
    assert not {m for m in first if m.startswith(LISTING_NEVER)}
    # the caches of the first run (history, parsed configuration) spare git's objects and YAML next time;
    # the worktree answer is kept only for files older than the racy window, so the checkout is aged first
    old = 1_600_000_000
    for path in (root / "bench.txt", root / ".git" / "index", root / ".git" / "config"):
        os.utime(path, (old, old))
    listing_modules(root, *argv)
    again = listing_modules(root, *argv)
    assert not {m for m in again if m.startswith(LISTING_NEVER + LISTING_NOT_WHEN_WARM)}


def command_modules(root: Path, *argv: str) -> tuple[set[str], str]:
    """The modules ``perun-core ARGV`` loaded in ``root`` (which must succeed), and what it printed."""
    code = ("import sys, io, contextlib\nfrom perun_core.cli.entry import main\nout = io.StringIO()\n"
            f"with contextlib.redirect_stdout(out):\n    main({list(argv)!r})\n"
            "sys.stderr.write(out.getvalue())\nprint('\\n'.join(sys.modules))")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root.parent), "PERUN_CONFIG_DIR": str(root.parent / "cfg")}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, env=env)
    assert result.returncode == 0, result.stderr
    return set(result.stdout.split()), result.stderr


#: What an import of one kind never needs: git's object store and the other importers.
IMPORT_NEVER = ("dulwich", "perun_core.importers.perf", "perun_core.importers.callgrind",
                "perun_core.importers.benchmarks", "perun_core.importers.pybench", "perun_core.importers.memray")
#: What postprocessing a profile never needs: the job runner, its processes and worktrees, the check engine,
#: the units' requirement checks (which start programs), the events of a run nobody listens to, and tempfile
#: (with shutil and random) for the temporary file of a write.
POSTPROCESS_NEVER = ("perun_core.runner.run", "perun_core.runner.process", "perun_core.runner.worktree",
                     "perun_core.check", "dulwich", "perun_core.units.requirements", "perun_core.events",
                     "subprocess", "tempfile")


def test_import_and_postprocessby_load_only_what_they_use(tmp_path):
    sys.path.insert(0, str(ROOT / "tests"))
    from gitrepo import fast_linear_history

    from perun_core import api
    from perun_core.profile.codec import store_profile_at
    from perun_core.profile.model import Profile

    root = tmp_path / "project"
    [head] = fast_linear_history(root, 1)
    api.init(root)
    (tmp_path / "stacks.folded").write_text("main;work;leaf 3\nmain;idle 2\n")
    loaded, printed = command_modules(root, "import", "folded", str(tmp_path / "stacks.folded"), "-m", "HEAD")
    assert f"origin {head[:7]}" in printed  # -m HEAD is the commit HEAD names
    assert "perun_core.importers.stacks" in loaded
    assert not {m for m in loaded if m.startswith(IMPORT_NEVER)}

    resources = [{"uid": "f", "type": "mixed", "subtype": "time delta", "amount": 2.0 * n + 1.0,
                  "structure-unit-size": n} for n in range(1, 40)]
    profile = Profile.from_dict({"header": {"type": "mixed", "units": {"mixed(time delta)": "us"}, "cmd": "c"},
                                 "snapshots": [], "global": {"timestamp": 1.0, "resources": resources}})
    store_profile_at(profile, root / ".perun" / "jobs" / "input.perf")
    loaded, printed = command_modules(root, "postprocessby", "input.perf", "regression_analysis", "-m", "full")
    assert "Postprocessed" in printed and "perun_core.analysis.regression" in loaded
    assert not {m for m in loaded if m.startswith(POSTPROCESS_NEVER)}


def test_postprocessby_of_a_registered_profile_loads_only_what_it_uses(tmp_path):
    """``postprocessby 0@i`` reads the object store and HEAD's index: no git objects (HEAD is read from the ref
    files), and on warm caches no YAML parser either, beside what postprocessing never needs."""
    sys.path.insert(0, str(ROOT / "tests"))
    from gitrepo import fast_linear_history

    from perun_core import api
    from perun_core.profile.model import Profile
    from perun_core.storage.repository import PerunRepository

    root = tmp_path / "project"
    [head] = fast_linear_history(root, 1)
    api.init(root)
    resources = [{"uid": "f", "type": "mixed", "subtype": "time delta", "amount": 3.0 * n + 2.0,
                  "structure-unit-size": n} for n in range(1, 40)]
    profile = Profile.from_dict({"header": {"type": "mixed", "units": {"mixed(time delta)": "us"}, "cmd": "c"},
                                 "snapshots": [], "global": {"timestamp": 1.0, "resources": resources}})
    with PerunRepository(root) as repo:
        repo.register(head, profile, "input.perf", 1.0)
    first, printed = command_modules(root, "postprocessby", "0@i", "regression_analysis", "-m", "full")
    assert "Postprocessed input.perf" in printed and "perun_core.storage.objects" in first
    assert not {m for m in first if m.startswith(POSTPROCESS_NEVER)}
    again, _ = command_modules(root, "postprocessby", "0@i", "regression_analysis", "-m", "full")
    assert not {m for m in again if m.startswith(POSTPROCESS_NEVER + ("yaml",))}
