"""Scenarios: compare combinations, the two-phase plan, the sweep's Pareto front and recommendation."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from kashu import scenarios
from kashu.cli import main


def test_compare_combinations():
    res = scenarios.compare({"params": "7B", "tokens": "1T", "gpu": "H800,H20,910B", "gpus": "64,256"})
    assert len(res["scenarios"]) == 6
    assert {(s["gpu"]["name"], s["gpus_recommended"]) for s in res["scenarios"]} == {
        (g, n) for g in ("H800-SXM", "H20", "Ascend 910B") for n in (64, 256)}
    for s in res["scenarios"]:
        assert s["risk"]["days_p50"] <= s["risk"]["days_p90"]
    tp = res["two_phase"]
    assert tp["phase1"]["gpus"] == 64 and tp["phase2"]["gpus"] == 256
    assert tp["total_cost_cny"] == tp["phase1"]["cost_cny"] + tp["phase2"]["cost_cny"]
    assert tp["total_days"] == tp["phase1"]["days"] + tp["phase2"]["days"]


def test_compare_local_vs_remote():
    res = scenarios.compare({"params": "13B", "tokens": "1T", "gpu": "H800", "days": "30", "data_must_stay_local": "yes,no",
                             "stage": "explore"})
    deps = [s["site"]["deployment"] for s in res["scenarios"]]
    assert deps == ["local-dedicated", "remote-cloud"]


def test_compare_cli_json(capsys):
    try:
        main(["compare", "--params", "7B", "--tokens", "1T", "--gpu", "H800", "--gpus", "64,256", "--json"])
    except SystemExit as e:
        assert e.code in (0, None)
    d = json.loads(capsys.readouterr().out)
    assert len(d["scenarios"]) == 2
    try:
        main(["compare", "--params", "7B", "--tokens", "1T", "--gpus", "64,,256"])
    except SystemExit as e:
        assert e.code == 2


def dominated(a, pts):
    return any(b["days"] <= a["days"] and b["cost_cny"] <= a["cost_cny"] and (b["days"] < a["days"] or b["cost_cny"] < a["cost_cny"])
               for b in pts)


def test_sweep_70b_pareto_front_is_non_dominated():
    res = scenarios.sweep({"params": "70B", "tokens": "1.4T", "gpu": "H800"})
    pts = res["points"]
    assert len(pts) >= 8
    front = [p for p in pts if p["pareto"]]
    assert front
    for a in front:
        assert not dominated(a, pts)
    for a in pts:
        if not a["pareto"]:
            assert dominated(a, pts)
        assert a["days_p10"] <= a["days_p50"] <= a["days_p90"]
        assert a["cost_p50_cny"] <= a["cost_p90_cny"]
        assert a["gpus"] * 80e9 >= 16 * 70e9  # the training state fits
    rec = [p for p in pts if p["recommended"]]
    assert len(rec) == 1 and rec[0]["pareto"]


def test_sweep_with_deadline_recommends_the_cheapest_that_meets_it():
    res = scenarios.sweep({"params": "70B", "tokens": "1.4T", "gpu": "H800", "days": "60"})
    rec = next(p for p in res["points"] if p["recommended"])
    assert rec["days_p90"] <= 60
    ok = [p for p in res["points"] if p["pareto"] and p["days_p90"] <= 60]
    assert rec["cost_cny"] == min(p["cost_cny"] for p in ok)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.1, 1e3), st.floats(1, 1e8)), min_size=1, max_size=30))
def test_pareto_flags_property(pts):
    flags = scenarios.pareto_flags(pts)
    dicts = [{"days": d, "cost_cny": c} for d, c in pts]
    for f, p in zip(flags, dicts, strict=True):
        assert f == (not dominated(p, [x for x in dicts if x is not p]))
    assert any(flags)
    points = [{**p, "pareto": f} for p, f in zip(dicts, flags, strict=True)]
    i = scenarios.recommend(points)
    assert i is not None and points[i]["pareto"]
