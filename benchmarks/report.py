#!/usr/bin/env python3
"""Run the benchmark behind every figure the READMEs state, and write the report (``make bench-report``).

Each benchmark of ``benchmarks/figures.py`` runs once as a subprocess of
this interpreter; its figures are picked out of its JSON.  Written:

* ``benchmarks/report.json``: per benchmark run the commit (``+dirty`` when
  the work tree had changes), the date, the machine (cores, CPU) and its
  load average before and after; per figure its value, the text a README
  shows and the run it came from;
* ``benchmarks/REPORT.md``: the same as tables;
* the READMEs: every figure marked ``<!-- report: KEY -->`` is rewritten to
  the measured text (``--no-readmes`` leaves them alone).

``--only NAME ...`` (benchmark names or figure keys) runs just what those
need and keeps the other figures of the existing report as they were, each
with the commit, date and load of its own run.  ``--quick`` runs every
benchmark at its smoke-test size into ``--out`` (default
``.venv/bench-quick``) and never touches the READMEs or the committed
report: its numbers are not the stated ones.  ``--list`` prints the
benchmarks and figures.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

sys.path.insert(0, str(ROOT))

from figures import BENCHES, FIGURE_TEXT, FIGURES, MARKER, READMES, pick, render  # noqa: E402

from perun_core.atomic import atomic_write_text  # noqa: E402


def note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def loadavg() -> list[float]:
    return [round(value, 2) for value in os.getloadavg()]


def commit() -> str:
    """HEAD's short hash, with ``+dirty`` when tracked files other than the ones the report writes differ."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    written = [f":!{name}" for name in ("benchmarks/report.json", "benchmarks/REPORT.md", *READMES)]
    return head + ("+dirty" if git("status", "--porcelain", "--untracked-files=no", "--", ".", *written) else "")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def run_bench(name: str, quick: bool) -> tuple[dict, Any]:
    """Run benchmark ``name``; (what the report says of the run, the benchmark's JSON)."""
    bench = BENCHES[name]
    argv = [sys.executable, str(HERE / bench.script), *(bench.quick if quick else bench.argv)]
    note(f"report: {name}: {' '.join(argv[1:])}")
    run = {"bench": name, "command": " ".join(["python", f"benchmarks/{bench.script}", *argv[2:]]),
           "commit": commit(), "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "quick": quick, "cores": os.cpu_count(), "cpu": cpu_model(), "python": platform.python_version(),
           "loadavg_start": loadavg()}
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    run["seconds"] = round(time.perf_counter() - started, 1)
    run["loadavg_end"] = loadavg()
    if done.returncode != 0:
        raise SystemExit(f"error: benchmarks/{bench.script} exited with {done.returncode}; no report written")
    try:
        return run, json.loads(done.stdout)
    except json.JSONDecodeError as error:
        raise SystemExit(f"error: benchmarks/{bench.script} printed no JSON object ({error})") from None


def figures_of(name: str, result: Any, quick: bool) -> dict[str, dict]:
    figures = {}
    for key, figure in FIGURES.items():
        if figure.bench != name:
            continue
        try:
            value = pick(result, figure.path)
        except KeyError:
            if quick:  # smoke-test sizes can lack a measurement (pymemory's sizes)
                continue
            raise SystemExit(f"error: benchmarks/{BENCHES[name].script} gave no '{figure.path}' for figure {key}")
        figures[key] = {"value": value, "text": render(figure, value), "bench": name, "what": figure.what}
    return figures


def rewrite_readme(path: Path, figures: dict[str, dict]) -> list[str]:
    """Put each marked figure's report text before its marker; the keys marked but not in the report."""
    text = path.read_text(encoding="utf-8")
    out, last, unknown = [], 0, []
    for marker in MARKER.finditer(text):
        key = marker.group("key")
        before = text[last:marker.start()]
        found = FIGURE_TEXT.search(before)
        if key not in figures or found is None:
            unknown.append(key)
            out.append(before)
        else:
            out.append(before[:found.start()] + figures[key]["text"])
        out.append(marker.group(0))
        last = marker.end()
    out.append(text[last:])
    new = "".join(out)
    if new != text:
        atomic_write_text(path, new)
    return unknown


def markdown(report: dict) -> str:
    lines = ["# Benchmark report", "",
             "Written by `make bench-report` (`benchmarks/report.py`); every figure marked in README.md and",
             "benchmarks/README.md is one of these. Timings depend on the machine and on its load: compare",
             "a figure with the load average of its run. Regenerate one benchmark with",
             "`benchmarks/report.py --only NAME`.", ""]
    if any(run["quick"] for run in report["runs"].values()):
        lines += ["**Smoke-test sizes (`--quick`)**: these numbers check that the benchmarks run; they are not the",
                  "figures the READMEs state.", ""]
    lines += ["## Runs", "",
             "| benchmark | command | commit | date | cores | load before -> after | seconds |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, run in sorted(report["runs"].items()):
        load = f"{run['loadavg_start'][0]:.2f} -> {run['loadavg_end'][0]:.2f}"
        lines.append(f"| {name} | `{run['command']}` | {run['commit']} | {run['date']} | {run['cores']} | {load} "
                     f"| {run['seconds']} |")
    lines += ["", "## Figures", "", "| key | figure | what | benchmark |", "| --- | --- | --- | --- |"]
    for key, figure in sorted(report["figures"].items()):
        lines.append(f"| `{key}` | {figure['text']} | {figure['what']} | {figure['bench']} |")
    return "\n".join(lines) + "\n"


def selected(only: list[str] | None) -> list[str]:
    """The benchmarks that ``--only`` names (directly or through a figure key), in registry order."""
    if not only:
        return list(BENCHES)
    wanted = set()
    for name in only:
        if name in BENCHES:
            wanted.add(name)
        elif name in FIGURES:
            wanted.add(FIGURES[name].bench)
        else:
            raise SystemExit(f"error: --only '{name}': neither a benchmark ({', '.join(BENCHES)}) nor a figure key "
                             "(see --list)")
    return [name for name in BENCHES if name in wanted]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="benchmarks or figure keys to run")
    parser.add_argument("--quick", action="store_true", help="smoke-test sizes, into --out; READMEs untouched")
    parser.add_argument("--out", type=Path, help="directory of report.json and REPORT.md (default benchmarks/, "
                        "with --quick .venv/bench-quick/)")
    parser.add_argument("--no-readmes", action="store_true", help="leave the READMEs' figures as they are")
    parser.add_argument("--list", action="store_true", help="print the benchmarks and figures, run nothing")
    parser.add_argument("--readmes", action="store_true",
                        help="run nothing: rewrite the READMEs' marked figures from the existing report")
    args = parser.parse_args(argv)
    if args.list:
        for name, bench in BENCHES.items():
            print(f"{name}: benchmarks/{bench.script} {' '.join(bench.argv)} -- {bench.about}")
            for key, figure in FIGURES.items():
                if figure.bench == name:
                    print(f"  {key}: {figure.what}")
        return 0
    out = args.out or (ROOT / ".venv" / "bench-quick" if args.quick else HERE)
    if args.readmes:
        return rewrite_readmes(json.loads((out / "report.json").read_text(encoding="utf-8"))["figures"])
    out.mkdir(parents=True, exist_ok=True)
    path = out / "report.json"
    report: dict = {"runs": {}, "figures": {}}
    if args.only and path.exists():
        report = json.loads(path.read_text(encoding="utf-8"))
    for name in selected(args.only):
        run, result = run_bench(name, args.quick)
        report["runs"][name] = run
        report["figures"] = {key: value for key, value in report["figures"].items() if value["bench"] != name}
        report["figures"].update(figures_of(name, result, args.quick))
        for key, figure in sorted(figures_of(name, result, args.quick).items()):
            note(f"  {key}: {figure['text']}")
        atomic_write_text(path, json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    atomic_write_text(out / "REPORT.md", markdown(report))
    note(f"report: wrote {path} and {out / 'REPORT.md'}")
    if not args.quick and not args.no_readmes:
        return rewrite_readmes(report["figures"])
    return 0


def rewrite_readmes(figures: dict[str, dict]) -> int:
    """Rewrite the marked figures of every README; 1 when one marks a figure the report lacks."""
    status = 0
    for readme in READMES:
        unknown = rewrite_readme(ROOT / readme, figures)
        if unknown:
            note(f"error: {readme}: marked figures the report lacks: {', '.join(sorted(set(unknown)))}")
            status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
