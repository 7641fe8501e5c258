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


def _evil_time_profile(origin: str, amount: float) -> dict:
    resources = [{"amount": amount * (1 + i / 100), "uid": f"f{EVIL}\x00\ufffe", "type": "time", "subtype": "real",
                  "order": i} for i in range(8)]
    return {"origin": origin, "header": {"type": "time", "units": {"time": "s"}, "cmd": f"./app{EVIL}\x00",
                                         "args": f"-n\x1b[2J", "workload": f"w\x9b1m"},
            "collector_info": {"name": "time", "params": {}}, "postprocessors": [],
            "global": {"time": 1.0, "resources": resources, "models": []}}


@pytest.fixture(scope="module")
def checked_repo(tmp_path_factory):
    """Two commits, each with a registered time profile whose uid and cmd carry ESC, BEL and NUL; HEAD's is slower."""
    import json

    from gitrepo import make_repo

    base = tmp_path_factory.mktemp("escaped-check")
    root = base / "repo"
    shas = make_repo(root, [{"files": {"a.txt": "one\n"}, "message": "first"},
                            {"files": {"a.txt": "two\n"}, "message": "second"}])
    env = {**os.environ, "HOME": str(base), "PERUN_CONFIG_DIR": str(base / "config"), "NO_COLOR": "1"}
    api.init(root)
    for sha, amount in zip(shas, (0.1, 0.5)):
        name = f"p{sha[:4]}.perf"
        (root / ".perun/jobs" / name).write_text(json.dumps(_evil_time_profile(sha, amount)))
        api.add([name], minor=sha, cwd=root)
    return root, env


CHECK_FORMS = [
    ["check", "head"],
    ["check", "head", "-v"],
    ["check", "head", "--format", "markdown"],
    ["check", "head", "--format", "json"],
    ["check", "head", "--format", "junit"],
    ["check", "all", "-v"],
    ["check", "all", "--format", "markdown"],
    ["check", "all", "--format", "junit"],
    ["check", "profiles", "0@i", "0@i", "-m", "HEAD"],
    ["status"],  # after the checks above: their findings, uid and all
    ["status", "-s"],
]


@pytest.mark.parametrize("argv", CHECK_FORMS, ids=" ".join)
def test_check_escapes_every_form(checked_repo, argv):
    done = perun(checked_repo, *argv)
    text = done.stdout + done.stderr
    assert done.returncode in (0, 3) and "Traceback" not in text, text
    found = CONTROLS.search(text)
    assert found is None, f"raw {found.group()!r} in {text[max(0, found.start() - 60):found.end() + 20]!r}"
    assert "\ufffe" not in text
    if "json" in argv:  # JSON keeps the uid exact, its controls as \\u escapes
        import json

        assert {record["uid"] for record in json.loads(done.stdout)} == {f"f{EVIL}\x00\ufffe"}
    elif "head" in argv or "all" in argv:
        assert "\\e]0;pwned\\x07" in done.stdout, done.stdout  # the uid is shown, visibly escaped
    if "junit" in argv:
        import xml.dom.minidom

        document = xml.dom.minidom.parseString(done.stdout.encode())  # an XML 1.0 parser accepts it
        names = [case.getAttribute("name") for case in document.getElementsByTagName("testcase")]
        assert names and all("\\e]0;pwned\\x07" in name for name in names), names
