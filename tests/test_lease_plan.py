"""Lease plans: hand-computed costs, redundancy, quote vs reference, quarter-vs-year advice, subsidy."""

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kashu
from kashu import lease, pricebook
from kashu.cost import mode_factor
from kashu.errors import KashuError
from kashu.hardware import get_gpu

TODAY = dt.date(2026, 11, 30)
H800 = get_gpu("H800")


def q(**over):
    base = dict(vendor="V", gpu="H800", cards="512", mode="monthly", price="12", currency="CNY", unit="card-hour",
                site="Daxing", deployment="local-dedicated", quoted_on="2026-11-01", valid_until="2027-03-01")
    base.update(over)
    return pricebook.make_quote(base, TODAY)


def test_hand_computed_reference_lease():
    # 40 training cards × 1.2 = 48 (6 nodes); 20 days; monthly = 1 month = 720 h at ¥25 × 0.73
    lp = lease.lease_plan(H800, card_hours=19200, run_days=20, tokens=1e12, training_cards=40, redundancy=0.2, today=TODAY)
    assert lp["leased_cards"] == 48
    m = next(o for o in lp["options"] if o["option"] == "monthly")
    assert m["total_cny"] == pytest.approx(48 * 720 * 25 * 0.73)
    assert m["used_cny"] == pytest.approx(19200 * 25 * 0.73)
    assert m["idle_cny"] == pytest.approx(m["total_cny"] - m["used_cny"])
    assert m["cost_per_million_tokens_cny"] == pytest.approx(m["total_cny"] / 1e6)
    h = next(o for o in lp["options"] if o["option"] == "pay_as_you_go")
    assert h["total_cny"] == pytest.approx(48 * 480 * 25)
    quarter = next(o for o in lp["options"] if o["option"] == "quarter")
    assert quarter["lease_hours"] == 2184 and quarter["price_cny_per_card_hour"] == pytest.approx(25 * mode_factor("quarterly"))


def test_redundancy_is_configurable():
    a = lease.lease_plan(H800, 19200, 20, 1e12, 40, redundancy=0.0, today=TODAY)
    b = lease.lease_plan(H800, 19200, 20, 1e12, 40, redundancy=0.5, today=TODAY)
    assert a["leased_cards"] == 40 and b["leased_cards"] == 64


def test_cheapest_valid_quote_per_mode():
    quotes = [q(price="12"), q(price="11", vendor="Cheaper"), q(price="5", vendor="Expired", quoted_on="2026-01-01",
                                                                  valid_until="2026-12-01"),
              q(price="4", vendor="TooSmall", cards="16")]
    # Expired is valid until 2026-12-01: use a later day
    lp = lease.lease_plan(H800, 19200, 20, 1e12, 40, 0.2, quotes, today=dt.date(2026, 12, 15))
    m = next(o for o in lp["options"] if o["option"] == "monthly")
    assert m["source"] == "quote: Cheaper 2026-11-01"
    assert m["total_cny"] == pytest.approx(48 * 720 * 11)
    # other modes fall back to the reference
    assert next(o for o in lp["options"] if o["option"] == "quarter")["source"].startswith("reference")


def test_node_month_quote_price():
    nq = q(price="60000", unit="node-month")
    assert nq.cny_per_card_hour == pytest.approx(60000 / 8 / 720)


def test_quarter_over_year_advice_when_prices_fall():
    lp = lease.lease_plan(H800, 2e6, 200, 1e12, 400, 0.2, today=TODAY, price_trend_per_quarter=-0.05)
    assert any("lock a quarter, not a year" in a for a in lp["advice"])
    assert any("锁定一个季度" in a for a in lp["advice_zh"])
    steep = lease.lease_plan(H800, 2e6, 200, 1e12, 400, 0.2, today=TODAY, price_trend_per_quarter=-0.15)
    assert any("also cheaper outright" in a for a in steep["advice"])
    flat = lease.lease_plan(H800, 2e6, 200, 1e12, 400, 0.2, today=TODAY, price_trend_per_quarter=0.0)
    assert not any("lock a quarter" in a for a in flat["advice"])


@settings(max_examples=50, deadline=None)
@given(ch=st.floats(1, 1e7), days=st.floats(0.01, 1000), cards=st.floats(1, 5000), red=st.floats(0, 0.9))
def test_costs_never_negative(ch, days, cards, red):
    lp = lease.lease_plan(H800, ch, days, 1e12, cards, red, today=TODAY)
    for o in lp["options"]:
        assert o["total_cny"] > 0 and o["idle_cny"] >= 0 and o["used_cny"] >= 0
        assert o["lease_hours"] >= days * 24 - 1e-6


def test_subsidy_domestic_default_and_cap():
    p = kashu.plan(params="7B", tokens="1T", gpu="910B", days=30)
    s = p.extras["subsidy"]
    assert s["share"] == 0.30 and s["subsidy_cny"] == pytest.approx(0.30 * p.cost.total_cny)
    assert "policy, not physics" in s["assumption"]
    big = kashu.plan(params="70B", tokens="1.4T", gpu="910B", days=60)
    sb = big.extras["subsidy"]
    assert sb["capped"] and sb["subsidy_cny"] == pytest.approx(2_000_000)
    h = kashu.plan(params="7B", tokens="1T", gpu="H800", days=30)
    assert h.extras["subsidy"]["share"] == 0.0
    u = kashu.plan(params="7B", tokens="1T", gpu="H800", days=30, subsidy=0.1, voucher_cap=1e9)
    assert u.extras["subsidy"]["subsidy_cny"] == pytest.approx(0.1 * u.cost.total_cny)


def test_domestic_reserve():
    p = kashu.plan(params="7B", tokens="1T", gpu="H800", days=30, domestic_reserve=0.1)
    r = p.extras["subsidy"]["domestic_reserve"]
    assert r["gpu"] == "Ascend 910B" and r["nodes"] >= 1 and r["cards"] == 8 * r["nodes"]
    assert 0 < r["effective_total_cny"] < r["total_cny"]


def test_bad_renting_inputs():
    for kw in (dict(subsidy=1.5), dict(stage="prod"), dict(domestic_reserve=-0.1)):
        with pytest.raises(KashuError):
            kashu.plan(params="7B", tokens="1T", gpu="H800", days=30, **kw)
