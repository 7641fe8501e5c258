"""push, fetch, pull and status against git remotes, through dulwich.

What travels is described in :mod:`perun_core.remote.layout`.  Git objects
never enter the user's repository: they live in a private bare repository,
``.perun/remote``, which also keeps, per remote, the commit last seen there
(``refs/heads/<key>`` there) so ``status`` can count local-only and
remote-only profiles without contacting anyone.  The user's working tree,
index and branches are never touched; the user's git configuration is only
read, to turn a remote's name into its URL.  Credentials are whatever the
transport already uses (ssh keys and agents, the URL); perun stores none.

Crash safety: on a remote, a push becomes visible only when its ref moves
(after the whole pack arrived; an interrupted transfer leaves the ref where
it was).  Locally, profiles arrive object first, index last, each file
written atomically, so an interrupted pull never leaves an index that names
a missing object; the tracking state moves only after a transfer completed.

Remotes and their transport are in :mod:`perun_core.remote.transport`, the
private store in :mod:`perun_core.remote.store`.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import Interrupted, RemoteError
from . import has_transferred, incoming, layout
from .events import PushRetried, RemoteContacted, TransferProgress, TransferStarted
from .store import PRIVATE_DIR, TRACKING_FILE, PrivateStore, session
from .transport import Remote, client_of, remote_head, resolve_remote, talking

__all__ = ["FetchResult", "PullResult", "PushResult", "RemoteState", "fetch", "pull", "push", "remote_states"]

MAX_ATTEMPTS = 60
_IDENTITY = b"perun <perun@localhost>"
_ZERO = b"0" * 40

EventCallback = Callable[[Any], None]


@dataclass(frozen=True, slots=True)
class PushResult:
    remote: Remote
    commit: str | None
    profiles: int          # profile objects sent
    indexes: int           # commits whose index was new or changed on the remote
    changes: int           # change records sent
    attempts: int = 1
    dry_run: bool = False

    @property
    def up_to_date(self) -> bool:
        return not (self.profiles or self.indexes or self.changes)


@dataclass(frozen=True, slots=True)
class FetchResult:
    remote: Remote
    commit: str | None     # None: the remote holds no perun profiles
    remote_only: int       # profiles there and not here
    received: bool         # objects were transferred


@dataclass(frozen=True, slots=True)
class PullResult:
    remote: Remote
    commit: str | None
    profiles: int          # profile objects stored here
    entries: int           # index entries added here
    changes: int           # change records taken
    dry_run: bool = False


@dataclass(frozen=True, slots=True)
class RemoteState:
    """What the last fetch or push saw of one remote; counts are of profile objects."""

    remote: Remote
    commit: str
    seen: float
    local_only: int
    remote_only: int


def _stop_if(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Interrupted("transfer cancelled")


class _Meter:
    """Emits TransferProgress at most ~50 times per phase."""

    def __init__(self, emit: EventCallback, phase: str, total: int, cancel: threading.Event | None = None) -> None:
        self.emit, self.phase, self.total, self.cancel = emit, phase, total, cancel
        self.done = 0
        self.every = max(1, total // 50)
        emit(TransferStarted(phase, total))

    def tick(self, count: int = 1) -> None:
        before = self.done
        self.done += count
        if self.done // self.every != before // self.every or self.done >= self.total:
            self.emit(TransferProgress(self.phase, min(self.done, self.total), self.total))

    def step(self) -> None:
        """One more done, after stopping if the transfer was cancelled (the step callback of :mod:`.incoming`)."""
        _stop_if(self.cancel)
        self.tick()


def _receive(private: PrivateStore, client: Any, path: str, remote: Remote, head: bytes | None,
             emit: EventCallback) -> bool:
    """Bring the remote's commit ``head`` into the private store; whether anything was transferred."""
    if head is None or head in private.store:
        return False
    emit(TransferStarted("receiving", 0))

    def wants(refs: Any, depth: Any = None) -> list[bytes]:
        return [head] if head not in private.store else []

    def progress(message: bytes) -> None:
        text = message.decode("utf-8", "replace").strip()
        match = re.search(r"(\d+)/(\d+)", text)
        if match:
            emit(TransferProgress("receiving", int(match.group(1)), int(match.group(2))))

    try:
        with talking(remote):
            client.fetch(path, private.git, determine_wants=wants, progress=progress)
    except KeyError:  # a repository on this machine, read in this process, lacks what its ref names
        raise RemoteError(remote.name, f"{layout.REF.decode()} names {head.decode()[:12]}, which the remote "
                                       "does not have", hint="its repository is damaged; nothing was stored") from None
    if head not in private.store:
        raise RemoteError(remote.name, f"{layout.REF.decode()} {head.decode()[:12]} was announced but not sent")
    return True


def _flat_of(private: PrivateStore, commit: bytes | None, remote: Remote) -> layout.Flat:
    if commit is None:
        return {}
    return layout.read_flat(private.store, layout.check_format(private.store, commit, remote.name), remote.name)


# -- push ------------------------------------------------------------------------------------------------

@dataclass(slots=True)
class _Plan:
    flat: layout.Flat
    blobs: list[Any] = field(default_factory=list)
    profiles: int = 0
    indexes: int = 0
    changes: int = 0


def _plan_push(repo: Any, private: PrivateStore, remote_flat: layout.Flat, remote: Remote,
               emit: EventCallback, cancel: threading.Event | None, *, make: bool) -> _Plan:
    """The merged tree of the remote's profiles and ours; with ``make`` the new blobs too."""
    from dulwich.objects import Blob

    inventory = layout.local_inventory(repo.perun_dir)
    plan = _Plan(dict(remote_flat))
    plan.flat[layout.FORMAT_FILE] = remote_flat.get(layout.FORMAT_FILE) or _blob(plan, layout.format_document(), True)
    new_objects = [sha for sha in inventory.objects if layout.object_key(sha) not in remote_flat]
    meter = _Meter(emit, "preparing", len(new_objects) + len(inventory.indexes) + len(inventory.changes))
    for sha in sorted(new_objects):
        _stop_if(cancel)
        if make:
            blob = Blob.from_string(inventory.objects[sha].read_bytes())
            plan.blobs.append(blob)
            plan.flat[layout.object_key(sha)] = blob.id
        else:
            plan.flat[layout.object_key(sha)] = _ZERO
        plan.profiles += 1
        meter.tick()
    present = {layout.name_of(k, layout.OBJECTS) for k in plan.flat if k.startswith(layout.OBJECTS)}
    for minor, path in sorted(inventory.indexes.items()):
        _stop_if(cancel)
        key = layout.index_key(minor)
        mine = [e for e in repo.entries_with_metadata(minor) if e.checksum in present]
        theirs: list[Any] = []
        if key in remote_flat:
            data = layout.blob_of(private.store, remote_flat[key], remote.name, key.decode())
            theirs = layout.decode_remote_index(data, key, remote.name)
        merged = layout.union_sorted(theirs, mine)
        meter.tick()
        if not merged:
            continue
        data = layout.encode_index(merged)
        blob_id = Blob.from_string(data).id
        if remote_flat.get(key) != blob_id:
            plan.flat[key] = _blob(plan, data, make)
            plan.indexes += 1
    for minor, path in sorted(inventory.changes.items()):
        key = layout.changes_key(minor)
        mine_bytes = path.read_bytes()
        theirs_bytes = private.store[remote_flat[key]].data if key in remote_flat else None
        chosen = mine_bytes if theirs_bytes is None else layout.newer_changes(mine_bytes, theirs_bytes)
        meter.tick()
        if chosen is not theirs_bytes and chosen != theirs_bytes:
            plan.flat[key] = _blob(plan, chosen, make)
            plan.changes += 1
    return plan


def _blob(plan: _Plan, data: bytes, make: bool) -> bytes:
    from dulwich.objects import Blob

    blob = Blob.from_string(data)
    if make:
        plan.blobs.append(blob)
    return blob.id


def push(repo: Any, remote_name: str | None = None, *, dry_run: bool = False,
         on_event: EventCallback | None = None, cancel: threading.Event | None = None) -> PushResult:
    """Send every profile, index entry and change record the remote lacks; see the module docstring.

    A push that another one beat to the remote fetches that one, merges and
    tries again (never forcing).  Raises RemoteError, RemoteFormatTooNew,
    Interrupted.
    """
    from dulwich.objects import Commit

    emit = on_event or (lambda event: None)
    remote = resolve_remote(repo, remote_name)
    client, path = client_of(remote)
    with session(repo) as private:
        for attempt in range(1, MAX_ATTEMPTS + 1):
            _stop_if(cancel)
            head = remote_head(client, path, remote)
            emit(RemoteContacted(remote.name, remote.url, head is not None))
            _receive(private, client, path, remote, head, emit)
            remote_flat = _flat_of(private, head, remote)
            plan = _plan_push(repo, private, remote_flat, remote, emit, cancel, make=not dry_run)
            if not (plan.profiles or plan.indexes or plan.changes):
                if not dry_run and head is not None:
                    private.track(remote, head)
                return PushResult(remote, head.decode() if head else None, 0, 0, 0, attempt, dry_run)
            if dry_run:
                return PushResult(remote, head.decode() if head else None, plan.profiles, plan.indexes,
                                  plan.changes, attempt, True)
            tree_id, trees = layout.build_tree(plan.flat)
            commit = Commit()
            commit.tree = tree_id
            commit.parents = [head] if head is not None else []
            commit.author = commit.committer = _IDENTITY
            commit.author_time = commit.commit_time = int(time.time())
            commit.author_timezone = commit.commit_timezone = 0
            commit.message = (f"perun: {plan.profiles} profiles, {plan.indexes} indexes, "
                              f"{plan.changes} change records\n").encode()
            new = [o for o in (*plan.blobs, *trees) if o.id not in private.store] + [commit]
            private.store.add_objects([(o, None) for o in new])
            outcome = _send(client, path, remote, head, commit.id, private, emit, cancel)
            if outcome is None:
                private.track(remote, commit.id)
                return PushResult(remote, commit.id.decode(), plan.profiles, plan.indexes, plan.changes, attempt)
            emit(PushRetried(attempt, outcome))
            time.sleep(random.uniform(0.01, 0.05) * min(attempt, 10))
    raise RemoteError(remote.name, f"gave up after {MAX_ATTEMPTS} attempts: other pushes kept landing first",
                      hint="try again")


def _send(client: Any, path: str, remote: Remote, head: bytes | None, commit: bytes, private: PrivateStore,
          emit: EventCallback, cancel: threading.Event | None) -> str | None:
    """Move the remote's ref from ``head`` to ``commit``; None on success, else why it has to be retried."""
    raced: list[str] = []

    def update_refs(refs: dict[bytes, bytes]) -> dict[bytes, bytes]:
        current = refs.get(layout.REF)
        if current != head:
            raced.append(f"the remote moved to {current.decode()[:12] if current else 'nothing'}")
            return {}
        return {layout.REF: commit}

    def generate_pack_data(have: Any, want: Any, ofs_delta: bool = True, progress: Any = None, **_: Any) -> Any:
        count, objects = private.store.generate_pack_data(have, want, ofs_delta=ofs_delta, progress=progress)
        meter = _Meter(emit, "sending", count)

        def counted() -> Iterator[Any]:
            for item in objects:
                _stop_if(cancel)
                yield item
                meter.tick()

        return count, counted()

    from dulwich.file import FileLocked

    try:
        with talking(remote):
            result = client.send_pack(path, update_refs, generate_pack_data)
    except FileLocked:
        return "another push was updating the remote's ref"
    if raced:
        return raced[0]
    status = getattr(result, "ref_status", None) or {}
    problem = status.get(layout.REF)
    if problem:
        return str(problem)
    return None


# -- fetch and pull -----------------------------------------------------------------------------------

def _local_object_names(repo: Any) -> set[str]:
    return set(layout.local_inventory(repo.perun_dir).objects)


def _examined(repo: Any, private: PrivateStore, remote: Remote, head: bytes, emit: EventCallback,
              cancel: threading.Event | None) -> incoming.Incoming:
    """The remote's commit ``head``, every part this side lacks checked (see :mod:`.incoming`)."""
    flat = _flat_of(private, head, remote)
    return incoming.examine(repo, private.store, flat, remote.name, _Meter(emit, "verifying", len(flat), cancel).step)


def fetch(repo: Any, remote_name: str | None = None, *, on_event: EventCallback | None = None,
          cancel: threading.Event | None = None) -> FetchResult:
    """Bring the remote's profiles into the private store, checked, and remember what it holds (nothing is merged).

    A remote holding anything this side would refuse to pull is refused now,
    and the private store is left as it was.
    """
    emit = on_event or (lambda event: None)
    remote = resolve_remote(repo, remote_name)
    client, path = client_of(remote)
    with session(repo) as private:
        head = remote_head(client, path, remote)
        emit(RemoteContacted(remote.name, remote.url, head is not None))
        if head is None:
            return FetchResult(remote, None, 0, False)
        received = _receive(private, client, path, remote, head, emit)
        taken = _examined(repo, private, remote, head, emit, cancel)
        _stop_if(cancel)
        private.track(remote, head)
        return FetchResult(remote, head.decode(), len(taken.objects), received)


def pull(repo: Any, remote_name: str | None = None, *, dry_run: bool = False,
         on_event: EventCallback | None = None, cancel: threading.Event | None = None) -> PullResult:
    """Fetch, then take every profile, index entry and newer change record the remote has.

    Everything is checked before anything is stored, and stored whole or not
    at all (:mod:`.incoming`); a refused or failed pull leaves ``.perun`` as it was.
    """
    emit = on_event or (lambda event: None)
    remote = resolve_remote(repo, remote_name)
    client, path = client_of(remote)
    with session(repo) as private:
        head = remote_head(client, path, remote)
        emit(RemoteContacted(remote.name, remote.url, head is not None))
        if head is None:
            return PullResult(remote, None, 0, 0, 0, dry_run)
        _receive(private, client, path, remote, head, emit)
        taken = _examined(repo, private, remote, head, emit, cancel)
        if dry_run:
            return PullResult(remote, head.decode(), *incoming.would_take(repo, taken), dry_run=True)
        counts = incoming.store(repo, private.store, taken, _Meter(emit, "importing", taken.work, cancel).step)
        private.track(remote, head)  # last: a pull that failed leaves the private store as it was too
        return PullResult(remote, head.decode(), *counts, dry_run=False)


# -- status --------------------------------------------------------------------------------------------

def remote_states(repo: Any) -> list[RemoteState]:
    """Per remote fetched from or pushed to: profiles only here and only there, as of that transfer.

    Contacts no remote and takes no lock; empty when nothing was ever transferred.
    """
    from dulwich.repo import Repo

    if not has_transferred(repo.perun_dir):
        return []
    path = Path(repo.perun_dir) / PRIVATE_DIR
    git = Repo(str(path))
    try:
        info: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):
            info = json.loads((path / TRACKING_FILE).read_bytes())
        mine = _local_object_names(repo)
        states = []
        for key, details in sorted(info.items() if isinstance(info, dict) else ()):
            if not isinstance(details, dict):
                continue
            remote = Remote(str(details.get("name", key)), str(details.get("url", "")))
            try:
                commit = git.refs[f"refs/heads/{key}".encode()]
                tree = git.object_store[commit].tree
                root = git.object_store[tree]
            except KeyError:
                continue  # the private store lost it: the next transfer brings it back
            theirs = set()
            if b"objects" in root:  # a store holding only indexes and findings has no objects tree
                for fan in git.object_store[root[b"objects"][1]].iteritems():
                    prefix = fan.path.decode()
                    theirs.update(prefix + leaf.path.decode() for leaf in git.object_store[fan.sha].iteritems())
            states.append(RemoteState(remote, commit.decode(), float(details.get("seen", 0.0)),
                                      len(mine - theirs), len(theirs - mine)))
        return states
    finally:
        git.close()
