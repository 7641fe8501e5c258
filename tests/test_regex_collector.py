"""The regex collector: resources from the numbers a program prints."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from runhelpers import run_env, documented  # noqa: F401 - autouse fixture

from conftest import run_cli
from perun_core import api
from perun_core.api import run as api_run
from perun_core.collect.regex import parse_number
from perun_core.errors import CollectionError, InvalidParameter
from perun_core.units import convert_params, get_collector

PY = sys.executable

BENCH = """\
    import sys
    print("warming up")
    for n, rate in enumerate([1200, 1350.5, 990], 1):
        print(f"round {n}: ops/s: {rate}")
        print(f"p{50 + 49 * (n % 2)} latency: {n * 3} ms (queue=q{n})", file=sys.stderr)
    print("done")
"""


def bench(root) -> str:
    (root / "bench.py").write_text(textwrap.dedent(BENCH))
    return "bench.py"


def collect(root, **params):
    result = api_run.collect("regex", [PY], [bench(root)], [], params, cwd=root)
    return documented(result.profiles[0].path)


def test_ops_per_second_lines_become_resources(perun_repo):
    root, shas = perun_repo
    profile = collect(root, patterns=[r"ops/s: (?P<amount>[0-9.]+)"], type="throughput", units="ops/s", repeat=2)
    assert profile["origin"] == shas[-1]
    assert profile["header"]["type"] == "throughput" and profile["header"]["units"] == {"throughput": "ops/s"}
    rows = profile["global"]["resources"]
    assert [(r["amount"], r["order"], r["run"]) for r in rows] == [
        (1200, 1, 1), (1350.5, 2, 1), (990, 3, 1), (1200, 1, 2), (1350.5, 2, 2), (990, 3, 2)]
    assert all(r["type"] == "throughput" and r["uid"] == PY and "subtype" not in r for r in rows)
    assert isinstance(rows[0]["amount"], int) and isinstance(rows[1]["amount"], float)
    assert profile["global"]["timestamp"] > 0


def test_named_groups_streams_and_per_pattern_configuration(perun_repo):
    root, _ = perun_repo
    profile = collect(root, uid="bench", patterns=[
        {"regex": r"round (?P<round>\d): ops/s: (?P<amount>[0-9.]+)", "type": "throughput", "units": "ops/s"},
        {"regex": r"p(?P<subtype>\d+) latency: (?P<amount>\d+) ms \(queue=(?P<queue>\w+)\)", "stream": "stderr",
         "type": "time", "units": "ms", "uid": "latency"},
    ])
    assert profile["header"]["type"] == "mixed"
    assert profile["header"]["units"] == {"throughput": "ops/s", "time": "ms"}
    rows = profile["global"]["resources"]
    throughput = [r for r in rows if r["type"] == "throughput"]
    assert [(r["amount"], r["round"], r["uid"]) for r in throughput] == [(1200, 1, "bench"), (1350.5, 2, "bench"),
                                                                          (990, 3, "bench")]
    latency = [r for r in rows if r["type"] == "time"]
    assert [(r["amount"], r["subtype"], r["queue"], r["uid"], r["order"]) for r in latency] == [
        (3, "99", "q1", "latency", 1), (6, "50", "q2", "latency", 2), (9, "99", "q3", "latency", 3)]


def test_units_per_subtype_when_one_type_has_several(perun_repo):
    root, _ = perun_repo
    profile = collect(root, type="time", patterns=[
        {"regex": r"latency: (?P<amount>\d+) ms", "stream": "stderr", "subtype": "latency", "units": "ms"},
        {"regex": r"ops/s: (?P<amount>[0-9.]+)", "subtype": "rate", "units": "ops/s"},
    ])
    assert profile["header"]["type"] == "time"
    assert profile["header"]["units"] == {"time(latency)": "ms", "time(rate)": "ops/s"}


@pytest.mark.parametrize("pattern, expected", [
    (r"ops/s: (?P<amount>[0-9.]+", "regex: parameter 'patterns' = 'ops/s: (?P<amount>[0-9.]+': expected a valid "
                                   "regular expression (missing ), unterminated subpattern at position 7)"),
    (r"ops/s: ([0-9.]+) (\w+)", "regex: parameter 'patterns' = 'ops/s: ([0-9.]+) (\\\\w+)': expected a named group "
                                "(?P<amount>...) capturing the number (the regex has 2 groups)"),
    ({"regex": "x(?P<amount>1)", "color": "red"}, "regex: parameter 'patterns' = 'x(?P<amount>1)': expected pattern "
                                                  "keys out of regex, stream, type, subtype, units, uid, amount; "
                                                  "'color' is not one"),
    ({"regex": "x(?P<amount>1)", "stream": "stdin"},
     "regex: parameter 'patterns' = 'x(?P<amount>1)': expected the pattern's 'stream' to be one of stdout, stderr, "
     "both, not 'stdin'"),
])
def test_bad_patterns_are_refused_before_anything_runs(pattern, expected):
    with pytest.raises(InvalidParameter) as info:
        convert_params("regex", get_collector("regex").params, {"patterns": [pattern]})
    assert str(info.value) == expected and "\n" not in str(info.value)


def test_pattern_forms():
    declared = get_collector("regex").params
    converted = convert_params("regex", declared, {"patterns": r"took (\d+) ms"})["patterns"]
    assert converted == [{"regex": r"took (\d+) ms", "amount": 1}]
    converted = convert_params("regex", declared, {"pattern": [{"pattern": "n=(?P<n>\\d+)", "amount": "n",
                                                                "units": "ops"}]})["patterns"]
    assert converted == [{"regex": "n=(?P<n>\\d+)", "units": "ops", "amount": "n"}]
    assert parse_number(" 12 ") == 12 and parse_number("-1.5e3") == -1500.0 and parse_number("1,000") is None


def test_a_pattern_that_never_matches_or_a_non_number_fails_the_job(perun_repo):
    root, _ = perun_repo
    with pytest.raises(CollectionError) as info:
        collect(root, patterns=[r"ops/s: (?P<amount>[0-9.]+)", r"errors: (?P<amount>\d+)"])
    assert info.value.message.endswith(
        "pattern 'errors: (?P<amount>\\d+)' never matched the program's stdout (5 lines)")
    allowed = collect(root, patterns=[r"ops/s: (?P<amount>[0-9.]+)", r"errors: (?P<amount>\d+)"],
                      allow_unmatched=True)
    assert len(allowed["global"]["resources"]) == 3
    with pytest.raises(CollectionError) as info:
        collect(root, patterns=[r"round (?P<amount>\w+:)"])
    assert info.value.message.endswith(
        "pattern 'round (?P<amount>\\w+:)': the amount group matched '1:' on line 2 of stdout, which is not a number")


def test_failing_command(perun_repo):
    root, _ = perun_repo
    (root / "fail.py").write_text("print('ops/s: 5')\nraise SystemExit(4)\n")
    with pytest.raises(CollectionError, match="the profiled command exited with status 4"):
        api_run.collect("regex", [PY], ["fail.py"], [], {"patterns": ["ops/s: (?P<amount>\\d+)"]}, cwd=root)
    result = api_run.collect("regex", [PY], ["fail.py"], [], {"patterns": ["ops/s: (?P<amount>\\d+)"],
                                                               "keep_failed": True}, cwd=root)
    rows = documented(result.profiles[0].path)["global"]["resources"]
    assert rows == [{"amount": 5, "type": "metric", "uid": PY, "order": 1, "run": 1, "exit_status": 4}]


def test_regex_in_a_job_matrix_and_on_the_command_line(perun_repo):
    root, _ = perun_repo
    bench(root)
    api.config_set("cmds", [PY], scope="local", cwd=root)
    api.config_set("args", ["bench.py"], scope="local", cwd=root)
    api.config_set("collectors", [{"name": "regex", "params": [
        {"patterns": [{"regex": "ops/s: (?P<amount>[0-9.]+)", "units": "ops/s", "type": "throughput"}]},
        {"repeat": 2}]}], scope="local", cwd=root)
    result = api_run.run_matrix(cwd=root)
    profile = documented(result.profiles[0].path)
    assert [r["amount"] for r in profile["global"]["resources"]] == [1200, 1350.5, 990] * 2
    for path in (root / ".perun/jobs").iterdir():
        path.unlink()
    ok = run_cli("collect", "regex", "-e", "ops/s: (?P<amount>[0-9.]+)", "--units", "ops/s", PY, "bench.py", cwd=root)
    assert ok.returncode == 0, ok.stderr
    (written,) = (root / ".perun/jobs").iterdir()
    assert documented(written)["header"]["units"] == {"metric": "ops/s"}
    bad = run_cli("collect", "regex", "-e", "ops/s: (?P<amount>[0-9.]+", PY, "bench.py", cwd=root)
    assert bad.returncode != 0
    assert bad.stderr.strip().splitlines() == [
        "error: regex: parameter 'patterns' = 'ops/s: (?P<amount>[0-9.]+': expected a valid regular expression "
        "(missing ), unterminated subpattern at position 7)"]
