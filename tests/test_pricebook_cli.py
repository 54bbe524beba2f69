"""`kashu quotes` and the plan's cost.source, through the CLI entry point (in process)."""

import io
import json

import pytest

from kashu.cli import main

HDR = "vendor,gpu,cards,mode,price,currency,unit,site,deployment,includes,quoted_on,valid_until,notes\n"
CSV = (HDR
       + "TestVendorA,H800,512,monthly,11.5,CNY,card-hour,Daxing,local-dedicated,network,2026-11-01,2099-03-01,test\n"
       + "TestVendorB,H800,256,spot,9.0,CNY,card-hour,Zhangjiakou,remote-cloud,,2026-11-10,2099-01-31,test\n")


def run(capsys, *args):
    try:
        main(list(args))
        code = 0
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def test_quotes_cli_round_trip(tmp_path, capsys, monkeypatch):
    db = str(tmp_path / "q.db")
    f = tmp_path / "q.csv"
    f.write_text(CSV, encoding="utf-8")
    assert run(capsys, "quotes", "import", str(f), "--db", db)[0] == 0
    code, out, _ = run(capsys, "quotes", "list", "--json", "--db", db)
    assert code == 0
    rows = json.loads(out)["quotes"]
    assert [r["vendor"] for r in rows] == ["TestVendorA", "TestVendorB"]
    code, out, _ = run(capsys, "quotes", "export", "-", "--db", db)
    assert out == CSV.replace("H800,", "H800-SXM,").replace(",9.0,", ",9,")  # canonical card name, normalised price
    # stdin import into a second book, then byte-identical export
    db2 = str(tmp_path / "q2.db")
    monkeypatch.setattr("sys.stdin", io.StringIO(out))
    assert run(capsys, "quotes", "import", "-", "--db", db2)[0] == 0
    assert run(capsys, "quotes", "export", "-", "--db", db2)[1] == out


def test_quotes_add_remove_and_errors(tmp_path, capsys):
    db = str(tmp_path / "q.db")
    code, out, _ = run(capsys, "quotes", "add", "--vendor", "V", "--gpu", "H20", "--cards", "64", "--mode", "monthly",
                       "--price", "4.2", "--site", "Yizhuang", "--deployment", "local-dedicated",
                       "--quoted-on", "2026-11-01", "--valid-until", "2099-01-01", "--db", db, "--json")
    assert code == 0 and json.loads(out)["gpu"] == "H20"
    for bad in (["--price", "-1"], ["--price", "5", "--currency", "EUR"], ["--price", "5", "--valid-until", "2020-01-01",
                                                                          "--quoted-on", "2019-01-01"]):
        code, out, err = run(capsys, "quotes", "add", "--vendor", "V", "--gpu", "H20", "--cards", "8", "--mode", "daily",
                             *bad, "--db", db)
        assert code == 2 and "error" in err and "Traceback" not in err
    assert len(json.loads(run(capsys, "quotes", "list", "--json", "--db", db)[1])["quotes"]) == 1
    assert run(capsys, "quotes", "remove", "42", "--db", db)[0] == 2
    assert run(capsys, "quotes", "remove", "1", "--db", db)[0] == 0
    assert json.loads(run(capsys, "quotes", "list", "--json", "--db", db)[1])["quotes"] == []
    code, _, err = run(capsys, "quotes", "import", str(tmp_path / "missing.csv"), "--db", db)
    assert code == 2 and "no such file" in err


def test_plan_uses_the_cheapest_valid_quote(tmp_path, capsys):
    db = str(tmp_path / "q.db")
    f = tmp_path / "q.csv"
    f.write_text(CSV, encoding="utf-8")
    run(capsys, "quotes", "import", str(f), "--db", db)
    args = ["plan", "--params", "7B", "--tokens", "1T", "--gpu", "H800", "--days", "30", "--json"]
    p = json.loads(run(capsys, *args, "--db", db)[1])
    assert p["cost"]["source"] == "quote: TestVendorB 2026-11-10"
    assert p["cost"]["price_cny_per_card_hour"] == 9.0
    # the formal-training stage excludes preemptible spot → the monthly quote
    p = json.loads(run(capsys, *args, "--stage", "train", "--db", db)[1])
    assert p["cost"]["source"] == "quote: TestVendorA 2026-11-01"
    assert p["cost"]["total_cny"] == pytest.approx(p["cost"]["cards"] * 720 * 11.5)
    # too few cards in every quote → reference
    p = json.loads(run(capsys, "plan", "--params", "7B", "--tokens", "1T", "--gpu", "H800", "--gpus", "1024", "--json",
                       "--db", db)[1])
    assert p["cost"]["source"].startswith("reference")
    # no book at all → reference, and no file is created
    nobook = tmp_path / "none.db"
    p = json.loads(run(capsys, *args, "--db", str(nobook))[1])
    assert p["cost"]["source"].startswith("reference") and not nobook.exists()


def test_data_must_stay_local_filters_quotes(tmp_path, capsys):
    db = str(tmp_path / "q.db")
    f = tmp_path / "q.csv"
    f.write_text(CSV, encoding="utf-8")
    run(capsys, "quotes", "import", str(f), "--db", db)
    p = json.loads(run(capsys, "plan", "--params", "7B", "--tokens", "1T", "--gpu", "H800", "--days", "30", "--json",
                       "--data-must-stay-local", "--db", db)[1])
    assert p["cost"]["source"] == "quote: TestVendorA 2026-11-01"  # Zhangjiakou remote cloud is out of Beijing
    assert p["site"]["deployment"] == "local-dedicated"
    assert p["site"]["training_site"]["in_beijing"] and p["site"]["inference_site"]["in_beijing"]
    assert p["inputs"]["data_must_stay_local"] is True
