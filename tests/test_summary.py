"""``api.summary``: statistics per type and subtype, each with its unit; seconds and bytes never averaged together."""

from __future__ import annotations

import pytest

from perun_core import api
from views.profiles import complexity_profile, time_profile


def test_a_time_profile_is_summarised_per_subtype_with_units():
    summary = api.summary(time_profile())
    amounts = {(f.type, f.subtype): f for f in summary.fields if f.key == "amount"}
    assert set(amounts) == {("time", "real"), ("time", "user"), ("time", "sys"), ("memory", "max_rss")}
    real = amounts[("time", "real")]
    assert (real.unit, real.count) == ("s", 4)
    assert real.mean == pytest.approx((0.51 + 0.54 + 0.59 + 0.66) / 4)
    assert real.total == pytest.approx(0.51 + 0.54 + 0.59 + 0.66)
    assert real.name == "amount · time real [s]"
    rss = amounts[("memory", "max_rss")]
    assert rss.unit == "B" and rss.minimum == 5_242_880 + 4096
    # no row mixes the kinds: every mean lies within its own rows' range
    assert all(f.minimum <= f.mean <= f.maximum for f in summary.fields)
    (order,) = [f for f in summary.fields if f.key == "order"]
    assert (order.kind, order.count, order.unit) == ("", 16, "")
    assert (summary.resources, summary.regions) == (16, 1)


def test_models_are_listed_with_their_coefficients():
    summary = api.summary(complexity_profile())
    assert summary.models and summary.models[0].coeffs.startswith("b0=")
    units = {f.unit for f in summary.fields if f.key == "amount"}
    assert units == {"us"}


def test_the_tui_details_use_the_core_summary(monkeypatch):
    from perun_tui.core import Core

    computed = object()
    monkeypatch.setattr(api, "summary", lambda profile: computed)
    assert Core.summary(None, object()) is computed


def test_summary_stays_the_function_after_its_module_is_imported():
    import perun_core.api.statistics  # noqa: F401 - a module named like the function would shadow it

    assert callable(api.summary)
