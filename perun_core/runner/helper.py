"""A tiny C program that runs the measured processes: exact peak memory and tight timing.

Why: Linux charges a process's peak resident memory (``ru_maxrss``) with the
high-water mark of the address space it had when it called ``exec``.  A child
forked (or vforked) by perun starts as a copy of the Python interpreter, so
its ``ru_maxrss`` is never below perun's own 25-40 MB, and ``true`` would
appear to need that much.  A child started by a small C program starts
from that program's few hundred kilobytes instead, which is what GNU time
and hyperfine report too.  Starting one helper for many runs also keeps perun's
per-run cost close to hyperfine's: a Python ``subprocess.Popen`` per run
costs milliseconds.

The helper is compiled with the system's C compiler (``cc``, ``gcc`` or
``clang``) on first use and cached in ``$XDG_CACHE_HOME/perun`` (default
``~/.cache/perun``), named by a hash of its source.  Its command line is::

    helper REPORT_FD CONTROL_FD TIMEOUT_NS PROGRAM [ARG...]

It runs PROGRAM once for every ``g`` byte it reads from CONTROL_FD and exits
at end of file (or any other byte); a ``t``, a decimal number of nanoseconds
and a newline set the timeout of the runs after them (a caller changes it
without starting a new helper).  Each run is started with
``posix_spawnp`` (a vfork-like clone, much cheaper than ``fork`` on a busy
machine) in a process group of its own: PATH lookup, relative paths against
the helper's working directory, and a file that is neither a binary nor has
a ``#!`` line is an exec error (ENOEXEC), as when Python starts it.  When the
run exits, whatever it left running in its group is killed, and so are its
other descendants (the helper is a child subreaper, so even those that
called ``setsid`` come back to it).  Then one line goes to REPORT_FD::

    ran <wait status> <wall ns> <user us> <sys us> <max rss KiB> <involuntary switches>
    timeout <wait status> <wall ns> <user us> <sys us> <max rss KiB> <involuntary switches>
    exec <errno>                      (the command could not be executed)

``timeout`` means the run took longer than TIMEOUT_NS (0: no limit) and its
process group was killed.  Wall time runs from just before the spawn to
the moment the exit is noticed (``CLOCK_MONOTONIC``).  The involuntary
context switches (``ru_nivcsw``) count how often the run was preempted:
far more of them than usual mean other work competed for the cores.  SIGTERM, SIGINT or SIGHUP
make the helper kill the current run's process group and descendants, reap
them and exit.  Runs inherit the helper's stdin, stdout and stderr, which
stay open across runs, so output lines reach the caller as they are written.

Without a C compiler :func:`spawn_helper` returns None and callers measure
from Python (peak memory then includes perun's).  Set
``PERUN_NO_SPAWN_HELPER=1`` to force that.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import tempfile
import threading
from pathlib import Path

from ..native.build import cache_dir, find_compiler, usable_executable

__all__ = ["HELPER_SOURCE", "cache_dir", "spawn_helper"]

HELPER_SOURCE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* perun spawn helper: see perun_core/runner/helper.py */

static int report_fd, control_fd, signal_fd;
static sigset_t original_mask;
static posix_spawnattr_t spawn_attributes;
static char children_path[64];

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void report(const char *line, int length) {
    while (length > 0) {
        ssize_t done = write(report_fd, line, (size_t)length);
        if (done < 0) {
            if (errno == EINTR) continue;
            _exit(125);
        }
        line += done;
        length -= (int)done;
    }
}

/* Kill and reap every child left: descendants of the last run that were
   orphaned and handed to us (we are a child subreaper). */
static void kill_orphans(void) {
    for (;;) {
        pid_t pid = waitpid(-1, NULL, WNOHANG);
        if (pid > 0) continue;
        if (pid < 0) return;                      /* no children */
        char list[4096];
        int fd = open(children_path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return;                       /* cannot list them: leave them */
        ssize_t got = read(fd, list, sizeof list - 1);
        close(fd);
        if (got <= 0) return;
        if (got == (ssize_t)sizeof list - 1) {    /* drop a number cut in half */
            while (got > 0 && list[got - 1] != ' ') got--;
        }
        list[got] = '\0';
        int killed = 0;
        for (char *word = strtok(list, " \n"); word != NULL; word = strtok(NULL, " \n")) {
            if (kill((pid_t)atol(word), SIGKILL) == 0) killed++;
        }
        if (killed == 0) return;
        while (waitpid(-1, NULL, 0) < 0 && errno == EINTR) {}
    }
}

/* The next signal (SIGCHLD, SIGTERM, SIGINT, SIGHUP) within timeout, or 0. */
static int next_signal(const struct timespec *timeout) {
    struct pollfd wake = {signal_fd, POLLIN, 0};
    if (ppoll(&wake, 1, timeout, NULL) <= 0) return 0;
    struct signalfd_siginfo info;
    if (read(signal_fd, &info, sizeof info) != (ssize_t)sizeof info) return 0;
    return (int)info.ssi_signo;
}

static void stop(pid_t pid) {
    if (pid > 0) {
        killpg(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    }
    kill_orphans();
    _exit(0);
}

static void run(char **command, long long timeout) {
    char line[160];
    long long start = now_ns();
    pid_t pid;
    int failed = posix_spawnp(&pid, command[0], NULL, &spawn_attributes, command, environ);
    if (failed != 0) {
        report(line, snprintf(line, sizeof line, "exec %d\n", failed));
        return;
    }
    int timed_out = 0;
    for (;;) {
        struct timespec left, *limit = NULL;
        if (timeout > 0 && !timed_out) {
            long long rest = start + timeout - now_ns();
            if (rest <= 0) {
                timed_out = 1;
                killpg(pid, SIGKILL);
                continue;
            }
            left.tv_sec = (time_t)(rest / 1000000000LL);
            left.tv_nsec = (long)(rest % 1000000000LL);
            limit = &left;
        }
        int signo = next_signal(limit);   /* a SIGCHLD is pending if it has exited already */
        if (signo != 0 && signo != SIGCHLD) stop(pid);
        siginfo_t info;
        info.si_pid = 0;
        /* WNOWAIT: the exited child stays a zombie and keeps its group id ours to kill */
        if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) break;
    }
    long long end = now_ns();
    killpg(pid, SIGKILL);   /* what it left running in its group */
    int status = 0;
    struct rusage usage;
    while (wait4(pid, &status, 0, &usage) < 0) {
        if (errno != EINTR) _exit(125);
    }
    kill_orphans();
    long long user = (long long)usage.ru_utime.tv_sec * 1000000LL + usage.ru_utime.tv_usec;
    long long sys = (long long)usage.ru_stime.tv_sec * 1000000LL + usage.ru_stime.tv_usec;
    report(line, snprintf(line, sizeof line, "%s %d %lld %lld %lld %ld %ld\n", timed_out ? "timeout" : "ran",
                          status, end - start, user, sys, usage.ru_maxrss, usage.ru_nivcsw));
}

int main(int argc, char **argv) {
    if (argc < 5) return 125;
    report_fd = atoi(argv[1]);
    control_fd = atoi(argv[2]);
    long long timeout = atoll(argv[3]);
    if (fcntl(report_fd, F_SETFD, FD_CLOEXEC) != 0 || fcntl(control_fd, F_SETFD, FD_CLOEXEC) != 0) return 125;
    sigset_t handled;
    sigemptyset(&handled);
    sigaddset(&handled, SIGCHLD);
    sigaddset(&handled, SIGTERM);
    sigaddset(&handled, SIGINT);
    sigaddset(&handled, SIGHUP);
    sigprocmask(SIG_BLOCK, &handled, &original_mask);
    signal_fd = signalfd(-1, &handled, SFD_CLOEXEC);
    if (signal_fd < 0) return 125;
    /* each run in a process group of its own, with the signal mask we were given */
    if (posix_spawnattr_init(&spawn_attributes) != 0
        || posix_spawnattr_setflags(&spawn_attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK) != 0
        || posix_spawnattr_setpgroup(&spawn_attributes, 0) != 0
        || posix_spawnattr_setsigmask(&spawn_attributes, &original_mask) != 0) return 125;
    prctl(PR_SET_CHILD_SUBREAPER, 1);   /* best effort: without it setsid() escapes are not found */
    snprintf(children_path, sizeof children_path, "/proc/self/task/%d/children", (int)getpid());
    for (;;) {
        struct pollfd wake[2] = {{control_fd, POLLIN, 0}, {signal_fd, POLLIN, 0}};
        if (poll(wake, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return 125;
        }
        if (wake[1].revents & POLLIN) {
            struct signalfd_siginfo info;
            if (read(signal_fd, &info, sizeof info) == (ssize_t)sizeof info && info.ssi_signo != SIGCHLD) stop(0);
        }
        if (wake[0].revents) {
            char command = 0;
            if (read(control_fd, &command, 1) != 1) stop(0);
            if (command == 't') {
                /* a new timeout in decimal nanoseconds up to a newline, then the next command */
                long long value = 0;
                char digit = 0;
                while (read(control_fd, &digit, 1) == 1 && digit >= '0' && digit <= '9') {
                    value = value * 10 + (digit - '0');
                }
                if (digit != '\n') stop(0);
                timeout = value;
                continue;
            }
            if (command != 'g') stop(0);
            run(argv + 4, timeout);
        }
    }
}
"""

#: Compiler flags, tried in order.  Statically linked, the helper maps no shared C library: its
#: resident memory is a few hundred kilobytes and the same in every instance.  That matters
#: because a program started with posix_spawn (vfork) inherits the helper's peak RSS as the
#: floor of its own ``ru_maxrss``; a dynamically linked helper's peak varies by some 10 % from
#: one instance to the next (pages of libc faulted in around each access), which made every
#: job of a small program report a different, constant peak memory.  Where no static C
#: library is installed the dynamic build still works, with that floor.
_BUILDS = (("-O2", "-static"), ("-O2",))

_lock = threading.Lock()
_known: dict[Path, Path | None] = {}


def spawn_helper() -> Path | None:
    """The compiled helper (built once and cached), or None when it cannot be built."""
    if os.environ.get("PERUN_NO_SPAWN_HELPER"):
        return None
    digest = hashlib.sha1(HELPER_SOURCE.encode() + repr(_BUILDS).encode()).hexdigest()[:16]
    target = cache_dir() / f"spawn-helper-{digest}-{os.uname().machine}"
    with _lock:
        if target in _known:
            return _known[target]
        _known[target] = _build(target)
        return _known[target]


def _build(target: Path) -> Path | None:
    if usable_executable(target):
        return target
    compiler = find_compiler()
    if compiler is None:
        return None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(target.parent, 0o700)
    except OSError:
        return None
    with tempfile.TemporaryDirectory(prefix="perun-helper-", dir=target.parent) as work:
        source = Path(work) / "helper.c"
        output = Path(work) / "helper"
        source.write_text(HELPER_SOURCE)
        for flags in _BUILDS:
            try:
                built = subprocess.run([compiler, *flags, "-o", str(output), str(source)], stdin=subprocess.DEVNULL,
                                       capture_output=True, timeout=60, check=False)
            except (OSError, subprocess.SubprocessError):
                return None
            if built.returncode == 0 and output.is_file():
                break
        else:
            return None
        os.chmod(output, 0o700)
        with contextlib.suppress(OSError):
            os.replace(output, target)
    return target if usable_executable(target) else None
