"""Performance fuzzing: perun's cost per execution, and how fast it finds the paper's ReDoS.

1. ``overhead``: in each block the whole search runs first
   (``perun_core.fuzz.search.fuzz`` with one worker, an execution limit,
   inputs of at most 24 bytes, fixed seed: calibrating, mutating, measuring,
   judging, writing kept inputs) and records every input it ran; then the
   same inputs are run by

   * ``bare``: a plain loop: write the input file, ``posix_spawn`` the program
     (output to ``/dev/null``), ``wait4`` it, nothing else,
   * ``executor``: perun's measuring path alone
     (:class:`perun_core.fuzz.measure.Executor`, one worker, the spawn helper),

   in alternating order, and executions per second are compared: overhead
   = bare rate / perun rate - 1 (target: under 10 %).  Two programs: the
   paper's Java class-name regex (a Python script, ``python -S``) and
   ``wc -l`` (a very cheap program, the worst case for any overhead).
2. ``redos``: fuzzing the Java class-name regex ``^(([a-z])+.)+[A-Z]([a-z])+$``
   (the paper's Table III; the program is a Python script matching each line
   with ``re``) from the seed ``java.lang.String`` for ``--budget`` seconds,
   all cores, hang timeout ``--hang-timeout``: the best slow-down over time,
   and when it first passed 10x, 50x and the paper's 317x.

Usage: ``python benchmarks/fuzz.py [--inputs N] [--blocks B] [--budget S] [--hang-timeout S]``.
One JSON object on stdout (with the load average), a readable summary on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perun_core.fuzz.measure import Executor  # noqa: E402
from perun_core.fuzz.search import fuzz  # noqa: E402
from perun_core.fuzz.setup import settings_from  # noqa: E402

REGEX_PROGRAM = r'''
import re, sys
java_class = re.compile(r"^(([a-z])+.)+[A-Z]([a-z])+$")
with open(sys.argv[1], "rb") as handle:
    for line in handle.read().decode("utf-8", "replace").splitlines():
        java_class.match(line)
'''


def note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def bare_loop(argv: list[str], inputs: list[bytes], path: Path) -> float:
    """Output to /dev/null (perun reads it from pipes and keeps a tail; this is the cheaper choice)."""
    quiet = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_WRONLY, 0) for fd in (1, 2)]
    start = time.perf_counter()
    for data in inputs:
        path.write_bytes(data)
        pid = os.posix_spawn(argv[0], [*argv, str(path)], os.environ, file_actions=quiet)
        os.wait4(pid, 0)
    return time.perf_counter() - start


def executor_loop(executor: Executor, inputs: list[bytes]) -> float:
    start = time.perf_counter()
    for data in inputs:
        executor.measure(data)
    return time.perf_counter() - start


def search_loop(argv: list[str], seed_file: Path, count: int, work: Path, block: int) -> tuple[float, list[bytes]]:
    """Seconds of a whole one-worker search of ``count`` executions, and the inputs it ran."""
    out = work / f"search-{block}"
    settings = settings_from({"cmd": " ".join(argv), "seeds": [str(seed_file)], "output_dir": str(out), "jobs": 1,
                              "exec_limit": count, "seed": block, "calibration": 2, "hang_timeout": 10,
                              "max_size": 24})
    ran: list[bytes] = []
    original = Executor.measure

    def recording(self: Executor, data: bytes):  # type: ignore[no-untyped-def]
        ran.append(data)
        return original(self, data)

    Executor.measure = recording  # type: ignore[method-assign]
    try:
        start = time.perf_counter()
        fuzz(settings, cwd=work)
        took = time.perf_counter() - start
    finally:
        Executor.measure = original  # type: ignore[method-assign]
    shutil.rmtree(out, ignore_errors=True)
    return took, ran


def overhead(name: str, argv: list[str], work: Path, count: int, blocks: int) -> dict:
    """The search runs first in each block; the bare loop and the executor then run the inputs it ran."""
    seed_file = work / "seed.txt"
    seed_file.write_bytes(b"java.lang.String")
    totals = {"bare": 0.0, "executor": 0.0, "search": 0.0}
    runs = 0
    with Executor(argv, cwd=work, jobs=1, hang_timeout=10) as executor:
        executor.measure(b"java.lang.String")  # start the helper outside the timing
        for block in range(blocks):
            took, inputs = search_loop(argv, seed_file, count, work, block)
            totals["search"] += took
            runs += len(inputs)
            for kind in (["bare", "executor"] if block % 2 == 0 else ["executor", "bare"]):
                if kind == "bare":
                    totals[kind] += bare_loop(argv, inputs, work / "bare-input.txt")
                else:
                    totals[kind] += executor_loop(executor, inputs)
    rates = {kind: runs / seconds for kind, seconds in totals.items()}
    result = {"program": name, "executions": runs,
              "per_second": {k: round(v, 1) for k, v in rates.items()},
              "overhead_executor_percent": round(100 * (rates["bare"] / rates["executor"] - 1), 2),
              "overhead_search_percent": round(100 * (rates["bare"] / rates["search"] - 1), 2)}
    note(f"{name}: bare {rates['bare']:.0f}/s, executor {rates['executor']:.0f}/s "
         f"({result['overhead_executor_percent']:+.1f} %), whole search {rates['search']:.0f}/s "
         f"({result['overhead_search_percent']:+.1f} %)")
    return result


def redos(argv: list[str], work: Path, budget: float, hang_timeout: float) -> dict:
    seed_file = work / "redos-seed.txt"
    seed_file.write_bytes(b"java.lang.String")
    settings = settings_from({"cmd": " ".join(argv), "seeds": [str(seed_file)], "output_dir": str(work / "redos"),
                              "timeout": budget, "hang_timeout": hang_timeout, "seed": 1})
    result = fuzz(settings, cwd=work)
    timeline = result.timeline

    def first_reaching(level: float) -> float | None:
        return next((round(t, 2) for t, v in timeline if v >= level), None)

    def best_at(moment: float) -> float:
        return round(max((v for t, v in timeline if t <= moment), default=1.0), 1)

    best = result.best[0] if result.findings else None
    summary = {"seed_seconds": result.seeds[0].value, "executions": result.executions,
               "elapsed": round(result.elapsed, 2), "best_slowdown": round(result.best_slowdown, 1),
               "best_is_hang": bool(best and best.hang), "best_size": best.size if best else None,
               "best_mutations": best.depth if best else None,
               "reached_seconds": {"10x": first_reaching(10), "50x": first_reaching(50), "317x": first_reaching(317)},
               "best_at_seconds": {str(m): best_at(m) for m in (1, 2, 5, 10, 20, 30, 60) if m <= budget},
               "timeline": [[round(t, 2), round(v, 1)] for t, v in timeline]}
    note(f"redos: seed {summary['seed_seconds']:.4f} s; best {summary['best_slowdown']}x "
         f"({'hang, ' if summary['best_is_hang'] else ''}{summary['best_size']} B, {summary['best_mutations']} "
         f"mutations) after {summary['executions']} runs; reached {summary['reached_seconds']}")
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100, help="inputs per block")
    parser.add_argument("--blocks", type=int, default=3)
    parser.add_argument("--budget", type=float, default=60.0, help="seconds of fuzzing the regex")
    parser.add_argument("--hang-timeout", type=float, default=10.0)
    options = parser.parse_args()
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="perun-fuzz-bench-"))
    try:
        script = work / "java_class.py"
        script.write_text(REGEX_PROGRAM.lstrip())
        regex_argv = [sys.executable, "-S", str(script)]
        wc = shutil.which("wc")
        results = {"overhead": [overhead("java-class-regex (python -S)", regex_argv, work, options.inputs,
                                         options.blocks)]}
        if wc:
            results["overhead"].append(overhead("wc -l", [wc, "-l"], work, options.inputs, options.blocks))
        results["redos"] = redos(regex_argv, work, options.budget, options.hang_timeout)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results["load_average"] = [round(x, 2) for x in os.getloadavg()]
    results["total_seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
