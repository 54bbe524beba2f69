"""Sites and data residency: the catalog, the article's decision table, the inference/DR pair."""

import json

from kashu import sites
from kashu.cli import main


def test_catalog_has_the_article_sites_and_remote_provinces():
    names = {s.key for s in sites.catalog()}
    assert {"beijing-city", "daxing", "yizhuang", "shunyi", "huailai", "zhangjiakou"} <= names
    assert {"ulanqab", "guizhou", "ningxia"} <= names
    for s in sites.catalog():
        assert s.rtt_ms > 0 and s.distance_km >= 0 and s.availability in ("scarce", "limited", "good")
    assert sites.find("大兴").key == "daxing" and sites.find("Zhangbei").key == "zhangjiakou"
    assert sites.find("nowhere") is None


def test_residency_rules():
    assert sites.residency_ok("Daxing", "local-dedicated")
    assert not sites.residency_ok("Zhangjiakou", "bare-metal")  # Hebei: the data leaves Beijing
    assert not sites.residency_ok("Yizhuang", "remote-cloud")
    assert not sites.residency_ok("unknown place", "local-dedicated")


def test_decision_table():
    d = sites.decide(True, "explore", "hundreds")
    assert d["deployment"] == "local-dedicated" and d["training_site"]["in_beijing"]
    assert d["inference_site"]["in_beijing"] and d["inference_site"]["key"] != d["training_site"]["key"]
    assert "双活" in d["pair_advice_zh"]
    assert len(d["table"]) == 4 and {r["dimension"] for r in d["table"]} == {"compliance", "latency", "cost", "stage"}
    e = sites.decide(False, "explore", "hundreds")
    assert e["deployment"] == "remote-cloud" and not e["training_site"]["in_beijing"]
    t = sites.decide(False, "train", "hundreds")
    assert t["deployment"] == "local-dedicated"
    assert t["training_site"]["availability"] != "scarce"


def test_plan_cli_data_must_stay_local(capsys):
    try:
        main(["plan", "--params", "13B", "--tokens", "1T", "--gpu", "H800", "--days", "30", "--data-must-stay-local",
              "--stage", "train", "--json"])
    except SystemExit as e:
        assert e.code in (0, None)
    p = json.loads(capsys.readouterr().out)
    assert p["site"]["deployment"] == "local-dedicated"
    assert p["inputs"]["stage"] == "train"
    assert any(a["rule"] == "site.pair" for a in p["advice"])
    try:
        main(["plan", "--params", "13B", "--tokens", "1T", "--gpu", "H800", "--days", "30", "--stage", "prod"])
    except SystemExit as e:
        assert e.code == 2
    assert "stage" in capsys.readouterr().err
