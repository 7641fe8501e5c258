"""Hit-count guidance of the fuzzer: what it costs, on a bare loop over the input's characters.

1. ``off``: the overhead of the whole search with guidance off (the default)
   over a bare spawn loop running the same inputs (``overhead`` of
   ``benchmarks/fuzz.py``, the budget of under 10 %), on the bare loop target.
2. ``tracer``: CPU seconds (user+sys of the child) of one run of the target,
   plain and under the hit-count tracer, at two input sizes, alternating,
   the median of ``--runs`` each: the tracer's slow-down.
3. ``search``: the same one-worker search (fixed seed, execution limit) with
   guidance off and hits: timed executions per second of search wall time,
   traced runs, inputs kept.

Usage: ``python benchmarks/fuzz_guidance.py [--inputs N] [--blocks B] [--runs R] [--limit E]``.
One JSON object on stdout (with the load average), a summary on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz import note, overhead  # noqa: E402

from perun_core.fuzz.findings import FuzzProgress  # noqa: E402
from perun_core.fuzz.guidance import python_command  # noqa: E402
from perun_core.fuzz.search import fuzz  # noqa: E402
from perun_core.fuzz.setup import settings_from  # noqa: E402

TRACER = Path(__file__).resolve().parent.parent / "perun_core" / "fuzz" / "hittrace.py"

BARE_LOOP = r'''
import sys
count = 0
for char in open(sys.argv[1], encoding="utf-8", errors="replace").read():
    count += 1
'''


def child_cpu(argv: list[str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def tracer_cost(script: Path, work: Path, runs: int) -> dict:
    interpreter, rest = python_command([str(script)], work) or ([], [])
    found = {}
    for size in (1024, 65536):
        data = work / f"input-{size}.txt"
        data.write_text("x" * size)
        plain, traced = [], []
        for i in range(runs):
            for kind in (("plain", "traced") if i % 2 == 0 else ("traced", "plain")):
                if kind == "plain":
                    plain.append(child_cpu([*interpreter, *rest, str(data)]))
                else:
                    traced.append(child_cpu([*interpreter, str(TRACER), str(work / "counts.tsv"), *rest, str(data)]))
        found[size] = {"plain_cpu_s": round(statistics.median(plain), 5),
                       "traced_cpu_s": round(statistics.median(traced), 5),
                       "slowdown": round(statistics.median(traced) / max(statistics.median(plain), 1e-9), 2)}
        note(f"tracer, {size} B: plain {found[size]['plain_cpu_s']:.4f} s, traced {found[size]['traced_cpu_s']:.4f} s "
             f"CPU ({found[size]['slowdown']:.1f}x)")
    return found


def search_rates(script: Path, work: Path, limit: int) -> dict:
    seed = work / "seed.txt"
    seed.write_text("f(a, b) + g(c)\n")
    found = {}
    for mode in ("off", "hits"):
        events: list[FuzzProgress] = []
        settings = settings_from({"cmd": str(script), "seeds": [str(seed)], "output_dir": str(work / f"out-{mode}"),
                                  "jobs": 1, "exec_limit": limit, "seed": 1, "calibration": 2, "guidance": mode,
                                  "profiles": 0, "timeout": 600})
        started = time.perf_counter()
        result = fuzz(settings, cwd=work, on_event=lambda e: events.append(e) if isinstance(e, FuzzProgress) else None)
        last = events[-1]
        traced = next((n for n in result.notes if n.startswith("hit-count guidance")), "")
        found[mode] = {"timed_executions": last.executions, "search_seconds": round(last.elapsed, 3),
                       "executions_per_second": round(last.executions_per_second, 1), "kept": last.kept,
                       "note": traced, "whole_seconds": round(time.perf_counter() - started, 2)}
        note(f"search, guidance {mode}: {last.executions} timed runs in {last.elapsed:.1f} s "
             f"({last.executions_per_second:.1f}/s), {last.kept} kept; {traced}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100, help="inputs per block of the overhead")
    parser.add_argument("--blocks", type=int, default=3)
    parser.add_argument("--runs", type=int, default=15, help="runs of each kind for the tracer's cost")
    parser.add_argument("--limit", type=int, default=150, help="execution limit of the searches")
    options = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="perun-bench-guidance-") as tmp:
        work = Path(tmp)
        script = work / "loop.py"
        script.write_text(f"#!{sys.executable} -S\n{BARE_LOOP.lstrip()}")
        script.chmod(0o755)
        report = {
            "off": overhead("bare loop (python -S)", [str(script)], work, options.inputs, options.blocks),
            "tracer": tracer_cost(script, work, options.runs),
            "search": search_rates(script, work, options.limit),
        }
    report["load_before"] = [round(x, 2) for x in load_before]
    report["load_after"] = [round(x, 2) for x in os.getloadavg()]
    report["cores"] = len(os.sched_getaffinity(0))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
