"""How profiles are laid out in git objects on a remote, and how two sides merge.

The remote keeps one ref of ours, :data:`REF` (``refs/perun/profiles``),
pointing to a commit whose tree is::

    format                         JSON {"format": 1, ...}: the layout version
    objects/<sha[:2]>/<sha[2:]>    a profile object, byte for byte as in .perun/objects
    indexes/<sha[:2]>/<sha[2:]>    the index of commit <sha> (binary, entries sorted)
    changes/<sha[:2]>/<sha[2:]>.json   the findings of the last check of commit <sha>

Every push makes a commit whose parent is the commit the remote held, so
the ref only ever moves forward and git hosts accept it as an ordinary
fast-forward.  Merging is a union: objects are content-addressed and never
conflict, index entries are united by (object, name), and of two change
records the one checked later wins.  The merge is commutative: two pushers
that merge each other's work end with the same tree whichever lands first.

A reader refuses a ``format`` newer than :data:`FORMAT_VERSION` before it
touches anything (:class:`~perun_core.errors.RemoteFormatTooNew`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import RemoteError, RemoteFormatTooNew, StorageError
from ..storage.index import MAGIC as INDEX_MAGIC
from ..storage.index import IndexEntry, decode_index, encode_index

REF = b"refs/perun/profiles"
FORMAT_VERSION = 1
FORMAT_FILE = b"format"
OBJECTS, INDEXES, CHANGES = b"objects/", b"indexes/", b"changes/"
_BLOB_MODE = 0o100644
_TREE_MODE = 0o040000
_HEX = frozenset("0123456789abcdef")

Flat = dict[bytes, bytes]  # path in the tree -> blob id (hex, as bytes)
#: the hint of every refusal of what a remote holds
REFUSED_HINT = "nothing was stored: .perun is as it was"


def shown(text: bytes | str) -> str:
    """A name from the remote as it goes into a message, quoted; with escapes when it is not printable (one line)."""
    text = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    return f"'{text}'" if text.isprintable() else repr(text)


def format_document() -> bytes:
    return json.dumps({"format": FORMAT_VERSION, "kind": "perun profiles",
                       "layout": "objects/xx/..., indexes/xx/..., changes/xx/....json"}).encode() + b"\n"


def object_key(sha: str) -> bytes:
    return OBJECTS + f"{sha[:2]}/{sha[2:]}".encode()


def index_key(minor: str) -> bytes:
    return INDEXES + f"{minor[:2]}/{minor[2:]}".encode()


def changes_key(minor: str) -> bytes:
    return CHANGES + f"{minor[:2]}/{minor[2:]}.json".encode()


def is_sha(name: str) -> bool:
    """Whether ``name`` is a full SHA-1 in lowercase hex (the only names that may become paths)."""
    return len(name) == 40 and set(name) <= _HEX


def name_of(key: bytes, prefix: bytes) -> str:
    """The sha a tree path names (``objects/ab/cdef`` -> ``abcdef``)."""
    rest = key[len(prefix):].decode("utf-8", "replace")
    if rest.endswith(".json"):
        rest = rest[:-5]
    return rest.replace("/", "")


# -- the local side -------------------------------------------------------------------

@dataclass(slots=True)
class Inventory:
    """What one ``.perun`` holds that travels: profile objects, indexes and change records, by sha."""

    objects: dict[str, Path] = field(default_factory=dict)
    indexes: dict[str, Path] = field(default_factory=dict)
    changes: dict[str, Path] = field(default_factory=dict)


def local_inventory(perun_dir: Path) -> Inventory:
    """List ``.perun/objects`` (indexes told from objects by their signature) and ``.perun/changes``."""
    found = Inventory()
    objects_dir = perun_dir / "objects"
    for directory, names in _fanout(objects_dir):
        for name in names:
            path = Path(directory, name)
            try:
                with open(path, "rb") as handle:
                    head = handle.read(len(INDEX_MAGIC))
            except OSError:
                continue
            (found.indexes if head == INDEX_MAGIC else found.objects)[Path(directory).name + name] = path
    for directory, names in _fanout(perun_dir / "changes"):
        for name in names:
            if name.endswith(".json"):
                found.changes[Path(directory).name + name[:-5]] = Path(directory, name)
    return found


def _fanout(root: Path) -> Iterable[tuple[str, list[str]]]:
    try:
        entries = list(os.scandir(root))
    except FileNotFoundError:
        return
    for entry in entries:
        if len(entry.name) == 2 and set(entry.name) <= _HEX and entry.is_dir():
            names = [n for n in os.listdir(entry.path) if not n.startswith(".") and set(n.split(".")[0]) <= _HEX]
            yield entry.path, names


# -- reading and writing trees ------------------------------------------------------------

#: the folders of the layout, and how deep their files lie (``objects/ab/cdef...``)
_FOLDERS = (OBJECTS, INDEXES, CHANGES)
_FILE_MODES = (0o100644, 0o100755)
_KINDS = {0o120000: "a symbolic link", 0o160000: "a submodule link", _TREE_MODE: "a folder"}


def read_flat(store: Any, tree_id: bytes, remote: str) -> Flat:
    """Every blob of the layout's folders under ``tree_id`` by its path.

    Anything else at the top is left alone (files a newer layout of the same
    format may add); within the folders only files two levels down may be,
    and no symbolic link, submodule or object the remote did not send.
    """
    flat: Flat = {}
    root = tree_of(store, tree_id, remote, "its root tree")
    pending = [(item.path + b"/", item.sha, 1) for item in root.iteritems()
               if item.path + b"/" in _FOLDERS and item.mode == _TREE_MODE]
    while pending:
        prefix, sha, depth = pending.pop()
        for item in tree_of(store, sha, remote, f"folder {shown(prefix.rstrip(b'/'))}").iteritems():
            path = prefix + item.path
            if depth == 1 and item.mode == _TREE_MODE:
                pending.append((path + b"/", item.sha, 2))
            elif depth == 2 and item.mode in _FILE_MODES:
                flat[path] = item.sha
            else:
                kind = _KINDS.get(item.mode) or ("a file" if item.mode in _FILE_MODES
                                                 else f"an entry of mode {item.mode:o}")
                raise RemoteError(remote, f"{REF.decode()}: {shown(path)} is {kind}, where the layout has "
                                          f"{'a fan-out folder' if depth == 1 else 'a file'}")
    return flat


def tree_of(store: Any, sha: bytes, remote: str, what: str) -> Any:
    """The git tree ``sha``; RemoteError if the remote did not send it or it is no tree."""
    return _typed(store, sha, remote, what, b"tree")


def blob_of(store: Any, sha: bytes, remote: str, what: str) -> bytes:
    """The content of the git blob ``sha``; RemoteError if the remote did not send it or it is no blob."""
    return _typed(store, sha, remote, what, b"blob").data


def _typed(store: Any, sha: bytes, remote: str, what: str, kind: bytes) -> Any:
    try:
        found = store[sha]
    except KeyError:
        raise RemoteError(remote, f"{REF.decode()}: {what} ({sha.decode()[:12]}) was not received") from None
    if found.type_name != kind:
        raise RemoteError(remote, f"{REF.decode()}: {what} ({sha.decode()[:12]}) is a "
                                  f"{found.type_name.decode()}, expected a {kind.decode()}")
    return found


def check_format(store: Any, commit_id: bytes, remote: str) -> bytes:
    """The tree of the remote's commit after its ``format`` passed; refuses newer and foreign layouts."""
    commit = _typed(store, commit_id, remote, "the commit it names", b"commit")
    tree = tree_of(store, commit.tree, remote, "the commit's tree")
    try:
        mode, blob_id = tree[FORMAT_FILE]
        doc = json.loads(blob_of(store, blob_id, remote, "its 'format' file")) if mode in _FILE_MODES else None
        version = doc["format"]
    except (KeyError, ValueError, TypeError, RecursionError, RemoteError):
        raise RemoteError(remote, f"{REF.decode()} does not hold perun profiles (no readable 'format' file)",
                          hint="another tool may use this ref name; perun leaves it alone") from None
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise RemoteError(remote, f"{REF.decode()}: invalid format version {version!r}")
    if version > FORMAT_VERSION:
        raise RemoteFormatTooNew(remote, version, FORMAT_VERSION)
    return commit.tree


def build_tree(flat: Flat) -> tuple[bytes, list[Any]]:
    """Trees for ``flat``; returns the root tree id and the tree objects made (some may exist already)."""
    from dulwich.objects import Tree

    made: list[Any] = []

    def build(items: dict[bytes, bytes]) -> bytes:
        tree = Tree()
        groups: dict[bytes, dict[bytes, bytes]] = {}
        for path, sha in items.items():
            head, sep, rest = path.partition(b"/")
            if sep:
                groups.setdefault(head, {})[rest] = sha
            else:
                tree.add(head, _BLOB_MODE, sha)
        for name, sub in groups.items():
            tree.add(name, _TREE_MODE, build(sub))
        made.append(tree)
        return tree.id

    return build(flat), made


# -- merging ----------------------------------------------------------------------------------

def _identity(entry: IndexEntry) -> tuple[str, str]:
    return entry.checksum, entry.path


def union_sorted(*sides: Iterable[IndexEntry]) -> list[IndexEntry]:
    """Entries of all sides, one per (object, name), the earliest time kept; sorted, so merges commute."""
    kept: dict[tuple[str, str], IndexEntry] = {}
    for side in sides:
        for entry in side:
            key = _identity(entry)
            if key not in kept or entry.time < kept[key].time:
                kept[key] = entry
    return sorted(kept.values(), key=lambda e: (e.time, e.checksum, e.path))


def missing_entries(local: Iterable[IndexEntry], remote: Iterable[IndexEntry]) -> list[IndexEntry]:
    """Entries of ``remote`` that ``local`` lacks, by (object, name)."""
    have = {_identity(e) for e in local}
    out = []
    for entry in remote:
        if _identity(entry) not in have:
            have.add(_identity(entry))
            out.append(entry)
    return out


def canonical_index(entries: list[IndexEntry]) -> bytes:
    return encode_index(union_sorted(entries))


def decode_remote_index(data: bytes, key: bytes, remote: str) -> list[IndexEntry]:
    try:
        return decode_index(data, f"{remote}:{key.decode()}")
    except StorageError as exc:  # damaged, or of a newer version
        raise RemoteError(remote, f"{key.decode('utf-8', 'replace')}: {getattr(exc, 'reason', None) or exc}",
                          hint=REFUSED_HINT) from None


def checked_time(data: bytes) -> float:
    """When a change record was written (0 when it does not say); used to pick the newer of two."""
    try:
        value = json.loads(data).get("checked", 0)
        return float(value) if isinstance(value, (int, float)) else 0.0
    except (ValueError, AttributeError):
        return 0.0


def newer_changes(mine: bytes, theirs: bytes) -> bytes:
    """Of two change records of one commit, the one checked later (ties: a fixed order, so merges commute)."""
    return max((checked_time(mine), mine), (checked_time(theirs), theirs))[1]
