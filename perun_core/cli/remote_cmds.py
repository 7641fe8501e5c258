"""``push``, ``fetch`` and ``pull``: thin front ends over :mod:`perun_core.api.remote`.

Imported by ``perun-core --help``: only click and the standard library at module level.
Progress goes to stderr (on a terminal, one line redrawn in place); results to stdout.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import click

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
def _not_empty(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    # an empty REMOTE would be the path '' (this very repository), never what was meant
    if value is not None and not value.strip():
        raise click.BadParameter("expected a remote name, URL or path, got an empty one", param=param)
    return value


_REMOTE = click.argument("remote", required=False, metavar="[REMOTE]", callback=_not_empty)
_REMOTE_HELP = ("REMOTE is a remote of the git repository (default origin), or a URL or path of any git "
                "repository (a bare one by path or file://, ssh://, https://, git://).")


def _progress(quiet: bool) -> Callable[[Any], None]:
    # lazy: keeps `perun-core --help` light
    from perun_core.api import remote as api_remote

    tty = sys.stderr.isatty()
    last = [0.0]

    def on_event(event: Any) -> None:
        if quiet:
            return
        if isinstance(event, api_remote.PushRetried):
            click.echo(f"another push landed first ({event.reason}); merged it, trying again", err=True)
        elif isinstance(event, api_remote.TransferProgress) and tty:
            now = time.monotonic()
            if event.done < event.total and now - last[0] < 0.1:
                return
            last[0] = now
            end = "\n" if event.done >= event.total else ""
            click.echo(f"\r{event.phase}: {event.done}/{event.total}", err=True, nl=bool(end))

    return on_event


def _plural(count: int, word: str, words: str | None = None) -> str:
    return f"{count} {word if count == 1 else (words or word + 's')}"


@click.command("push", context_settings=CONTEXT)
@_REMOTE
@click.option("-n", "--dry-run", is_flag=True, help="Tell what would be sent; send nothing.")
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
def push(remote: str | None, dry_run: bool, quiet: bool) -> None:
    """Send registered profiles, their index entries and check findings to REMOTE.

    They are kept under refs/perun/profiles, so any git host stores them;
    branches and the working tree are never touched.  A push that another
    one beat merges it and tries again, never forcing.
    """
    # lazy: keeps `perun-core --help` light
    from perun_core.api import remote as api_remote

    result = api_remote.push(remote, dry_run=dry_run, on_event=_progress(quiet))
    what = (f"{_plural(result.profiles, 'profile')}, {_plural(result.indexes, 'index', 'indexes')} updated, "
            f"{_plural(result.changes, 'change record')}")
    if result.up_to_date:
        click.echo(f"{result.remote.name}: up to date")
    elif dry_run:
        click.echo(f"{result.remote.name}: would send {what}")
    else:
        retried = f" after {_plural(result.attempts - 1, 'retry', 'retries')}" if result.attempts > 1 else ""
        click.echo(f"{result.remote.name}: sent {what}{retried}")


push.help = f"{push.help}\n\n{_REMOTE_HELP}"


@click.command("fetch", context_settings=CONTEXT)
@_REMOTE
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
def fetch(remote: str | None, quiet: bool) -> None:
    """Receive REMOTE's profiles without merging them ('status' then counts them)."""
    # lazy: keeps `perun-core --help` light
    from perun_core.api import remote as api_remote

    result = api_remote.fetch(remote, on_event=_progress(quiet))
    if result.commit is None:
        click.echo(f"{result.remote.name}: holds no perun profiles yet")
    else:
        click.echo(f"{result.remote.name}: {_plural(result.remote_only, 'profile')} not here yet"
                   + (" (run 'perun-core pull')" if result.remote_only else ""))


fetch.help = f"{fetch.help}\n\n{_REMOTE_HELP}"


@click.command("pull", context_settings=CONTEXT)
@_REMOTE
@click.option("-n", "--dry-run", is_flag=True, help="Tell what would be taken; change nothing here.")
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
def pull(remote: str | None, dry_run: bool, quiet: bool) -> None:
    """Fetch REMOTE's profiles and merge them: a union, nothing here is replaced or lost."""
    # lazy: keeps `perun-core --help` light
    from perun_core.api import remote as api_remote

    result = api_remote.pull(remote, dry_run=dry_run, on_event=_progress(quiet))
    if result.commit is None:
        click.echo(f"{result.remote.name}: holds no perun profiles yet")
        return
    what = (f"{_plural(result.profiles, 'profile')}, {_plural(result.entries, 'index entry', 'index entries')}, "
            f"{_plural(result.changes, 'change record')}")
    if not (result.profiles or result.entries or result.changes):
        click.echo(f"{result.remote.name}: already up to date")
    else:
        click.echo(f"{result.remote.name}: {'would take' if dry_run else 'took'} {what}")


pull.help = f"{pull.help}\n\n{_REMOTE_HELP}"


def status_lines() -> Iterator[str]:
    """Lines for ``status``: per remote, profiles only here / only there as of the last transfer."""
    # lazy: keeps `perun-core --help` light
    from perun_core import api

    try:
        states = api.remote_status()
    except Exception:  # noqa: BLE001 - a damaged private store must not hide the status listing
        return
    if not states:
        return
    yield ""
    yield "Remotes (as of the last push, fetch or pull):"
    for state in states:
        when = api.local_time(state.seen)  # with the zone, as every time of status
        yield (f"  {state.remote.name}: {state.local_only} profile{'s' if state.local_only != 1 else ''} only here, "
               f"{state.remote_only} only there (seen {when})")
