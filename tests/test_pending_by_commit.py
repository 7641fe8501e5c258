"""Each commit lists only its own pending profiles, with the repository-wide ``i@p`` tags the original Perun gives.

Through the command line as a user runs it (status, log, show, add, rm) and
through the porcelain the TUI's profile list uses (``api.log`` entries).
"""

from __future__ import annotations

import os

from conftest import run_cli, time_profile, write_pending

from perun_core import api


def ok(*args: str, cwd) -> str:
    done = run_cli(*args, cwd=cwd)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


def pending_at(root, name: str, origin: str | None, mtime: int, **keywords) -> None:
    path = write_pending(root, name, time_profile(origin, **keywords))
    os.utime(path, (mtime, mtime))  # tags follow time order (format.sort_profiles_by: time)


def tags(listing: str, marker: str = "@p") -> dict[str, str]:
    """tag -> the command shown on its row, of every pending row of a status listing."""
    found = {}
    for line in listing.splitlines():
        cells = [cell.strip() for cell in line.split("┃")]
        if len(cells) > 2 and cells[0].endswith(marker):
            found[cells[0]] = cells[2]
    return found


def test_status_lists_only_heads_pending_profiles_and_counts_the_others(perun_repo):
    root, (first, head) = perun_repo
    pending_at(root, "old.perf", first, 1_700_000_100, cmd="./old")
    pending_at(root, "new.perf", head, 1_700_000_200, cmd="./new")
    status = ok("status", cwd=root)
    assert tags(status) == {"1@p": "./new"}
    assert "Pending profiles (1):" in status and "1 more pending profile of other commits" in status
    short = ok("status", "-s", cwd=root)
    assert "1 pending" in short.splitlines()[0] and "./old" not in short
    # log lists each under its own commit, with the tags every command takes
    log = ok("--no-pager", "log", cwd=root)
    head_part, first_part = log.split(f"Minor Version {first}")
    assert "1@p [time] ./new" in head_part and "./old" not in head_part
    assert "0@p [time] ./old" in first_part and "pending: old.perf" in first_part
    # a tag names the same profile whichever commit -m gives
    for args in (("show", "0@p", "raw"), ("show", "-m", "HEAD~1", "0@p", "raw")):
        shown = ok(*args, cwd=root)
        assert "./old" in shown and "./new" not in shown
    assert "./new" in ok("show", "1@p", "raw", cwd=root)
    ok("add", "-m", "HEAD~1", "0@p", cwd=root)
    assert not (root / ".perun" / "jobs" / "old.perf").exists() and (root / ".perun" / "jobs" / "new.perf").exists()
    listing = ok("status", cwd=root)
    assert "more pending" not in listing and tags(listing) == {"0@p": "./new"}


def test_a_profile_without_an_origin_is_listed_under_head(perun_repo):
    root, (first, head) = perun_repo
    pending_at(root, "orphan.perf", None, 1_700_000_100, cmd="./orphan")
    write_pending(root, "broken.perf", "{not json")
    status = ok("status", cwd=root)
    assert set(tags(status)) == {"0@p", "1@p"} and "./orphan" in status and "broken.perf" not in status.split("┃")[0]
    log = ok("--no-pager", "log", cwd=root)
    assert "./orphan" not in log.split(f"Minor Version {first}")[1]


def test_pending_tags_count_the_whole_repository_and_move_down_when_an_earlier_one_leaves(perun_repo):
    """The documented behaviour (README, "Pending profiles and their tags")."""
    root, (first, head) = perun_repo
    pending_at(root, "other.perf", first, 1_700_000_050, cmd="./other")
    pending_at(root, "a.perf", head, 1_700_000_100, cmd="./a")
    pending_at(root, "b.perf", head, 1_700_000_200, cmd="./b")
    pending_at(root, "c.perf", head, 1_700_000_300, cmd="./c")
    # HEAD lists its own three, numbered after the other commit's older profile
    assert tags(ok("status", cwd=root)) == {"1@p": "./a", "2@p": "./b", "3@p": "./c"}
    # registering the other commit's profile moves the later tags down by one
    ok("add", "-m", "HEAD~1", "0@p", cwd=root)
    assert tags(ok("status", cwd=root)) == {"0@p": "./a", "1@p": "./b", "2@p": "./c"}
    # a newer profile takes the next number: the tags before it stay
    pending_at(root, "d.perf", head, 1_700_000_400, cmd="./d")
    assert tags(ok("status", cwd=root)) == {"0@p": "./a", "1@p": "./b", "2@p": "./c", "3@p": "./d"}
    # registering (or deleting) 1@p moves the later ones down by one: 2@p is now ./d
    ok("add", "1@p", cwd=root)
    assert tags(ok("status", cwd=root)) == {"0@p": "./a", "1@p": "./c", "2@p": "./d"}
    ok("rm", "0@p", cwd=root)
    assert tags(ok("status", cwd=root)) == {"0@p": "./c", "1@p": "./d"}
    # several tags in one command are all read before any profile is registered
    ok("add", "0@p", "1@p", cwd=root)
    listing = ok("status", cwd=root)
    assert tags(listing) == {} and sorted(tags(listing, "@i").values()) == ["./b", "./c", "./d"]


def test_the_porcelain_gives_each_history_entry_its_own_pending_profiles(perun_repo):
    root, (first, head) = perun_repo
    pending_at(root, "old.perf", first, 1_700_000_100, cmd="./old")
    pending_at(root, "new.perf", head, 1_700_000_200, cmd="./new")
    entries = {entry.version.checksum: entry for entry in api.log(None, with_profiles=True, cwd=root)}
    assert [(i.tag, i.cmd) for i in entries[head].pending] == [("1@p", "./new")]
    assert [(i.tag, i.cmd) for i in entries[first].pending] == [("0@p", "./old")]
    # from an older start too (the TUI refreshes one entry that way)
    (only,) = api.log(first, with_profiles=True, cwd=root)
    assert [i.cmd for i in only.pending] == ["./old"]
    report = api.status(cwd=root)
    assert [i.cmd for i in report.pending] == ["./new"] and report.pending_elsewhere == 1
