"""Our layouts: documented <-> compact round trips keep every value; versions; convert; show raw -f."""

from __future__ import annotations

import json
import math

import pytest
from conftest import run_cli, write_pending
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from perun_core.errors import UnsupportedFormatVersion
from perun_core.profile.codec import (COLUMNAR_VERSION, from_json_bytes, iter_layout, load_profile_from_file,
                                      store_profile_at)
from perun_core.profile.model import Profile

from .conftest import PROFILES

keys = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.text(st.characters(blacklist_categories=("Cs",)), max_size=8),
)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(keys, inner, max_size=3)), max_leaves=6)
# resources: a few keys shared by many rows (typed columns), some rows lacking some keys
resource = st.dictionaries(st.sampled_from(["amount", "uid", "type", "structure-unit-size", "trace", "x y"]),
                           values, max_size=6)
region = st.fixed_dictionaries({"time": scalars, "resources": st.lists(resource, max_size=25),
                                "models": st.lists(st.dictionaries(keys, values, max_size=3), max_size=2)})
documents = st.fixed_dictionaries(
    {"header": st.fixed_dictionaries({"type": st.sampled_from(["time", "memory", "mixed"]), "cmd": st.text(max_size=5),
                                      "units": st.dictionaries(keys, st.text(max_size=3), max_size=2)}),
     "collector_info": st.fixed_dictionaries({"name": st.text(max_size=5),
                                              "params": st.dictionaries(keys, values, max_size=3)}),
     "postprocessors": st.lists(st.fixed_dictionaries({"name": st.text(max_size=5)}), max_size=2),
     "snapshots": st.lists(region, max_size=3)},
    optional={"origin": st.text("0123456789abcdef", min_size=40, max_size=40), "global": region,
              "extension": values},
)


def same(left, right) -> bool:
    """Equal with types: 1, 1.0 and True differ; -0.0 and 0.0 differ (the order of keys in an object is no value:
    the compact layout gives a resource's keys in the order of its columns)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return set(left) == set(right) and all(same(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(map(same, left, right))
    if isinstance(left, float):
        return math.copysign(1, left) == math.copysign(1, right) and left == right
    return left == right


def canonical(document: dict) -> dict:
    """The document as the model writes it back (sections in the model's order)."""
    return Profile.from_dict(json.loads(json.dumps(document))).to_dict()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_documented_to_compact_and_back_keeps_every_value(document):
    profile = Profile.from_dict(json.loads(json.dumps(document)))
    compact = b"".join(iter_layout(profile, "compact"))
    back = from_json_bytes(compact)
    assert back.layout == "columnar"
    assert same(back.to_dict(), canonical(document))
    documented = b"".join(iter_layout(back, "documented"))
    assert same(json.loads(documented), canonical(document))


# what the profile validation lets into a file: every resource with a finite amount and a uid
text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)
valid_resource = st.fixed_dictionaries(
    {"amount": st.one_of(st.integers(-(2**60), 2**60), st.floats(allow_nan=False, allow_infinity=False)), "uid": text},
    optional={"type": st.sampled_from(["time", "memory"]), "structure-unit-size": st.integers(0, 10**6),
              "x y": st.one_of(st.integers(), text)})
# a model record names its kind (``model``) and, when it has one, a text uid; other keys are free
valid_model = st.dictionaries(keys, values, max_size=3).map(
    lambda record: {**{k: v for k, v in record.items() if k not in ("model", "uid")}, "model": "linear"})
valid_region = st.fixed_dictionaries({"time": st.one_of(st.integers(0, 10**6), text),
                                      "resources": st.lists(valid_resource, max_size=25),
                                      "models": st.lists(valid_model, max_size=2)})
valid_documents = st.fixed_dictionaries(
    {"header": st.fixed_dictionaries({"type": st.sampled_from(["time", "memory", "mixed"]), "cmd": st.text(max_size=5),
                                      "units": st.dictionaries(keys, st.text(max_size=3), max_size=2)}),
     "collector_info": st.fixed_dictionaries({"name": st.text(max_size=5),
                                              "params": st.dictionaries(keys, values, max_size=3)}),
     "postprocessors": st.lists(st.fixed_dictionaries({"name": st.text(max_size=5)}), max_size=2),
     "global": valid_region,
     "snapshots": st.lists(valid_region, max_size=3)},
    optional={"origin": st.text("0123456789abcdef", min_size=40, max_size=40)})


@settings(max_examples=40, deadline=None)
@given(valid_documents)
def test_files_round_trip_through_both_layouts(tmp_path_factory, document):
    directory = tmp_path_factory.mktemp("rt")
    profile = Profile.from_dict(json.loads(json.dumps(document)))
    store_profile_at(profile, directory / "c.perf", layout="compact")
    store_profile_at(load_profile_from_file(directory / "c.perf"), directory / "d.perf", layout="documented")
    assert same(json.loads((directory / "d.perf").read_bytes()), canonical(document))


@pytest.mark.parametrize("name", ["complexity-regression-analysis-full.perf", "memory-sorter.perf",
                                  "kperf-python-fib.perf", "synthetic-snapshots-memory.perf"])
def test_original_profiles_convert_without_loss(tmp_path, name):
    original = load_profile_from_file(PROFILES / name)
    store_profile_at(original, tmp_path / "c.perf", layout="compact")
    again = load_profile_from_file(tmp_path / "c.perf")
    assert same(again.to_dict(), original.to_dict())


def test_a_version_1_columnar_file_is_upgraded(tmp_path):
    profile = load_profile_from_file(PROFILES / "time-sorter.perf")
    doc = json.loads(b"".join(iter_layout(profile, "compact")))
    assert doc["perun-columnar"] == COLUMNAR_VERSION == 3 and doc["origin"] == profile.origin
    del doc["origin"]
    doc["perun-columnar"] = 1
    old = from_json_bytes(json.dumps(doc).encode())
    assert old.origin is None and old.resource_count() == profile.resource_count()
    doc["perun-columnar"] = 4
    with pytest.raises(UnsupportedFormatVersion):
        from_json_bytes(json.dumps(doc).encode())


def test_one_upgrade_mechanism_serves_profiles_indexes_and_change_records():
    import perun_core.profile.codec  # noqa: F401
    import perun_core.storage.changes  # noqa: F401
    import perun_core.storage.index  # noqa: F401
    from perun_core.versions import registered_formats

    formats = registered_formats()
    for name in ("columnar profile layout", "index", "change record"):
        assert formats[name].steps and set(formats[name].steps) == set(range(2, formats[name].newest + 1))


def test_convert_rewrites_in_either_layout(tmp_path):
    source = tmp_path / "p.perf"
    source.write_bytes((PROFILES / "complexity-cplx.perf").read_bytes())
    compact = run_cli("convert", str(source), cwd=tmp_path)
    assert compact.returncode == 0, compact.stderr
    assert "original-0.28 -> compact, 40 resources" in compact.stdout
    assert source.read_bytes().startswith(b'{"perun-columnar":')
    documented = run_cli("convert", str(source), "--layout", "documented", "-o", str(tmp_path / "d.json"), cwd=tmp_path)
    assert documented.returncode == 0, documented.stderr
    assert len(json.loads((tmp_path / "d.json").read_text())["global"]["resources"]) == 40
    bad = run_cli("convert", str(tmp_path / "missing.perf"), cwd=tmp_path)
    assert bad.returncode == 1 and bad.stderr.startswith("error: ")
    wrong = run_cli("convert", str(source), "--layout", "xml", cwd=tmp_path)
    assert wrong.returncode == 2


def test_pending_profiles_are_compact_and_show_raw_prints_documented(perun_repo):
    root, shas = perun_repo
    from conftest import time_profile

    write_pending(root, "p.perf", time_profile(shas[-1]))
    done = run_cli("postprocessby", "0@p", "normalizer", cwd=root)
    assert done.returncode == 0, done.stderr
    written = [p for p in (root / ".perun" / "jobs").iterdir() if p.name not in ("p.perf",) and not p.name.startswith(".")]
    assert len(written) == 1 and written[0].read_bytes().startswith(b'{"perun-columnar":')
    assert load_profile_from_file(written[0]).origin == shas[-1]
    raw = run_cli("show", str(written[0]), "raw", cwd=root)
    assert raw.returncode == 0 and json.loads(raw.stdout)["origin"] == shas[-1]
    for layout, start in (("documented", b"{\n"), ("compact", b'{"perun-columnar":')):
        out = root / f"{layout}.out"
        made = run_cli("show", str(written[0]), "raw", "-f", str(out), "--layout", layout, cwd=root)
        assert made.returncode == 0 and out.read_bytes().startswith(start)
    assert run_cli("show", "0@p", "raw", "--layout", "compact", cwd=root).returncode == 2
