"""What ``show`` loads for a table or a bar chart: each ``perun-core`` process pays for every module it
imports, so a view loads neither the model fitting of the analysis package nor the SVG writer's XML helpers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: the model fitting (numpy and scipy behind it) and what xml.sax.saxutils brings (urllib.request: http, email)
HEAVY = ("perun_core.analysis.regression", "perun_core.analysis.nonparametric", "perun_core.analysis.clusterizer",
         "xml.sax.saxutils", "urllib.request")


@pytest.mark.parametrize(("view", "shown"), [(["tableof", "resources"], "f4"), (["bars"], "mean(amount)")])
def test_show_loads_neither_the_model_fitting_nor_the_svg_helpers(tmp_path, view, shown):
    rows = [{"type": "time", "subtype": "function", "uid": f"f{i}", "amount": 1.0 + i} for i in range(5)]
    profile = {"header": {"type": "time", "cmd": "./app", "units": {"time": "s"}},
               "collector_info": {"name": "time", "params": {}}, "postprocessors": [],
               "global": {"time": 0, "resources": rows, "models": []}}
    (tmp_path / "p.perf").write_text(json.dumps(profile))
    code = ("import runpy, sys\n"
            f"sys.argv = ['perun-core', 'show', {str(tmp_path / 'p.perf')!r}, *{view!r}]\n"
            "try:\n    runpy.run_module('perun_core.cli.entry', run_name='__main__')\n"
            "except SystemExit as done:\n    assert not done.code, done.code\n"
            "sys.stderr.write('\\n'.join(sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PERUN_CONFIG_DIR": str(tmp_path / "c")})
    assert result.returncode == 0, result.stderr[-2000:]
    assert shown in result.stdout, result.stdout
    loaded = set(result.stderr.split())
    assert "perun_core.analysis.filtering" in loaded  # the filters are used: the package is there, its fitting not
    assert [name for name in HEAVY if name in loaded] == []
