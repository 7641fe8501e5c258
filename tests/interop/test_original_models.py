"""Models the original Perun (0.28.3) stored in its time profiles are shown and used as it meant them.

Its postprocessors fit a time profile per uid: the ``real``, ``user`` and ``sys`` seconds of a command
together, over the key its workload generator added (``n``), and the models name neither a subtype nor
(for regression models) that key.  The two fixtures are ``perun postprocessby N@p regression-analysis
-m full -r all -dp n -o amount`` of one program at two commits, the second three times slower
(tests/fixtures/original/README.md).
"""

from __future__ import annotations

import json
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


def checked(method: str, cwd: Path, baseline: Path = BEFORE, target: Path = AFTER) -> tuple[int, list[str]]:
    """Exit status and the finding lines (``- Degradation at ./prog``, ``? Unknown ...``) of ``check method``."""
    done = run_cli("check", "method", method, str(baseline), str(target), cwd=cwd)
    assert done.returncode in (0, 3), done.stderr
    marks = ("- ", "+ ", "= ", "? ", "~ ")
    return done.returncode, [" ".join(line.strip("| ").split()) for line in done.stdout.splitlines()
                             if line.strip("| ").startswith(marks)]


def test_methods_comparing_models_use_the_originals_models_of_the_whole_command(tmp_path):
    # both best models are constant (R^2 0.93 and 0.99): the order is the same ...
    assert checked("best_model_order_equality", tmp_path) == (0, ["= no change at 1 location"])
    # ... and the level five times higher (the original's own check head said 5.04x at ./prog)
    for method in ("integral_comparison", "fast_check"):
        status, lines = checked(method, tmp_path)
        assert (status, lines) == (3, ["- Degradation at ./prog"]), method
    # the other way round it is an optimization
    status, lines = checked("integral_comparison", tmp_path, AFTER, BEFORE)
    assert (status, lines) == (0, ["+ Optimization at ./prog"])


def test_a_profile_without_models_beside_one_with_them_is_still_unknown_per_subtype(tmp_path):
    bare = json.loads(BEFORE.read_text())
    bare["models"] = []
    (tmp_path / "bare.perf").write_text(json.dumps(bare))
    status, lines = checked("best_model_order_equality", tmp_path, tmp_path / "bare.perf", AFTER)
    assert status == 0 and len(lines) == 3 and all(line.startswith("? Unknown at ./prog [") for line in lines)


def test_work_split_by_location_keeps_a_whole_uids_models_only_with_all_its_locations():
    from perun_core.check.data import ProfileData
    from perun_core.profile.codec import load_profile_from_file

    data = ProfileData(load_profile_from_file(BEFORE)).light()
    every = set(data.samples())
    assert every == {"./prog [real]", "./prog [user]", "./prog [sys]"}
    assert list(data.subset(every).stored_models()) == ["./prog"]
    assert len(data.subset(every).whole_uid_sample("./prog").y) == 36
    assert data.subset(every - {"./prog [sys]"}).stored_models() == {}


def test_postprocessby_takes_the_originals_options(perun_repo):
    """Its users type regressogram -bn/-bm/-sf and -of/-per (tests/fixtures/original/README.md)."""
    from perun_core.profile.codec import load_profile_from_file

    root, _shas = perun_repo
    for args, expected in ((["regressogram", "-bn", "4", "-sf", "median", "-of", "amount", "-per", "n"],
                            {"bins": 4, "statistic": "median", "depending_on": "n", "of": "amount"}),
                           (["regressogram", "-bm", "sturges", "--per-key", "n"],
                            {"bins": "sturges", "statistic": "mean", "depending_on": "n", "of": "amount"}),
                           (["moving-average", "-of", "amount", "-per", "n", "-ww", "3"],
                            {"moving_method": "sma", "window_width": 3, "center": True, "depending_on": "n",
                             "of": "amount"})):
        before = set((root / ".perun" / "jobs").glob("*.perf"))
        shown("postprocessby", str(BEFORE), *args, cwd=root)
        (made,) = set((root / ".perun" / "jobs").glob("*.perf")) - before
        profile = load_profile_from_file(made)
        assert profile.postprocessors[-1]["params"] == expected, args
        assert {m["subtype"] for _n, region in profile.regions() for m in region.models
                if m["model"] in ("regressogram", "moving_average")} == {"real", "user", "sys"}


def test_models_written_for_the_original_carry_the_keys_it_reads(tmp_path):
    """Its show scatter reads x_start/x_end of every model and bucket_stats, y_start and statistic_function of a
    regressogram: without them it stopped with a KeyError on our profiles in a repository it shares."""
    from gitrepo import make_repo

    root = tmp_path / "compat"
    make_repo(root, [{"files": {"a.txt": "one\n"}, "message": "first"}])
    shown("init", "--compat", str(root), cwd=tmp_path)
    shown("postprocessby", str(BEFORE), "regressogram", "-bn", "4", "-per", "n", cwd=root)
    shown("postprocessby", str(BEFORE), "regression_analysis", "-dp", "n", "-r", "linear", cwd=root)
    made = sorted((root / ".perun" / "jobs").glob("*.perf"))
    ours = [[m for m in json.loads(path.read_text())["global"]["models"] if "subtype" in m] for path in made]
    lines, regressograms = sorted(ours, key=lambda models: models[0]["model"])
    assert [m["model"] for m in lines] == ["linear"] * 3 and [m["model"] for m in regressograms] == ["regressogram"] * 3
    for model in lines + regressograms:
        assert (model["x_start"], model["x_end"]) == (model["x_interval_start"], model["x_interval_end"]) == (200, 1200)
    for model in regressograms:
        assert model["bucket_stats"] == model["bin_values"] and len(model["bucket_stats"]) == 4
        assert model["y_start"] == model["bin_values"][0] and model["statistic_function"] == "mean"
    # and we read back what we wrote
    done = run_cli("show", str(made[0]), "tableof", "models", "--format", "csv", cwd=root)
    assert done.returncode == 0 and done.stdout.count("\n") >= 4
