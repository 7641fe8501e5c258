"""Control characters that arrive in inputs (frame names, file names, commands) are escaped in every output.

A folded-stacks file whose function names carry terminal escape sequences
(retitle the window, clear the screen, move the cursor) goes through
``import`` and every command that prints what it holds; none may let a raw
control character reach the terminal (:mod:`perun_core.safetext`).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from perun_core import api

CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
EVIL = "\x1b]0;pwned\x07"  # retitles the terminal
FOLDED = f"main;work{EVIL};leaf\x1b[2J 5\nmain;other\x1b[1A\x08 3\nmain;work{EVIL} 2\n"


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    from gitrepo import make_repo

    base = tmp_path_factory.mktemp("escaped")
    root = base / "repo"
    make_repo(root, [{"files": {"a.txt": "one\n"}, "message": "first"},
                     {"files": {"a.txt": "two\n"}, "message": f"second{EVIL}"}])
    env = {**os.environ, "HOME": str(base), "PERUN_CONFIG_DIR": str(base / "config"), "NO_COLOR": "1"}
    api.init(root)
    (base / f"stacks{EVIL}.folded").write_text(FOLDED)
    return root, env


def perun(repo, *argv: str) -> subprocess.CompletedProcess:
    root, env = repo
    return subprocess.run([sys.executable, "-m", "perun_core.cli.entry", *argv], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)


COMMANDS = [
    ["status"],
    ["log"],
    ["show", "0@p", "tableof"],
    ["show", "0@p", "flamegraph", "--width", "120", "--height", "20"],
    ["show", "0@p", "bars"],
    ["diff", "0@p", "0@i"],
    ["diff", "0@p", "0@i", "flamegraph", "--width", "120", "--height", "20"],
    ["diff", "0@p", "0@i", "bars"],
    ["showdiff", "0@i", "0@p", "short"],
    ["fsck"],
]


def test_no_raw_control_character_reaches_the_terminal(repo):
    imported = perun(repo, "import", "folded", f"../stacks{EVIL}.folded", "-c", f"./app{EVIL}")
    assert imported.returncode == 0, imported.stderr
    registered = perun(repo, "import", "folded", f"../stacks{EVIL}.folded", "--register", "-w", f"w{EVIL}")
    assert registered.returncode == 0, registered.stderr
    for done in (imported, registered):
        assert not CONTROLS.search(done.stdout + done.stderr), repr(done.stdout + done.stderr)
    failures = []
    for argv in COMMANDS:
        done = perun(repo, *argv)
        text = done.stdout + done.stderr
        if done.returncode != 0 or "Traceback" in text:
            failures.append(f"{' '.join(argv)}: exit {done.returncode}: {text[-300:]!r}")
        elif CONTROLS.search(text):
            found = CONTROLS.search(text)
            failures.append(f"{' '.join(argv)}: raw {found.group()!r} in {text[max(0, found.start() - 60):found.end() + 20]!r}")
    assert not failures, "\n".join(failures)


def test_an_error_naming_a_file_escapes_it(repo):
    done = perun(repo, "import", "folded", f"../missing{EVIL}.folded")
    assert done.returncode == 1 and done.stderr.startswith("error: ")
    assert not CONTROLS.search(done.stderr), repr(done.stderr)
