"""Crash-safe file primitives: atomic replacement and advisory locks.

Every file perun writes goes through :func:`atomic_write`, so a reader sees
either the old content or the new one, never a half-written file, even if the
process is killed or the machine loses power mid-write.

The temporary file of a write is named ``.NAME.w<pid>-<tag>.<random>.tmp``
next to its target: the writer's process id and a tag of the machine and pid
namespace it runs in (:func:`writer_tag`), so that ``fsck`` can tell the
leftover of a killed writer from a write in flight
(:func:`temporary_writer_alive`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import stat
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from .errors import EnvironmentFailure, LockTimeout, StorageError

_umask_cache: list[int] = []
_tag_cache: list[str] = []

#: A temporary file of :func:`atomic_write`: the target's name, then (since writers record it) the writer.
TEMPORARY_NAME = re.compile(r"^\.(?P<target>.+?)\.(?:w(?P<pid>\d+)-(?P<tag>[0-9a-f]{8})\.)?[A-Za-z0-9_]+\.tmp$")
#: Slack between a process's start time (whole seconds of the boot time, clock ticks) and a file's mtime.
_START_SLACK = 2.0


def current_umask() -> int:
    """The process's umask, read without changing it where /proc allows (threads may be running)."""
    if _umask_cache:
        return _umask_cache[0]
    value = None
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    value = int(line.split()[1], 8)
                    break
    except (OSError, ValueError):
        value = None
    if value is None:
        value = os.umask(0o022)
        os.umask(value)
    _umask_cache.append(value)
    return value


def default_file_mode() -> int:
    """Permissions of a new file as ``open()`` would give it: 0666 less the umask (a group can read a shared store)."""
    return 0o666 & ~current_umask()


def ensure_writable_target(path: Path | str) -> Path:
    """Refuse, before any work is done, an output file that cannot be written.

    The directory must exist and be writable and the path must not be a
    directory; otherwise :class:`~perun_core.errors.EnvironmentFailure`
    names the path and the reason, so nothing else (not even
    ``.perun/changes``) is written by a command whose output would fail.
    """
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise EnvironmentFailure(path, "is a directory; expected a file name")
    if not parent.is_dir():
        raise EnvironmentFailure(path, f"directory '{parent}' does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise EnvironmentFailure(path, f"directory '{parent}' is not writable")
    if path.exists() and not os.access(path, os.W_OK):
        raise EnvironmentFailure(path, "file is not writable")
    return path


def writer_tag() -> str:
    """Eight hex digits naming where process ids of writers mean something: this boot of this machine,
    in this pid namespace.  A temporary file with another tag was made where its pid cannot be checked."""
    if _tag_cache:
        return _tag_cache[0]
    parts = []
    for source in ("/proc/sys/kernel/random/boot_id", "/proc/self/ns/pid"):
        try:
            parts.append(os.readlink(source) if source.endswith("/pid") else Path(source).read_text().strip())
        except OSError:
            parts.append("")
    if not any(parts):
        parts.append(os.uname().nodename)
    _tag_cache.append(hashlib.sha1("\0".join(parts).encode()).hexdigest()[:8])
    return _tag_cache[0]


def _process_start(pid: int) -> tuple[float, str] | None:
    """(wall-clock start time, state letter) of a process from /proc, or None where /proc cannot say."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
        boot = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime "))
        fields = stat_line[stat_line.rindex(")") + 2:].split()  # after "pid (comm) ": state is field 3, starttime 22
        return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK"), fields[0]
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def temporary_writer_alive(path: Path | str) -> bool | None:
    """Whether the writer of the temporary file ``path`` may still be writing it.

    False when it certainly is not: the process named in the file's name
    is gone, a zombie, or started after the file was last written (its pid
    was reused).  True when that process runs.  None when the name does not
    tell: a file of an older perun (no pid) or one made on another machine
    or in another pid namespace (another :func:`writer_tag`).
    """
    path = Path(path)
    match = TEMPORARY_NAME.match(path.name)
    if match is None or match["pid"] is None or match["tag"] != writer_tag():
        return None
    pid = int(match["pid"])
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it runs, as another user
    except OSError:
        return None
    started = _process_start(pid)
    if started is None:
        return True
    start, state = started
    if state in ("Z", "X"):
        return False
    try:
        written = path.stat().st_mtime
    except FileNotFoundError:
        return False  # finished (renamed) or removed meanwhile
    return start <= written + _START_SLACK
def ensure_writable_directory(path: Path | str) -> Path:
    """Refuse, before any work is done, a directory a command would create or write files into.

    ``path`` may exist (then it must be a writable directory) or not (then
    its nearest existing ancestor must be a writable directory, which
    ``mkdir -p`` can extend).
    """
    if not str(path).strip():
        raise EnvironmentFailure(path, "is an empty name; expected a directory")
    path = Path(path)
    ancestor = path
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent if str(ancestor.parent) else Path(".")
    if not ancestor.is_dir():
        raise EnvironmentFailure(path, f"'{ancestor}' is a file; expected a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise EnvironmentFailure(path, f"directory '{ancestor}' is not writable")
    return path


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on directories; the rename already happened
    finally:
        os.close(fd)


def atomic_write(path: Path | str, data: bytes | Iterable[bytes], *, exclusive: bool = False,
                 mode: int | None = None, create_parent: bool = True, sync_dir: bool = True) -> None:
    """Write ``data`` (bytes, or an iterable of byte chunks) to ``path`` through a temporary file, fsync and rename.

    With ``exclusive`` the call fails with FileExistsError instead of
    replacing an existing file (used for names that must never overwrite).
    Nothing is left behind when producing the chunks raises.  The file gets
    permissions ``mode`` when given (the umask does not apply), else those
    a plain ``open()`` would give it (0666 less the umask).  A missing
    directory is created unless ``create_parent`` is false (files the user
    names: a typo in a directory must not create it).  ``sync_dir=False`` leaves the fsync of the
    directory to the caller (:func:`sync_directories`), for many files
    written in a row that must all be durable before something refers to them.
    """
    path = Path(path)
    if mode is None:
        mode = default_file_mode()
    made: list[Path] = []  # directories made here, removed again when the write fails
    if create_parent:
        made = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
        path.parent.mkdir(parents=True, exist_ok=True)
    writer = f"w{os.getpid()}-{writer_tag()}."
    if len(os.fsencode(path.name)) + len(writer) + 14 > 255:
        writer = ""  # a name near the file system's limit: fsck judges such a file by its age
    fd, tmp_name = _create_temporary(path.parent, f".{path.name}.{writer}")
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            if isinstance(data, (bytes, bytearray, memoryview)):
                handle.write(data)
            else:
                for chunk in data:
                    handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        if exclusive:
            # link() fails if the target exists, which rename() would not.
            os.link(tmp_name, path)
            os.unlink(tmp_name)
        else:
            os.replace(tmp_name, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        for directory in made:  # innermost first; one that is no longer empty stays
            with contextlib.suppress(OSError):
                directory.rmdir()
        if isinstance(exc, OSError) and exc.filename is None:
            # a failed write() or fsync() (a full disk) names no file: the error names the one being written
            exc.filename = str(path)
        raise
    if sync_dir:
        _fsync_dir(path.parent)


def _create_temporary(directory: Path, prefix: str) -> tuple[int, str]:
    """A new file ``directory/<prefix><random>.tmp`` (mode 0600), open for writing: ``(descriptor, name)``.

    What ``tempfile.mkstemp`` does, without importing tempfile, which brings
    shutil, random and the compression modules with it (about 3 ms of every
    command that writes a file).
    """
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        name = os.path.join(directory, f"{prefix}{os.urandom(4).hex()}.tmp")
        try:
            return os.open(name, flags, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused name for a temporary file", os.path.join(directory, prefix))


def sync_directories(directories: Iterable[Path | str]) -> None:
    """fsync each directory once: makes the renames of ``atomic_write(..., sync_dir=False)`` durable."""
    for directory in set(map(Path, directories)):
        _fsync_dir(directory)


#: cache files the running command writes only once it has succeeded: path -> content (see write_when_done)
_WHEN_DONE: dict[str, bytes] = {}
#: how many commands run in this process (the command line runs one; the TUI and a library user none)
_COMMANDS = [0]


@contextlib.contextmanager
def command_scope() -> Iterator[None]:
    """A command runs in the block: the files it gives :func:`write_when_done` wait for :func:`write_deferred`.

    Whatever is still waiting when the outermost block ends (the command
    failed before calling :func:`write_deferred`) is dropped.
    """
    _COMMANDS[0] += 1
    try:
        yield
    finally:
        _COMMANDS[0] -= 1
        if not _COMMANDS[0]:
            _WHEN_DONE.clear()


def write_when_done(path: Path | str, data: bytes) -> bool:
    """Write the cache file ``path``: when the running command has succeeded, or at once outside any command.

    For what a run learns only to be faster next time: a command that fails
    on bad input (or on a full disk) must leave every file as it was, its
    caches included, so within a :func:`command_scope` the file waits for
    :func:`write_deferred`.  A process that runs no command (the TUI, a
    library user) keeps what it learns at once.  False when an immediate
    write failed (a cache that cannot be written is a missed speed-up).
    """
    if _COMMANDS[0]:
        _WHEN_DONE[str(path)] = bytes(data)
        return True
    try:
        atomic_write(path, data)
    except OSError:
        return False
    return True


def write_deferred() -> None:
    """Write every file :func:`write_when_done` kept (best effort: a cache that cannot be written is skipped)."""
    while _WHEN_DONE:
        path, data = _WHEN_DONE.popitem()
        with contextlib.suppress(OSError):
            atomic_write(path, data)


def atomic_write_text(path: Path | str, text: str, *, exclusive: bool = False) -> None:
    atomic_write(path, text.encode("utf-8"), exclusive=exclusive)


def write_user_file(path: Path | str, data: bytes) -> None:
    """Write a file the user named on the command line (a report, a plot), atomically, never creating directories."""
    path = ensure_writable_target(path)
    if _is_special(path):
        _write_in_place(path, data)
        return
    atomic_write(path, data, create_parent=False)


def _is_special(path: Path) -> bool:
    """Whether ``path`` is an existing device, FIFO or socket (``/dev/stdout``, ``/dev/null``, a named pipe).

    Such a file is written into, never replaced: renaming a temporary file
    over it would put a regular file in place of the device.
    """
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _write_in_place(path: Path, data: bytes) -> None:
    try:
        # O_NONBLOCK: a named pipe nobody reads fails at once (ENXIO) instead of hanging
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise EnvironmentFailure(path, f"cannot be opened for writing: {exc.strerror}") from None
    try:
        os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except OSError as exc:
        raise EnvironmentFailure(path, f"cannot be written: {exc.strerror}") from None
    finally:
        os.close(fd)


@contextlib.contextmanager
def file_lock(path: Path | str, timeout: float = 30.0) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``path`` (created if missing).

    The lock file is separate from the data it guards, so the data file can be
    replaced atomically while the lock is held.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StorageError(f"cannot open lock file {path}: {exc.strerror}") from exc
        try:
            _acquire(fd, path, deadline, timeout)
            if _same_file(fd, path):
                break
        except BaseException:
            os.close(fd)
            raise
        # the holder removed the lock file (remove_lock_file) before releasing it: lock the current one
        os.close(fd)
    try:
        yield
    finally:
        os.close(fd)  # closing releases the flock


def _acquire(fd: int, path: Path, deadline: float, timeout: float) -> None:
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise StorageError(f"cannot lock {path}: {exc.strerror}") from exc
            if time.monotonic() >= deadline:
                raise LockTimeout(path, timeout) from None
            time.sleep(0.005)


def _same_file(fd: int, path: Path) -> bool:
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)


def remove_lock_file(path: Path | str) -> None:
    """Delete a lock file while holding its :func:`file_lock` (waiters then lock a new file, never both)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
