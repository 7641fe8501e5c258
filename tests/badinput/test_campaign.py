"""Bad input found by a campaign against the command line, run as the user runs it: ``perun-core`` as a process.

Each case is held to the contract of :mod:`.test_bad_input`: one ``error:`` line naming what is wrong, the
documented exit code, no traceback, ``.perun`` and the files around the repository unchanged.
"""

from __future__ import annotations

import gzip
import shutil
import json
from collections.abc import Callable

import pytest

from .cases import HYPERFINE, PYPERF, Case, _import, _inputs, _local, good_profile
from .test_bad_input import CONTROLS, _params, run_as_subprocess, run_case, template

from perun_core.profile.codec import iter_layout
from perun_core.profile.model import Profile

pytestmark = pytest.mark.filterwarnings("ignore")

__all__ = ["template"]  # the fixture, shared with test_bad_input


def _compact(change: Callable[[dict], None]) -> Callable[[], dict]:
    """A valid profile in the compact (columnar) layout of pending profiles, then ``change``d."""
    def make() -> dict:
        profile = Profile.from_dict(good_profile())
        doc = json.loads(b"".join(iter_layout(profile, "compact")))
        change(doc)
        return doc
    return make


def _set(*path_and_value) -> Callable[[dict], None]:
    *path, value = path_and_value

    def change(doc: dict) -> None:
        node = doc
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = value(node[path[-1]]) if callable(value) else value
    return change


_COLUMNAR = {
    "row count negative": (_set("global", "n", -3), "row count"),
    "row count a string": (_set("global", "n", "8"), "row count"),
    "a key without its column": (_set("global", "keys", lambda keys: keys[:-1]), "same length"),
    "a column without its key": (_set("global", "keys", lambda keys: [*keys, "zz"]), "same length"),
    "a key twice": (_set("global", "keys", lambda keys: [keys[0], *keys[:-1]]), "distinct"),
    "a key that is a number": (_set("global", "keys", lambda keys: [5, *keys[1:]]), "distinct strings"),
    "extra a list": (_set("extra", [1]), "extra"),
}

CAMPAIGN_CASES = [
    Case(f"{command}: compact layout, {name}", [*argv], 1, words, bad=_compact(change))
    for name, (change, words) in _COLUMNAR.items()
    for command, argv in (("add", ["add", "{bad}"]), ("show raw", ["show", "{bad}", "raw"]),
                          ("postprocessby", ["postprocessby", "{bad}", "normalizer"]))
]



def _long_integer() -> str:
    """A profile whose first resource's order is an integer of 5,000 digits (more than Python reads from text)."""
    return json.dumps(good_profile()).replace('"order": 1,', '"order": ' + "9" * 5000 + ",", 1)


_DIGITS = "9" * 5000
CAMPAIGN_CASES += [
    *(Case(f"{command}: an integer of 5,000 digits", argv, 1, "more than 4,300 digits", bad=_long_integer)
      for command, argv in (("add", ["add", "{bad}"]), ("show raw", ["show", "{bad}", "raw"]),
                            ("check profiles", ["check", "profiles", "{good}", "{bad}"]),
                            ("diff", ["diff", "{good}", "{bad}"]))),
    _import("hyperfine", "a time of 5,000 digits", HYPERFINE % _DIGITS, "more than 4,300 digits"),
    Case("import pyperf: a gzipped value of 5,000 digits", ["import", "pyperf", "../in/t.json.gz"], 1,
         "more than 4,300 digits", _inputs(t__json__gz=gzip.compress((PYPERF % _DIGITS).encode()))),
]



def _alias_bomb(levels: int) -> str:
    """YAML whose last anchor expands to 9**levels strings: each level an alias of the one before, nine times."""
    lines = ['l0: &l0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\ncmds: ['true']\ncollectors: [{name: time}]\n"


_BOMB = _local(_alias_bomb(7))
CAMPAIGN_CASES += [
    Case("status with an alias bomb in local.yml", ["status"], 1, "aliases", _BOMB),
    Case("run matrix with an alias bomb in local.yml", ["run", "matrix"], 1, "aliases", _BOMB),
    Case("config get with an alias bomb in local.yml", ["config", "get", "cmds"], 1, "aliases", _BOMB),
    Case("log with an alias inside its own anchor in local.yml", ["log"], 1, "contains itself",
         _local("a: &a [1, *a]\ncmds: ['true']\n")),
    Case("config get with broken YAML in local.yml", ["config", "get", "cmds"], 1, "local.yml",
         _local("cmds: [unclosed\n")),
]


CAMPAIGN_CASES += [
    _import("pyperf", "a newer format version", PYPERF.replace('"1.0"', '"99.0"') % "0.1", "version"),
    _import("pyperf", "a format version that is a number", PYPERF.replace('"1.0"', "2") % "0.1", "version"),
    # the collector's parser counts such a line as no call at all
    _import("callgrind", "a calls= line without a count", "events: Ir\nfn=main\ncfn=work\ncalls=x 1\n1 5\n"
            "totals: 5\n", "calls=COUNT"),
]

_REV = "a\udc9bb"  # the byte 0x9b, as the command line gives it to Python
CAMPAIGN_CASES += [
    Case("log of a revision that is not UTF-8", ["log", _REV], 1, "does not name a commit"),
    Case("show -m a revision that is not UTF-8", ["show", "-m", _REV, "0@i", "raw"], 1, "does not name a commit"),
    Case("add -m a revision that is not UTF-8", ["add", "-m", _REV, "{good}"], 1, "does not name a commit"),
    Case("check all from a revision that is not UTF-8", ["check", "all", _REV], 1, "does not name a commit"),
    Case("push to a remote name that is not UTF-8", ["push", _REV], 1, "not UTF-8"),
    Case("fetch from a path that is not UTF-8", ["fetch", f"../{_REV}"], 1, "not UTF-8",
         lambda root: (root.parent / _REV).mkdir()),
    Case("config set format.status to bytes that are not UTF-8", ["config", "set", "format.status", _REV], 1,
         "not UTF-8"),
    Case("config set cmds to a list holding bytes that are not UTF-8", ["config", "set", "cmds", f"[{_REV}]"], 1,
         "not UTF-8"),
]


def _locks_made_directories(root) -> None:
    """Each index lock file of the store replaced by a directory of its name: no lock can be taken."""
    locks = sorted((root / ".perun" / "locks").glob("*.lock"))
    assert locks, "the template has registered a profile, so it has an index lock"
    for lock in locks:
        lock.unlink()
        lock.mkdir()


CAMPAIGN_CASES += [
    # the object was written before the lock was tried, and stayed with no index naming it
    Case("add when the index lock cannot be taken", ["add", "{fresh}"], 1, "lock", _locks_made_directories),
    Case("import --register when the index lock cannot be taken", ["import", "folded", "--register", "../in/f.folded"],
         1, "lock", lambda root: (_locks_made_directories(root), _inputs(f__folded="main;work 5\n")(root))),
]


@pytest.mark.parametrize("case", _params(CAMPAIGN_CASES))
def test_campaign_case(case, template, tmp_path):
    run_case(case, template, tmp_path, run_as_subprocess)


def test_show_raw_writes_c1_controls_and_del_escaped(template, tmp_path):
    """json.dumps leaves U+009B (a one-character CSI on terminals that read C1 controls) and DEL raw."""
    uid = "x\x9b2J\x7fy"
    profile = good_profile(template[1][-1])
    profile["global"]["resources"][0]["uid"] = uid
    path = tmp_path / "c1.perf"
    path.write_text(json.dumps(profile, ensure_ascii=False), encoding="utf-8")
    done = run_as_subprocess(["show", str(path), "raw"], template[0])
    assert done[0] == 0, done[2]
    assert not CONTROLS.search(done[1]), repr(done[1][:400])
    assert json.loads(done[1])["global"]["resources"][0]["uid"] == uid


def test_a_repair_that_leaves_a_damaged_pending_profile_exits_1(template, tmp_path):
    """fsck --repair never removes a pending profile (the user's file): while it stays damaged, no fsck exits 0."""
    repo = tmp_path / "repo"
    shutil.copytree(template[0], repo, symlinks=True)
    pending = repo / ".perun" / "jobs" / "pending.perf"
    pending.write_bytes(pending.read_bytes()[:100])
    repaired = run_as_subprocess(["fsck", "--repair"], repo)
    assert repaired[0] == 1, repaired
    assert "pending.perf" in repaired[1] and repaired[2].startswith("error: ") and "Traceback" not in repaired[2]
    assert pending.exists()
    assert run_as_subprocess(["fsck"], repo)[0] == 1
    removed = run_as_subprocess(["rm", "0@p"], repo)  # the one pending profile of the template
    assert removed[0] == 0, removed
    assert run_as_subprocess(["fsck"], repo)[0] == 0


def _runs(head: str, amount=None) -> dict:
    """A time profile of four runs, each with its real, user and sys time (``amount``, or growing times)."""
    data = good_profile(head)
    data["global"]["resources"] = [
        {"amount": (0.1 * run + 0.01 * kind) if amount is None else amount, "uid": "./app", "type": "time",
         "subtype": subtype, "order": run} for run in range(1, 5) for kind, subtype in enumerate(("real", "user", "sys"))]
    return data


@pytest.mark.parametrize("argv, amount", [
    (["check", "profiles", "{good}", "{target}"], 0),  # runs that took no time: no stretch to compare
    (["show", "{target}", "bars"], 5e-324),  # a span of subnormal amounts: no step of ticks between them
], ids=["check profiles of zero amounts", "show bars of subnormal amounts"])
def test_valid_extreme_amounts_are_no_internal_error(template, tmp_path, argv, amount):
    root, shas = template
    head = shas[-1]
    good, target = tmp_path / "good.perf", tmp_path / "target.perf"
    good.write_text(json.dumps(_runs(head)))
    target.write_text(json.dumps(_runs(head, amount)))
    code, out, err = run_as_subprocess([a.format(good=good, target=target) for a in argv], root)
    assert code in (0, 3), err
    assert "Traceback" not in err and "internal error" not in err, err


def _pending_copied_as(name: str):
    """The template's pending profile (made at HEAD) copied to ``../in/NAME``."""
    def setup(root) -> None:
        folder = root.parent / "in"
        folder.mkdir(exist_ok=True)
        shutil.copyfile(root / ".perun" / "jobs" / "pending.perf", folder / name)
    return setup


NOT_UTF8 = "p\udc9b\udcff.perf"  # the bytes 0x9b 0xff, as the file system gives them back
EVIL = "x\x1b]0;pwned\x07\udc9by.perf"


@pytest.mark.parametrize("case", _params([
    Case("add a file whose name is not UTF-8", ["add", f"../in/{NOT_UTF8}"], 1, "UTF-8", _pending_copied_as(NOT_UTF8)),
    Case("add --keep-profile a file whose name is not UTF-8", ["add", "--keep-profile", f"../in/{NOT_UTF8}"], 1,
         "UTF-8", _pending_copied_as(NOT_UTF8)),
]))
def test_a_name_an_index_cannot_hold(case, template, tmp_path):
    run_case(case, template, tmp_path, run_as_subprocess)


@pytest.mark.parametrize("argv", [
    ["postprocessby", "../in/{evil}", "normalizer"],
    ["show", "../in/{evil}", "raw", "-f", "../in/out-{evil}"],
    ["show", "../in/{evil}", "bars", "-f", "../in/bars-{evil}.txt"],
    ["diff", "../in/{evil}", "../in/{evil}", "-f", "../in/diff-{evil}.txt"],
    ["convert", "../in/{evil}", "-o", "../in/c-{evil}"],
], ids=lambda argv: argv[0] + (" " + argv[2] if argv[0] == "show" else ""))
def test_the_line_naming_what_was_written_escapes_the_names(template, tmp_path, argv):
    root, _ = template
    repo = tmp_path / "repo"
    shutil.copytree(root, repo, symlinks=True)
    _pending_copied_as(EVIL)(repo)
    code, out, err = run_as_subprocess([a.format(evil=EVIL) for a in argv], repo)
    assert code == 0, err
    assert not CONTROLS.search(out + err), repr(out + err)
    assert "\\e]0;pwned" in out


@pytest.mark.parametrize("argv", [
    ["collect", "-f", "-c", "echo", "-a", "x\x1b]0;pwned\x07", "time"],  # the job's line names its arguments
    ["run", "job", "-f", "-b", "echo", "-w", "w\x1b[2J", "-c", "time"],
    ["install-hook", "x\x1b]0;pwned\x07"],  # click's usage error quotes the argument
], ids=["collect -a", "run job -w", "a usage error"])
def test_run_lines_and_usage_errors_escape_the_users_text(template, tmp_path, argv):
    root, _ = template
    repo = tmp_path / "repo"
    shutil.copytree(root, repo, symlinks=True)
    code, out, err = run_as_subprocess(argv, repo)
    assert code in (0, 2), err
    assert not CONTROLS.search(out + err), repr(out + err)


@pytest.mark.parametrize("steps", [
    [["config", "set", "format.status", "%cmd% x\x1b]0;pwned\x07"], ["status"], ["config", "get", "format.status"]],
    [["config", "set", "format.shortlog", "%checksum:6% x\x1b[2J %desc%"], ["log", "-s"]],
    [["init", "../new\x1b]0;pwned\x07"]],
], ids=["format.status", "format.shortlog", "init"])
def test_configured_formats_and_named_paths_are_escaped(template, tmp_path, steps):
    root, _ = template
    repo = tmp_path / "repo"
    shutil.copytree(root, repo, symlinks=True)
    for argv in steps:
        code, out, err = run_as_subprocess(argv, repo)
        assert code == 0, err
        assert not CONTROLS.search(out + err), f"{argv}: {out + err!r}"


@pytest.mark.parametrize("argv", [
    # -e 2 ends the search; the budget only has to cover the calibration on a busy machine (-t 1 did not)
    ["fuzz", "-b", "cat", "-w", "../in/seed.txt", "-o", "../out\x1b]0;pwned\x07", "-t", "30", "-e", "2",
     "--calibration", "2"],
    # a tolerance far above the noise of cat's runs on a busy machine: the shrinking is not what is tested
    ["deltadebugging", "cat", "../in/seed.txt", "-o", "../dd\x1b]0;pwned\x07", "-t", "1", "--tolerance", "0.9"],
], ids=["fuzz -o", "deltadebugging -o"])
def test_fuzzing_results_name_their_directory_escaped(template, tmp_path, argv):
    root, _ = template
    repo = tmp_path / "repo"
    shutil.copytree(root, repo, symlinks=True)
    _inputs(seed__txt="abcabcabc\n")(repo)
    code, out, err = run_as_subprocess(argv, repo)
    assert code == 0, err
    assert not CONTROLS.search(out + err), repr(out + err)


def test_numpy_warnings_are_no_lines_on_stderr(template, tmp_path):
    """Amounts near 1e300 are valid; a variance of them overflows, and numpy warned on stderr."""
    root, shas = template

    def runs(amounts: list[float]) -> dict:
        data = good_profile(shas[-1])
        subtypes = ("real", "user", "sys", "max_rss")
        data["global"]["resources"] = [
            {"amount": amount, "uid": "./app", "type": "memory" if i % 4 == 3 else "time", "subtype": subtypes[i % 4],
             "order": i // 4 + 1, "structure-unit-size": i} for i, amount in enumerate(amounts)]
        return data

    good, target = tmp_path / "good.perf", tmp_path / "target.perf"
    good.write_text(json.dumps(runs([0.128, 0.090, 0.033, 13729792, 0.142, 0.087, 0.052, 13729792])))
    target.write_text(json.dumps(runs([1e300 * (i + 1) for i in range(8)])))
    code, out, err = run_as_subprocess(["check", "profiles", str(good), str(target)], root)
    assert code in (0, 3), err
    assert "Warning" not in err, err


@pytest.mark.parametrize("view", ["bars", "flow", "scatter"])
def test_amounts_too_large_to_plot_are_one_line_naming_the_amount(template, tmp_path, view):
    # 1.7e308 is a valid float, but a plot's spans, headroom and means of it overflow: scatter was an internal
    # error (plotext floored an infinity), bars and flow drew an empty frame as if nothing were there
    root, shas = template
    target = tmp_path / "target.perf"
    target.write_text(json.dumps(_runs(shas[-1], 1.7e308)))
    code, out, err = run_as_subprocess(["show", str(target), view], root)
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith(f"error: view '{view}' cannot draw "), err
    assert "1e+300" in lines[0] and out == "", (out, err)
    # amounts up to the bound are drawn
    target.write_text(json.dumps(_runs(shas[-1], 1e299)))
    code, out, err = run_as_subprocess(["show", str(target), view], root)
    assert code == 0 and "error" not in err, err
