"""Overheads of the collectors for native programs; prints one JSON object.

Scenarios (each timing is the median of ``--repeat`` runs, wall clock):

* ``memory``: two allocation-heavy C programs.  ``tree`` builds a binary
  search tree of random keys, looks every key up and frees it (an
  allocation per node, real work between allocations: target at most 3x);
  ``churn`` does nothing but malloc and free in a loop (the worst case:
  pure allocator calls).  Each is timed

  - ``plain_s``: run alone;
  - ``preloaded_s`` (``run_factor`` = preloaded_s / plain_s): run under the
    memory collector's preload library, writing its log;
  - ``build_s``: turning that log into a profile in-process (reading it,
    symbolizing with addr2line, building the resources);
  - ``write_s``: writing that profile as the CLI does (documented JSON,
    ``profile_mb`` megabytes, fsync'ed);
  - ``collect_s`` (``collect_factor``): the collector's phases in-process
    (run, symbolization and profile; no writing);
  - ``cli_s`` (``cli_factor``): what a user waits for, ``perun-core collect
    -c PROGRAM -a N memory`` as a subprocess in a scratch repository, from
    start to the profile written in ``.perun/jobs`` (interpreter start-up,
    run, profile and write).
* ``trace``: a call-heavy program (recursive fib) built plain, built with
  ``-finstrument-functions`` but run without recording, and recorded by the
  trace runtime (every call, and every 10th call of fib).
* ``raw_log_100mb``: the time to turn about 100 MB of raw log into a
  profile (``read_logs`` and building the profile, not writing it), for a
  trace log (16-byte events) and a memory log (32-byte events plus stacks).

Progress goes to stderr.  Usage: ``python benchmarks/native.py [--repeat N] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perun_core import native  # noqa: E402
from perun_core.collect.memory import profile_from_logs  # noqa: E402
from perun_core.collect.nativelog import read_logs  # noqa: E402
from perun_core.collect.trace import _threads_of_logs, instrumentation_flags  # noqa: E402
from perun_core.collect.trace_profile import profile_from_calls  # noqa: E402
from perun_core.profile.codec import store_profile_at  # noqa: E402
from perun_core.units import UnitContext, call_phase, collectors, convert_params  # noqa: E402

TREE_C = r"""
#include <stdio.h>
#include <stdlib.h>
struct node { long key; struct node *left, *right; };
static struct node *insert(struct node *root, long key) {
    struct node **at = &root;
    while (*at) at = key < (*at)->key ? &(*at)->left : &(*at)->right;
    *at = malloc(sizeof **at);
    (*at)->key = key; (*at)->left = (*at)->right = NULL;
    return root;
}
static int find(struct node *root, long key) {
    while (root && root->key != key) root = key < root->key ? root->left : root->right;
    return root != NULL;
}
static void drop(struct node *root) { if (root) { drop(root->left); drop(root->right); free(root); } }
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 200000, found = 0;
    unsigned long state = 12345;
    long *keys = malloc(n * sizeof *keys);
    struct node *root = NULL;
    for (long i = 0; i < n; i++) { state = state * 6364136223846793005ul + 1442695040888963407ul; keys[i] = (long)(state >> 17); }
    for (long i = 0; i < n; i++) root = insert(root, keys[i]);
    for (long i = 0; i < n; i++) found += find(root, keys[i]);
    drop(root);
    free(keys);
    printf("%ld\n", found);
    return 0;
}
"""

CHURN_C = r"""
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) void *get(long i) { return malloc(16 + (i & 63)); }
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000, sum = 0;
    for (long i = 0; i < n; i++) { char *p = get(i); p[0] = (char)i; sum += p[0]; free(p); }
    printf("%ld\n", sum);
    return 0;
}
"""

FIB_C = r"""
#include <stdio.h>
#include <stdlib.h>
int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(int argc, char **argv) { printf("%d\n", fib(argc > 1 ? atoi(argv[1]) : 27)); return 0; }
"""

LOOP_C = r"""
#include <stdlib.h>
static volatile long sink;
__attribute__((noinline)) void step(long i) { sink += i; }
int main(int argc, char **argv) { long n = atol(argv[1]); for (long i = 0; i < n; i++) step(i); return 0; }
"""


def note(text: str) -> None:
    sys.stderr.write(text + "\n")


def median_time(argv: list[str], repeat: int, env: dict[str, str] | None = None) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(argv, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def compile_c(work: Path, name: str, source: str, *flags: str) -> Path:
    path = work / f"{name}.c"
    path.write_text(source)
    binary = work / name
    subprocess.run(["cc", "-O2", "-g", "-fno-omit-frame-pointer", *flags, "-o", str(binary), str(path)], check=True)
    return binary


def collect_seconds(name: str, argv: list[str], cwd: Path, repeat: int, **params) -> float:
    unit = collectors.get(name)
    times = []
    for _ in range(repeat):
        kwargs = convert_params(name, unit.params, params)
        kwargs.update(cmd=argv[0], args=" ".join(argv[1:]), workload="", argv=argv)
        ctx = UnitContext(cwd, label=name)
        started = time.perf_counter()
        for phase in ("before", "collect", "after"):
            result = call_phase(unit, phase, ctx, kwargs)
            if result is not None:
                kwargs = result.kwargs
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def scratch_env(home: Path) -> dict[str, str]:
    """os.environ without the user's git/perun/pager settings, HOME moved to ``home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    for name in ("EDITOR", "VISUAL", "PAGER", "XDG_CONFIG_HOME", "PERUN_CONFIG_DIR"):
        env.pop(name, None)
    env.update(HOME=str(home), PERUN_CONFIG_DIR=str(home / "perun-config"), GIT_CONFIG_NOSYSTEM="1",
               GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.com", GIT_COMMITTER_NAME="bench",
               GIT_COMMITTER_EMAIL="bench@example.com")
    return env


def perun_cli() -> list[str]:
    """The ``perun-core`` command next to this python (or in .venv/bin)."""
    root = Path(__file__).resolve().parent.parent
    for candidate in (Path(sys.executable).parent / "perun-core", root / ".venv" / "bin" / "perun-core"):
        if candidate.exists():
            return [str(candidate)]
    return [sys.executable, "-c", "import sys; from perun_core.cli.entry import main; sys.exit(main())"]


def cli_seconds(work: Path, argv: list[str], repeat: int) -> float:
    """Median wall time of ``perun-core collect -c ARGV[0] -a ARGS memory`` in a scratch repository."""
    repo = work / "cli-repo"
    env = scratch_env(work / "cli-home")
    if not repo.exists():
        repo.mkdir()
        (work / "cli-home").mkdir(exist_ok=True)
        for command in (["git", "init", "-q", "."], ["git", "commit", "-q", "--allow-empty", "-m", "start"],
                        [*perun_cli(), "init"]):
            subprocess.run(command, cwd=repo, env=env, stdout=subprocess.DEVNULL, check=True)
    jobs = repo / ".perun" / "jobs"
    command = [*perun_cli(), "collect", "-f", "-c", argv[0], "-a", " ".join(argv[1:]), "memory"]
    times = []
    for _ in range(repeat):
        shutil.rmtree(jobs, ignore_errors=True)
        started = time.perf_counter()
        subprocess.run(command, cwd=repo, env=env, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - started)
    shutil.rmtree(jobs, ignore_errors=True)
    return statistics.median(times)


def memory_scenario(work: Path, repeat: int, quick: bool) -> dict:
    library = str(native.library("memory"))
    results = {}
    for name, source, size in (("tree", TREE_C, 30000 if quick else 300000),
                               ("churn", CHURN_C, 200000 if quick else 2000000)):
        binary = compile_c(work, name, source)
        argv = [str(binary), str(size)]
        note(f"memory: {name} {size}")
        plain = median_time(argv, repeat)
        logs = work / f"logs-{name}"
        logs.mkdir()
        env = {"LD_PRELOAD": library, "PERUN_MEMORY_DIR": str(logs)}
        times = []
        for _ in range(repeat):
            for leftover in logs.iterdir():
                leftover.unlink()
            started = time.perf_counter()
            subprocess.run(argv, env={**os.environ, **env}, stdout=subprocess.DEVNULL, check=True)
            times.append(time.perf_counter() - started)
        traced = statistics.median(times)
        log_bytes = sum(p.stat().st_size for p in logs.glob("*.log"))
        builds, writes = [], []
        written = work / f"{name}.perf"
        for _ in range(max(1, repeat // 2)):
            started = time.perf_counter()
            profile = profile_from_logs(read_logs(logs, "memory"), {"sampling": 0.025})
            builds.append(time.perf_counter() - started)
            written.unlink(missing_ok=True)
            started = time.perf_counter()
            store_profile_at(profile, written, exclusive=True)
            writes.append(time.perf_counter() - started)
            del profile
        profile_bytes = written.stat().st_size
        written.unlink()
        collected = collect_seconds("memory", argv, work, max(1, repeat // 2))
        cli = cli_seconds(work, argv, max(1, repeat // 2))
        results[name] = {"allocations": size, "plain_s": plain, "preloaded_s": traced, "run_factor": traced / plain,
                         "build_s": statistics.median(builds), "write_s": statistics.median(writes),
                         "collect_s": collected, "collect_factor": collected / plain, "cli_s": cli,
                         "cli_factor": cli / plain, "log_mb": log_bytes / 1e6, "profile_mb": profile_bytes / 1e6}
    return results


def trace_scenario(work: Path, repeat: int, quick: bool) -> dict:
    n = "24" if quick else "28"
    plain = compile_c(work, "fib_plain", FIB_C)
    flags = instrumentation_flags()
    runtime = str(native.library("trace"))
    source = work / "fib_plain.c"
    traced = work / "fib_traced"
    subprocess.run(["cc", "-O2", *flags["cflags"], "-o", str(traced), str(source), *flags["ldflags"]], check=True)
    note(f"trace: fib({n})")
    base = median_time([str(plain), n], repeat)
    idle = median_time([str(traced), n], repeat, {"LD_PRELOAD": runtime})
    logs = work / "trace-logs"
    logs.mkdir()
    timings = {}
    for label, env in (("every_call", {}), ("every_10th_call", {"PERUN_TRACE_SAMPLE": "10"})):
        times = []
        for _ in range(repeat):
            for leftover in logs.iterdir():
                leftover.unlink()
            started = time.perf_counter()
            subprocess.run([str(traced), n], env={**os.environ, "LD_PRELOAD": runtime, "PERUN_TRACE_DIR": str(logs), **env},
                           stdout=subprocess.DEVNULL, check=True)
            times.append(time.perf_counter() - started)
        timings[label] = statistics.median(times)
    calls = (1.618033988749895 ** (int(n) + 1) / 5 ** 0.5) * 2 - 1
    collected = collect_seconds("trace", [str(traced), n], work, max(1, repeat // 2))
    return {"calls": round(calls), "plain_s": base, "instrumented_idle_s": idle,
            "idle_factor": idle / base, "recording_s": timings["every_call"],
            "recording_factor": timings["every_call"] / base, "sampled_10_s": timings["every_10th_call"],
            "sampled_10_factor": timings["every_10th_call"] / base,
            "ns_per_recorded_call": (timings["every_call"] - idle) / calls * 1e9,
            "collect_s": collected}


def raw_log_scenario(work: Path, quick: bool) -> dict:
    target = 10e6 if quick else 100e6
    results = {}
    loop = work / "loop.c"
    loop.write_text(LOOP_C)
    flags = instrumentation_flags()
    binary = work / "loop"
    subprocess.run(["cc", "-O2", *flags["cflags"], "-o", str(binary), str(loop), *flags["ldflags"]], check=True)
    logs = work / "raw-trace"
    logs.mkdir()
    calls = int(target / 32)
    subprocess.run([str(binary), str(calls)], env={**os.environ, "PERUN_TRACE_DIR": str(logs),
                   "LD_PRELOAD": str(native.library("trace"))}, check=True)
    size = sum(p.stat().st_size for p in logs.glob("*.log"))
    note(f"raw log: trace {size / 1e6:.0f} MB")
    started = time.perf_counter()
    parsed = read_logs(logs, "trace")
    threads, names = _threads_of_logs(parsed)
    profile = profile_from_calls(threads, names, {"cmd": "loop"}, None)
    seconds = time.perf_counter() - started
    results["trace"] = {"log_mb": size / 1e6, "resources": profile.resource_count(), "seconds": seconds,
                        "seconds_per_100mb": seconds * 100e6 / size}
    del profile, threads, parsed
    churn = compile_c(work, "churn_raw", CHURN_C)
    logs = work / "raw-memory"
    logs.mkdir()
    subprocess.run([str(churn), str(int(target / 64))], env={**os.environ, "PERUN_MEMORY_DIR": str(logs),
                   "LD_PRELOAD": str(native.library("memory"))}, stdout=subprocess.DEVNULL, check=True)
    size = sum(p.stat().st_size for p in logs.glob("*.log"))
    note(f"raw log: memory {size / 1e6:.0f} MB")
    started = time.perf_counter()
    profile = profile_from_logs(read_logs(logs, "memory"), {"sampling": 0.025})
    seconds = time.perf_counter() - started
    results["memory"] = {"log_mb": size / 1e6, "resources": profile.resource_count(), "seconds": seconds,
                         "seconds_per_100mb": seconds * 100e6 / size}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", "--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="small sizes, to check the script works")
    options = parser.parse_args()
    if shutil.which("cc") is None:
        raise SystemExit("benchmarks/native.py needs a C compiler")
    with tempfile.TemporaryDirectory(prefix="perun-native-bench-") as work_dir:
        work = Path(work_dir)
        result = {
            "machine": {"nproc": os.cpu_count(), "python": sys.version.split()[0], "kernel": os.uname().release},
            "memory": memory_scenario(work, options.repeat, options.quick),
            "trace": trace_scenario(work, options.repeat, options.quick),
            "raw_log_100mb": raw_log_scenario(work, options.quick),
        }
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
