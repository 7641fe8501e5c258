"""Models the original Perun (0.28.3) stored in its time profiles are shown and used as it meant them.

Its postprocessors fit a time profile per uid: the ``real``, ``user`` and ``sys`` seconds of a command
together, over the key its workload generator added (``n``), and the models name neither a subtype nor
(for regression models) that key.  The two fixtures are ``perun postprocessby N@p regression-analysis
-m full -r all -dp n -o amount`` of one program at two commits, the second three times slower
(tests/fixtures/original/README.md).
"""

from __future__ import annotations

import re
from pathlib import Path

from conftest import run_cli

PROFILES = Path(__file__).resolve().parent.parent / "fixtures" / "original" / "profiles"
BEFORE = PROFILES / "time-prog-regression-analysis-all-v2.perf"
AFTER = PROFILES / "time-prog-regression-analysis-all-v3.perf"
KINDS = ("linear", "logarithmic", "quadratic", "power", "exponential", "constant")


def shown(*args: str, cwd: Path) -> str:
    done = run_cli(*args, cwd=cwd)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


def test_scatter_draws_the_models_over_the_key_they_were_fitted_on(tmp_path):
    text = shown("show", str(BEFORE), "scatter", "--width", "100", "--height", "24", cwd=tmp_path)
    titles = [line.strip() for line in text.splitlines() if "uid:" in line]
    # x is the generator's n (the models' key), not the run order; the uid's points together come first
    assert titles[0] == "amount per n; uid: ./prog (real, user, sys together, as its models were fitted)"
    assert titles[1:] == [f"amount per n; uid: ./prog [{sub}]" for sub in ("real", "user", "sys")]
    legend = re.findall(r"(\w+) \(R\^2=([0-9.]+)\)", text)
    assert [kind for kind, _r2 in legend] == list(KINDS)
    assert dict(legend)["constant"] == "0.935"
    # asked for one kind, only that one is drawn, still on the uid's own plot
    one = shown("show", str(BEFORE), "scatter", "--model", "quadratic", "--width", "100", "--height", "24",
                cwd=tmp_path)
    assert re.findall(r"(\w+) \(R\^2=", one) == ["quadratic"]


def test_scatter_of_a_subtype_alone_has_no_curves_fitted_to_the_whole_uid(tmp_path):
    text = shown("show", str(BEFORE), "scatter", "-u", "./prog [user]", "--width", "100", "--height", "24",
                 cwd=tmp_path)
    assert [line.strip() for line in text.splitlines() if "uid:" in line] == ["amount per n; uid: ./prog [user]"]
    assert "R^2" not in text
