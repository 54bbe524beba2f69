"""Risk: percentiles ordered, deadline probability, speed, plan JSON keys (property tests with hypothesis)."""

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kashu
from kashu import risk


def inputs(**over):
    d = dict(gpu_hours=1.0e6, training_cards=256, scaling=0.9, leased_cards=320, unit_hours=720,
             price_cny_per_card_hour=18.0, deadline_days=200.0)
    d.update(over)
    return risk.RiskInputs(**d)


def test_ten_thousand_samples_well_under_a_second():
    risk.summarise(inputs())
    t = time.perf_counter()
    r = risk.summarise(inputs())
    assert time.perf_counter() - t < 0.25
    assert r["samples"] == 10000


def test_deterministic_with_the_seed():
    assert risk.summarise(inputs()) == risk.summarise(inputs())


def test_hand_check_without_uncertainty():
    # a single failure rate of ~0 and the mode of every range: days ≈ card-hours / (cards × scaling × other) / 24
    s = risk.sample(inputs(), n=20000, failure_rate_per_1000_card_days=1e-9)
    days_at_mode = 1.0e6 / (256 * 0.9 * 0.97) / 24
    assert abs(float(sorted(s["days"])[10000]) / days_at_mode - 1) < 0.06


def test_p_miss_deadline_moves_with_the_deadline():
    base = risk.summarise(inputs())
    assert base["p_miss_deadline"] is not None
    tight = risk.summarise(inputs(deadline_days=base["days_p10"]))
    loose = risk.summarise(inputs(deadline_days=base["days_p90"]))
    assert tight["p_miss_deadline"] == pytest.approx(0.9, abs=0.01)
    assert loose["p_miss_deadline"] == pytest.approx(0.1, abs=0.01)
    assert risk.summarise(inputs(deadline_days=None))["p_miss_deadline"] is None


def test_more_failures_mean_more_days():
    lo = risk.summarise(inputs(), failure_rate_per_1000_card_days=0.3)
    hi = risk.summarise(inputs(), failure_rate_per_1000_card_days=3.0)
    assert hi["days_p50"] > lo["days_p50"]


@settings(max_examples=40, deadline=None)
@given(gh=st.floats(1e2, 1e8), cards=st.integers(1, 20000), price=st.floats(0.5, 100), unit=st.sampled_from([1, 24, 168, 720, 2184]))
def test_percentiles_ordered_and_cost_positive(gh, cards, price, unit):
    r = risk.summarise(inputs(gpu_hours=gh, training_cards=cards, leased_cards=cards, unit_hours=unit,
                              price_cny_per_card_hour=price), n=2000)
    assert 0 < r["days_p10"] <= r["days_p50"] <= r["days_p90"]
    assert 0 < r["cost_p10_cny"] <= r["cost_p50_cny"] <= r["cost_p90_cny"]
    assert 0 <= r["p_miss_deadline"] <= 1


def test_plan_json_has_the_risk_block():
    p = kashu.plan(params="7B", tokens="1T", gpu="H800", days=30).to_dict()
    r = p["risk"]
    for k in ("days_p10", "days_p50", "days_p90", "cost_p50_cny", "cost_p90_cny", "p_miss_deadline"):
        assert k in r
    assert r["days_p10"] <= r["days_p50"] <= r["days_p90"]
    assert r["cost_p50_cny"] <= r["cost_p90_cny"]
    assert all("source" in v for v in r["ranges"].values())
