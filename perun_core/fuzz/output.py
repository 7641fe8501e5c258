"""What a fuzzing leaves in its output directory.

* ``inputs/`` every kept input, ``hangs/`` the inputs that hit the hang timeout,
* ``findings/`` the analysed inputs (each kept input analysed, scaled to
  run within the analysis' time cap) and, for a superlinear growth, beside
  each the worst scaled input measured (``ID-largest``: the growth at the
  largest size measured),
* ``results.json`` the settings, the cost measure, the seeds with their
  baselines, the findings (``reported``: ratio at equal size, confidence,
  growth order with its fit, sizes and costs, the part that was scaled, the
  kept input analysed, the largest measured input with its size and cost) and
  every analysed input that was not reported with the reason (``analysed``),
  every kept input (size, CPU and wall seconds, cost over an ordinary input
  of its size, parent, the rules that made it), the best ratio over time,
  the rule weights,
* ``results.md`` the findings' table, then a table like the paper's Table III,
* ``slowdown.svg`` the best slow-down over fuzzing time.

Every file is written atomically (temporary file, fsync, rename).
"""

from __future__ import annotations

import html
import json
from typing import Any

from ..atomic import atomic_write_text
from .findings import FuzzResult, Verdict, compact_rules
from .measure import COST_UNITS

__all__ = ["RESULTS_VERSION", "growth_text", "markdown_table", "results_json", "svg_plot", "write_results"]

#: 2: the cost measure, the reported and analysed inputs; a kept input's slowdown is at equal size
RESULTS_VERSION = 2


def growth_text(verdict: Verdict) -> str:
    """``quadratic (n^2.03, r2 0.998) in the run of 'a', 200..2400 repetitions``."""
    g = verdict.growth
    if g.order == "exponential" and g.per_step is not None:
        fit = f"x{g.per_step:.3g} per repetition"
    elif g.exponent is None and g.at_least is not None and g.measured is not None:
        low, high = g.measured
        return (f"{g.order} (about n^{g.at_least:.2f} or steeper over {low}..{high} repetitions, too narrow a range "
                f"to name the order) in {g.part}")
    elif g.exponent is None:
        return f"{g.order} in {g.part}"
    else:
        fit = f"n^{g.exponent:.2f}"
    span = f", {min(g.counts)}..{max(g.counts)} repetitions" if g.counts else ""
    return f"{g.order} ({fit}, r2 {g.r_square:.3f}) in {g.part}{span}"


def results_json(result: FuzzResult) -> dict[str, Any]:
    s = result.settings
    return {
        "version": RESULTS_VERSION,
        "command": result.argv,
        "input": "stdin" if s.stdin else "file argument",
        "metric": result.metric,
        "cost_unit": COST_UNITS.get(result.metric, result.metric),
        "settings": {"timeout": s.timeout, "hang_timeout": s.hang_timeout, "max_size": s.max_size,
                     "max_increase": s.max_increase, "max_ratio": s.max_ratio, "rules": list(s.rules),
                     "seed": s.seed, "jobs": result.jobs, "exec_limit": s.exec_limit, "stop_at": s.stop_at},
        "seeds": [{"id": f.id, "file": f.file, "size": f.size, "cpu": f.cpu, "wall": f.wall, "baseline": f.value}
                  for f in result.seeds],
        "noise": result.noise,
        "threshold": result.threshold,
        "coverage": result.coverage,
        "executions": result.executions,
        "failures": result.failures,
        "elapsed": result.elapsed,
        "searched": result.searched,
        "stopped": result.stopped,
        "best_slowdown": result.best_slowdown,
        "reported": [v.as_json() for v in result.reported],
        "analysed": [v.as_json() for v in result.verdicts if not v.reported],
        "findings": [f.as_json() for f in result.best],
        "timeline": [[round(t, 4), round(v, 4)] for t, v in result.timeline],
        "rule_weights": result.rule_weights,
        "rule_successes": result.rule_successes,
        "profiles": result.profiles,
        "registered": result.registered,
        "matrix_workloads": result.matrix_workloads,
        "notes": result.notes,
    }


def _seconds(value: float) -> str:
    """A cost for the table: seconds with four decimals, a large count (instructions) with four digits."""
    if value >= 1000:
        return f"{value:.4g}"
    return f"{value:.4f}" if value < 10 else f"{value:.1f}"


def _ratio(ratio: float) -> str:
    """A ratio at equal size, or that none was measured (the budget ran out before the comparison)."""
    return f"{ratio:.1f}x" if ratio > 0 else "not compared"


def markdown_table(result: FuzzResult, limit: int = 50) -> str:
    """The findings (ratio at equal size, growth, confidence), then the seeds and the best kept inputs."""
    unit = COST_UNITS.get(result.metric, result.metric)
    lines = [f"# Performance fuzzing of `{' '.join(result.argv)}`", "",
             f"{result.executions} runs in {result.elapsed:.1f} s, {len(result.findings)} inputs kept, "
             f"{len(result.reported)} reported (stopped: {result.stopped}); cost: {unit}.", ""]
    if result.verdicts:
        lines += [f"| Input | Size [B] | Ratio at equal size, re-measured side by side | Confidence | Growth | Largest measured [B, {unit}] "
                  "| Reported |",
                  "| --- | ---: | ---: | ---: | --- | --- | --- |"]
        for verdict in result.verdicts:
            largest = verdict.largest
            biggest = f"[{largest.size}, {_seconds(largest.cost)}]({largest.file})" if largest and largest.file else "-"
            lines.append(f"| [{verdict.id}]({verdict.file}) | {verdict.size} | {_ratio(verdict.ratio)} | "
                         f"{verdict.confidence:.3f} | {growth_text(verdict)} | {biggest} | "
                         f"{'yes' if verdict.reported else 'no: ' + verdict.reason} |")
        lines.append("")
    lines += [f"| Input | Size [B] | Cost [{unit}] | Ratio at equal size in the search | Used rules |",
              "| --- | ---: | ---: | ---: | --- |"]
    for seed in result.seeds:
        lines.append(f"| {seed.id} (`{seed.file}`) | {seed.size} | {_seconds(seed.value)} | - | - |")
    for finding in result.best[:limit]:
        time_text = f"timeout ({result.settings.hang_timeout:g} s)" if finding.hang else _seconds(finding.value)
        slowdown = f">= {finding.slowdown:.1f}" if finding.hang else f"{finding.slowdown:.1f}"
        lines.append(f"| [{finding.id}]({finding.file}) | {finding.size} | {time_text} | {slowdown} | "
                     f"{finding.depth}: {compact_rules(finding.rules)} |")
    if len(result.findings) > limit:
        lines.append(f"\n{len(result.findings) - limit} more in results.json.")
    return "\n".join(lines) + "\n"


def svg_plot(timeline: list[tuple[float, float]], *, width: int = 640, height: int = 360, title: str = "") -> str:
    """A step plot of the best slow-down (y, log scale when it spans a decade) over seconds (x)."""
    import math

    points = timeline or [(0.0, 1.0)]
    left, right, top, bottom = 60, 20, 30, 40
    t_max = max(max(t for t, _ in points), 1e-3)
    v_max = max(max(v for _, v in points), 1.0)
    log = v_max >= 10

    def y_of(value: float) -> float:
        share = math.log10(max(value, 1.0)) / math.log10(v_max) if log else (value - 1) / max(v_max - 1, 1e-9)
        return top + (height - top - bottom) * (1 - share)

    def x_of(t: float) -> float:
        return left + (width - left - right) * t / t_max

    path: list[str] = []
    previous = None
    for t, v in points:
        if previous is not None:
            path.append(f"{x_of(t):.1f},{y_of(previous):.1f}")
        path.append(f"{x_of(t):.1f},{y_of(v):.1f}")
        previous = v
    ticks = []
    values = [10 ** k for k in range(0, int(math.log10(v_max)) + 1)] if log else \
        [1 + (v_max - 1) * k / 4 for k in range(5)]
    for value in values:
        y = y_of(value)
        ticks.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="#ddd"/>'
                     f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{value:g}x</text>')
    for k in range(5):
        t = t_max * k / 4
        x = x_of(t)
        ticks.append(f'<text x="{x:.1f}" y="{height - bottom + 16}" text-anchor="middle" font-size="11">{t:.3g}</text>')
    heading = html.escape(title or "Best slow-down over fuzzing time, at equal size in the search")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif">\n'
            f'<rect width="100%" height="100%" fill="white"/>\n'
            f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="14">{heading}</text>\n'
            + "\n".join(ticks) +
            f'\n<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="{" ".join(path)}"/>\n'
            f'<text x="{width / 2}" y="{height - 6}" text-anchor="middle" font-size="12">time [s]</text>\n'
            f'<text x="14" y="{height / 2}" text-anchor="middle" font-size="12" '
            f'transform="rotate(-90 14 {height / 2})">slow-down{" (log)" if log else ""}</text>\n</svg>\n')


def write_results(result: FuzzResult) -> None:
    """(Re)write results.json, results.md and slowdown.svg in the output directory."""
    out = result.settings.output_dir
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "results.json", json.dumps(results_json(result), indent=2) + "\n")
    atomic_write_text(out / "results.md", markdown_table(result))
    atomic_write_text(out / "slowdown.svg", svg_plot(result.timeline, title=f"{' '.join(result.argv)}: best slow-down at equal size in the search"))
