"""What ``check profiles`` loads: the speed of the command depends on not importing what it never uses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _profile(path: Path, factor: float) -> None:
    resources = [{"amount": (1.0 + (i % 7) / 10) * factor * (size + 1), "type": "mixed", "subtype": "time delta",
                  "uid": f"f{u}", "structure-unit-size": size}
                 for u in range(3) for i, size in enumerate(range(1, 60))]
    path.write_text(json.dumps({"header": {"type": "mixed", "units": {"mixed(time delta)": "us"}, "cmd": "./b"},
                                "collector_info": {"name": "trace", "params": {}}, "postprocessors": [],
                                "snapshots": [{"time": "1.0", "resources": resources, "models": []}]}))


def test_check_profiles_imports_only_what_it_uses(tmp_path):
    _profile(tmp_path / "a.perf", 1.0)
    _profile(tmp_path / "b.perf", 1.5)
    code = ("import sys\nfrom perun_core.api import check as api_check\n"
            f"report = api_check.check_profiles({str(tmp_path / 'a.perf')!r}, {str(tmp_path / 'b.perf')!r})\n"
            "print(report.degradations)\nprint('\\n'.join(sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                            env={"PATH": "/usr/bin:/bin", "PERUN_CONFIG_DIR": str(tmp_path / "config")})
    degradations, *modules = result.stdout.split()
    assert int(degradations) == 3
    loaded = set(modules)
    # scipy, the analysis package (for stored models; these profiles have none), numpy.ma (pulled in
    # by np.unique / np.median / np.quantile), the other check methods and the history analysis
    for heavy in ("scipy", "perun_core.analysis", "numpy.ma", "perun_core.api.repository", "perun_core.check.methods.fast",
                  "perun_core.check.history"):
        assert heavy not in loaded, heavy


def test_every_builtin_method_is_still_found():
    from perun_core.check import get_method, method_names

    for name in ("sart", "default", "auto", "bmoe", "aat", "fast", "lreg", "preg", "int", "loc", "eto", "mwu",
                 "rank", "creep", "cpd", "size_aware_rank_test"):
        assert get_method(name).name in method_names()
    assert len(method_names()) == 11


def test_the_history_analysis_and_welchs_test_load_neither_numpy_ma_nor_scipy(tmp_path):
    # what check head / check all add to check profiles: levels and trends over versions (np.median loaded
    # numpy.ma there), and Welch's t of few measurements (scipy.special for Student's t)
    code = """
import sys
import numpy as np
from perun_core.check.data import Sample
from perun_core.check.history import change_points, creeping, levels
from perun_core.check.stats import welch_t

rng = np.random.default_rng(0)
x = np.repeat(np.arange(1.0, 9.0), 3)
samples = [Sample("f", "f", (1 + 0.02 * v) * x * rng.uniform(0.95, 1.05, len(x)), x) for v in range(12)]
series = levels(samples)
print(creeping(series) is not None, len(change_points(series)) >= 0, welch_t(x, 2 * x)[1] < 0.05)
print("\\n".join(sys.modules))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                            env={"PATH": "/usr/bin:/bin", "PERUN_CONFIG_DIR": str(tmp_path / "config")})
    answers, *modules = result.stdout.split("\n")
    assert answers == "True True True"
    assert "numpy.ma" not in modules and "scipy" not in modules
