"""Fuzzing inside a perun repository (profiles, --register, --add-to-matrix) and the gcov pre-filter."""

from __future__ import annotations

import json
import subprocess

import pytest

from perun_core import api

from .programs import SORT, sort_seed, write_program


def test_the_best_inputs_become_profiles_registered_and_matrix_workloads(perun_repo):
    perun_repo, _ = perun_repo
    program = write_program(perun_repo, "sort.py", SORT)
    (perun_repo / "seed.txt").write_text(sort_seed())
    events = []
    result = api.run_fuzzing({"cmd": str(program), "seeds": ["seed.txt"], "output_dir": "fuzz-out", "seed": 2,
                              "stop_at": 1.5, "profiles": 2, "register": True, "add_to_matrix": True, "timeout": 60},
                             cwd=perun_repo, on_event=events.append)
    assert result.best_slowdown >= 1.5
    collected = [e for e in events if isinstance(e, api.ProfilesCollected)]
    assert len(collected) == 1 and len(result.registered) == len(result.profiles) >= 1
    status = api.status(cwd=perun_repo)
    assert status  # the repository still opens and reports
    from perun_core.config import Config

    workloads = Config.load(perun_repo / ".perun" / "local.yml", kind="local").get("workloads")
    assert result.matrix_workloads and set(result.matrix_workloads) <= set(workloads)
    assert all(w.startswith("fuzz-out/inputs/") for w in result.matrix_workloads)
    saved = json.loads((perun_repo / "fuzz-out" / "results.json").read_text())
    assert saved["profiles"] == result.profiles and saved["matrix_workloads"] == result.matrix_workloads


def test_register_outside_a_repository_is_refused_before_fuzzing(tmp_path):
    from perun_core.errors import NotPerunRepository

    program = write_program(tmp_path, "sort.py", SORT)
    (tmp_path / "seed.txt").write_text(sort_seed())
    with pytest.raises(NotPerunRepository):
        api.run_fuzzing({"cmd": str(program), "seeds": ["seed.txt"], "output_dir": "out", "register": True},
                        cwd=tmp_path)
    assert not (tmp_path / "out").exists()


C_COUNTER = r"""
#include <stdio.h>
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "r");
    int c, words = 0, in = 0;
    long work = 0;
    while ((c = fgetc(f)) != EOF) {
        if (c == ' ' || c == '\n') { in = 0; continue; }
        if (!in) { words++; in = 1; for (int i = 0; i < words; i++) work += i; }
    }
    printf("%d %ld\n", words, work);
    return 0;
}
"""


@pytest.mark.tools("gcc", "gcov")
def test_the_coverage_prefilter_is_used_when_the_program_has_gcov_notes_and_skipped_otherwise(tmp_path):
    build = tmp_path / "build"
    build.mkdir()
    (build / "counter.c").write_text(C_COUNTER)
    subprocess.run(["gcc", "--coverage", "-O0", "-o", "counter", "counter.c"], cwd=build, check=True)
    (tmp_path / "seed.txt").write_text("a b c d\ne f g\n")
    # the execution limit ends the search; the time budget bounds the analysis of the kept inputs that follows
    # (scaled up until one run costs seconds), which this test does not look at
    common = {"cmd": str(build / "counter"), "seeds": ["seed.txt"], "seed": 1, "exec_limit": 30, "profiles": 0,
              "timeout": 30}
    used = api.run_fuzzing({**common, "output_dir": "a", "source_path": str(build), "gcno_path": str(build)},
                           cwd=tmp_path)
    assert used.coverage == "used" and used.jobs == 1
    assert all(f.coverage and f.coverage > 0 for f in used.findings)
    (tmp_path / "empty").mkdir()
    skipped = api.run_fuzzing({**common, "output_dir": "b", "source_path": str(build),
                               "gcno_path": str(tmp_path / "empty")}, cwd=tmp_path)
    assert skipped.coverage.startswith("skipped: no .gcno files")
    assert json.loads((tmp_path / "b" / "results.json").read_text())["coverage"] == skipped.coverage
