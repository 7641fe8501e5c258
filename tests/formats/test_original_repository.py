"""A repository made by the original Perun 0.28.3 works in place: status, log, show, check, add, config, the TUI."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from conftest import run_cli

from perun_core.storage.index import (ORIGINAL_LAYOUT, decode_index, encode_original_index, index_layout,
                                      read_index)

from .conftest import FIXTURES

COMMITS = {
    "0e3b47eb96e79b775985136ca87faa520580aea4": ["kperf-[sorter]-[3000]-2026-11-25-11-40-05.perf",
                                                 "time-[sorter]-[3000]-2026-11-25-11-40-01.perf"],
    "d0692fbbd2d02a4e8aa59204350f46ee52021ceb": ["time-[python3]-[fib_14.txt]-2026-11-25-11-40-12.perf",
                                                 "time-[sorter]-[size_9000.txt]-2026-11-25-11-40-08.perf",
                                                 "time-[sorter]-[size_9000.txt]-2026-11-25-11-40-15.perf"],
    "0fec6f394d16a6c0f1c8fc78488d5371cea3781a": ["time-[sorter]-[3000]-2026-11-25-11-40-18.perf"],
}
PENDING = "time-[sorter]-[size_9000.txt]-2026-11-25-11-40-20.perf"


def index_of(root, sha):
    return root / ".perun" / "objects" / sha[:2] / sha[2:]


def test_its_indexes_are_read(original_repo):
    for sha, names in COMMITS.items():
        path = index_of(original_repo, sha)
        data = path.read_bytes()
        assert index_layout(data) == ORIGINAL_LAYOUT
        entries = decode_index(data, path)
        assert [e.path for e in entries] == names
        assert all(e.has_metadata and e.collector in ("time", "kperf") for e in entries)
        assert all(e.postprocessors in ((), ("regression_analysis",)) for e in entries)


def test_original_index_layout_round_trips_and_damage_is_reported(original_repo, tmp_path):
    from perun_core.errors import CorruptIndex

    path = index_of(original_repo, "d0692fbbd2d02a4e8aa59204350f46ee52021ceb")
    data = path.read_bytes()
    entries = decode_index(data, path)
    assert encode_original_index(entries) == data  # its layout, byte for byte
    assert encode_original_index(list(reversed(entries))) == data  # it keeps entries sorted by name
    with pytest.raises(CorruptIndex):
        decode_index(data[:-7], path)
    with pytest.raises(CorruptIndex):
        decode_index(data + b"xx", path)


def test_status_log_show_and_check_answer(original_repo, original_shared):
    status = run_cli("status", cwd=original_repo)
    assert status.returncode == 0, status.stderr
    assert COMMITS["0fec6f394d16a6c0f1c8fc78488d5371cea3781a"][0] in status.stdout and PENDING in status.stdout
    log = run_cli("log", cwd=original_repo)
    assert log.returncode == 0, log.stderr
    for sha, names in COMMITS.items():
        assert sha in log.stdout
        assert f"{len(names)}|0|0|{len(names)} profiles" in log.stdout
    for spec in ("0@i", "0@p"):
        shown = run_cli("show", spec, "tableof", "resources", "--format", "csv", cwd=original_repo)
        assert shown.returncode == 0, shown.stderr
        assert len(shown.stdout.splitlines()) > 3
    raw = run_cli("show", "0@i", "raw", cwd=original_repo)
    assert raw.returncode == 0 and json.loads(raw.stdout)["header"]["cmd"] == "./sorter"
    check = run_cli("check", "all", cwd=original_repo)
    assert check.returncode == 0, check.stderr
    assert "pair" in check.stdout
    # nothing was rewritten by reading
    assert index_layout(index_of(original_repo, "0fec6f394d16a6c0f1c8fc78488d5371cea3781a").read_bytes()) == ORIGINAL_LAYOUT


def test_add_keeps_the_index_in_the_layout_the_original_reads(original_repo, original_shared):
    sha = "0fec6f394d16a6c0f1c8fc78488d5371cea3781a"
    before = decode_index(index_of(original_repo, sha).read_bytes(), sha)
    added = run_cli("add", "0@p", cwd=original_repo)
    assert added.returncode == 0, added.stderr
    after = index_of(original_repo, sha).read_bytes()
    assert index_layout(after) == ORIGINAL_LAYOUT
    entries = read_index(index_of(original_repo, sha))
    assert [e.path for e in entries] == sorted([*COMMITS[sha], PENDING])
    assert entries[0] == before[0]  # the original's entry is written back as it was
    assert (entries[1].cmd, entries[1].workload, entries[1].collector) == ("./sorter", "./data/size_9000.txt", "time")
    assert not (original_repo / ".perun" / "backup").exists()
    status = run_cli("status", cwd=original_repo)
    assert status.returncode == 0 and "Tracked profiles (2)" in status.stdout and "(no pending profiles)" in status.stdout


def test_its_objects_verify_and_decode(original_repo):
    from perun_core.storage.repository import PerunRepository

    with PerunRepository(original_repo) as repo:
        for sha in COMMITS:
            for entry in repo.read_index(sha):
                profile = repo.objects.read_profile(entry.checksum)
                assert profile.layout == "original-0.28" and profile.resource_count() > 0
                raw = repo.objects.read_raw(entry.checksum)
                assert raw[0] == "time"


def test_stale_absolute_vcs_url_falls_back_to_the_repository(original_repo, original_shared):
    from perun_core.storage.repository import PerunRepository

    assert "url: /tmp/orig-work/clean" in (original_repo / ".perun" / "local.yml").read_text()
    with PerunRepository(original_repo) as repo:
        assert repo.vcs_root == original_repo.resolve()
        assert repo.vcs.head() == "0fec6f394d16a6c0f1c8fc78488d5371cea3781a"


def test_its_configuration_files_give_no_error_and_config_lists_unused_keys_once(original_repo, original_shared):
    listing = run_cli("config", cwd=original_repo)
    assert listing.returncode == 0, listing.stderr
    assert "format.output_show_template" in listing.stdout and "format.sort_profiles_order" in listing.stdout
    assert "format.status" not in listing.stdout and "generators" not in listing.stdout
    for key in ("format.sort_profiles_by", "generators.workload"):
        got = run_cli("config", "get", key, cwd=original_repo)
        assert got.returncode == 0, got.stderr
    status = run_cli("status", cwd=original_repo)
    assert "output_show_template" not in status.stdout + status.stderr  # reported by config only


def test_its_shared_yml_breaks_no_command_outside_a_repository(tmp_path, original_shared):
    for args in (["--version"], ["config", "get", "format.sort_profiles_by"], ["config"]):
        result = run_cli(*args, cwd=tmp_path)
        assert result.returncode == 0, (args, result.stderr)


def test_its_generators_are_understood():
    from perun_core.config import Config
    from perun_core.runner.generators import check_generators

    shared = Config.load(FIXTURES / "shared.yml", kind="shared")
    generators = {g.id: g for g in check_generators(shared.get("generators.workload"))}
    assert generators["basic_integers"].option("min") == 100 and generators["basic_integers"].option("max") == 10000
    assert generators["basic_strings"].option("step_len") == 8
    assert generators["basic_files"].option("step_lines") == 1000


def test_an_original_external_generator_runs_with_its_output_dir(original_repo, original_shared):
    from perun_core.config import Config
    from perun_core.runner.generators import check_generators, generated_workloads

    local = Config.load(original_repo / ".perun" / "local.yml", kind="local")
    generator = {g.id: g for g in check_generators(local.get("generators.workload"))}["sorter_files"]
    assert generator.option("command") == "./gen_sizes.sh" and generator.option("file_format") == "size_{size}.txt"
    with generated_workloads(generator, original_repo) as makers:
        workloads = [make() for make in makers]
    assert [w.size for w in workloads] == [1000, 3000, 5000, 7000, 9000, 11000]


def test_its_job_matrix_with_a_postprocessor_over_the_generators_n_runs(original_repo, original_shared):
    """The original records the number its external generator's file_format names ({n}) under that name, and
    a job matrix written for it fits models over it (per_key: n): the same local.yml runs here."""
    from perun_core.profile.codec import load_profile_from_file

    local = original_repo / ".perun" / "local.yml"
    local.write_text(local.read_text() + (
        "cmds: [cat]\nworkloads: [sorter_files]\ncollectors:\n  - name: time\n    params: {repeat: 1}\n"
        "postprocessors:\n  - name: regression_analysis\n    params: {method: full, regression_models: [linear],"
        " per_key: n, of_key: amount, steps: 3}\n"))
    done = run_cli("run", "matrix", cwd=original_repo)
    assert done.returncode == 0, done.stderr
    (made,) = [p for p in (original_repo / ".perun" / "jobs").glob("*.perf") if p.name != PENDING]
    profile = load_profile_from_file(made)
    rows = [row for _n, region in profile.regions() for row in region.resources]
    assert {row["n"] for row in rows} == {1000, 3000, 5000, 7000, 9000, 11000}
    assert all(row["n"] == row["structure-unit-size"] for row in rows)
    models = [model for _n, region in profile.regions() for model in region.models]
    assert models and {m["model"] for m in models} == {"linear"} and {m["per_key"] for m in models} == {"n"}


def test_what_its_check_recorded_is_shown_by_log_and_status(original_repo, original_shared):
    """The original keeps its check's findings in objects/<sha>.changes (tests/fixtures/original/changes/:
    its record of a 5x slower commit, put here at HEAD, whose own record is empty)."""
    from perun_core import api

    head = "0fec6f394d16a6c0f1c8fc78488d5371cea3781a"
    record = index_of(original_repo, head).with_suffix(".changes")
    assert record.read_bytes() == b""
    shutil.copy(FIXTURES / "changes" / "degradation.changes", record)
    short = run_cli("log", "-s", cwd=original_repo).stdout.splitlines()
    assert short[1].startswith("* 0fec6f") and short[1].endswith(" -")
    assert not any(line.endswith(("-", "+")) for line in short[2:])  # the other records are empty
    status = run_cli("status", cwd=original_repo).stdout
    assert "- Degradation at ./prog [original Perun] in ./prog ./data/size_400.txt" in status
    (pair,) = api.stored_check(cwd=original_repo).pairs
    (finding,) = pair.findings
    assert (finding.location, finding.result.name, finding.from_, finding.to, finding.unit) == (
        "./prog", "DEGRADATION", 0.01, 0.07, "s")
    assert pair.baseline.minor == "4595e3b9a85be0fc8c1d98bdf6b7327fb842b7d1"
    # a check of ours at that commit is what is shown from then on
    run_cli("check", "head", cwd=original_repo)
    assert "original Perun" not in run_cli("status", cwd=original_repo).stdout


def test_an_empty_profile_name_names_no_profile(original_repo, original_shared):
    # the repository has one pending profile, whose name contains the empty text
    done = run_cli("show", "", "raw", cwd=original_repo)
    assert done.returncode == 2 and "got an empty text" in done.stderr and not done.stdout


async def test_the_tui_opens_it(original_repo, original_shared, monkeypatch):
    from perun_tui.app import PerunApp
    from perun_tui.widgets.history import HistoryView

    monkeypatch.setenv("TZ", "UTC")
    app = PerunApp(original_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(50):
            await pilot.pause(0.05)
            view = app.query_one(HistoryView)
            if len(view.entries) == 3:
                break
        assert [e.version.checksum for e in view.entries] == list(reversed(COMMITS))


def test_objects_written_by_us_have_the_header_the_original_reads(original_repo, original_shared):
    import zlib

    run_cli("add", "0@p", cwd=original_repo)
    sha = "0fec6f394d16a6c0f1c8fc78488d5371cea3781a"
    entry = read_index(index_of(original_repo, sha))[-1]
    raw = zlib.decompress(index_of(original_repo, entry.checksum).read_bytes())
    assert hashlib.sha1(raw).hexdigest() == entry.checksum and raw.startswith(b"profile time ")
    header, _, body = raw.partition(b"\0")
    assert int(header.split()[-1]) == len(body.decode("utf-8"))  # it counts characters
    document = json.loads(body)  # the documented form, which the original reads; no origin in an object
    # unlike the original, the object keeps the commit it is registered at (fsck places objects by it)
    assert "header" in document and "global" in document and document["origin"] == sha


def test_its_shared_yml_in_the_home_directory_breaks_no_command(tmp_path, clean_env, monkeypatch):
    monkeypatch.delenv("PERUN_CONFIG_DIR")
    target = clean_env / ".config" / "perun"
    target.mkdir(parents=True)
    shutil.copy(FIXTURES / "shared.yml", target / "shared.yml")
    project = tmp_path / "project"
    project.mkdir()
    import subprocess

    for command in (["git", "init", "-q", "."],
                    ["git", "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "s"]):
        subprocess.run(command, cwd=project, check=True)
    for args in (["init"], ["status"], ["collect", "-c", "true", "time"], ["status"], ["add", "0@p"], ["log"],
                 ["show", "0@i", "tableof", "resources"], ["check", "head"], ["config"]):
        result = run_cli(*args, cwd=project)
        assert result.returncode == 0, (args, result.stderr)
    assert "vcs:\n  type: git\n  url: .." in (project / ".perun" / "local.yml").read_text()


def test_its_default_svs_vcs_type_loads_and_is_refused_with_a_reason(original_repo, original_shared):
    local = original_repo / ".perun" / "local.yml"
    local.write_text(local.read_text().replace("type: git", "type: svs", 1))
    assert run_cli("config", "get", "vcs.type", cwd=original_repo).returncode == 0
    status = run_cli("status", cwd=original_repo)
    assert status.returncode == 1
    assert status.stderr.startswith("error: ") and "'svs'" in status.stderr and "Traceback" not in status.stderr
