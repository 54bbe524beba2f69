"""Price book: validation, add/list/remove, CSV round trip, atomic import, crash safety, migrations."""

import datetime as dt
import os
import signal
import subprocess
import sys
import textwrap

import pytest
from sqlalchemy import text

from kashu import pricebook, store
from kashu.errors import KashuError

TODAY = dt.date(2026, 11, 30)
HDR = ",".join(pricebook.COLUMNS) + "\n"
GOOD = (HDR
        + "VendorA,H800,512,monthly,11.5,CNY,card-hour,Daxing,local-dedicated,network,2026-11-01,2027-03-01,test\n"
        + 'VendorB,H800,256,spot,9.0,CNY,card-hour,Zhangjiakou,remote-cloud,"network,storage",2026-11-10,2027-01-31,"a, b"\n'
        + "VendorC,H20,128,monthly,4.2,USD,card-hour,Yizhuang,local-dedicated,,2026-11-12,,\n"
        + "VendorD,910B,64,monthly,40000,CNY,node-month,Shunyi,bare-metal,,2026-11-12,2027-06-30,node price\n")


def row(**over):
    base = dict(vendor="V", gpu="H800", cards="64", mode="monthly", price="12", currency="CNY", unit="card-hour",
                site="Daxing", deployment="local-dedicated", includes="", quoted_on="2026-11-01",
                valid_until="2027-03-01", notes="")
    base.update(over)
    return base


def test_make_quote_normalises_and_converts():
    q = pricebook.make_quote(row(gpu="h800 sxm", price="12.50", currency="usd"), TODAY)
    assert q.gpu == "H800-SXM" and q.price == "12.5" and q.currency == "USD"
    assert q.cny_per_card_hour == pytest.approx(12.5 * 7.10)
    n = pricebook.make_quote(row(gpu="910B", price="40000", unit="node-month"), TODAY)
    assert n.price == "40000"  # not 4E+4
    assert n.cny_per_card_hour == pytest.approx(40000 / 8 / 720)


@pytest.mark.parametrize("over, word", [
    (dict(price="-3"), "negative"), (dict(price="0"), "zero"), (dict(price="abc"), "not a number"),
    (dict(currency="EUR"), "unknown currency"), (dict(valid_until="2026-01-01", quoted_on="2025-12-01"), "expired"),
    (dict(mode="hourlyish"), "mode"), (dict(unit="rack-year"), "unit"), (dict(deployment="moon"), "deployment"),
    (dict(gpu="NOPE-9000"), "unknown GPU"), (dict(cards="2.5"), "whole number"), (dict(cards="0"), "whole number"),
    (dict(quoted_on="1/11/2026"), "ISO date"), (dict(vendor=""), "vendor"),
    (dict(valid_until="2026-10-01"), "before quoted_on"),
])
def test_bad_quotes_are_rejected(over, word):
    with pytest.raises(KashuError) as e:
        pricebook.make_quote(row(**over), TODAY)
    assert word in e.value.message
    assert e.value.zh


def test_add_list_remove(tmp_path):
    eng = pricebook.open_book(str(tmp_path / "b.db"))
    assert pricebook.add(eng, pricebook.parse_csv(GOOD, TODAY)) == 4
    qs = pricebook.list_quotes(eng)
    assert [q.vendor for q in qs] == ["VendorA", "VendorB", "VendorC", "VendorD"]
    assert [q.vendor for q in pricebook.list_quotes(eng, "H20")] == ["VendorC"]
    with pytest.raises(KashuError):
        pricebook.remove(eng, [qs[0].id, 999])
    assert len(pricebook.list_quotes(eng)) == 4  # all or nothing
    pricebook.remove(eng, [qs[0].id])
    assert [q.vendor for q in pricebook.list_quotes(eng)] == ["VendorB", "VendorC", "VendorD"]


def test_round_trip_is_byte_identical(tmp_path):
    e1 = pricebook.open_book(str(tmp_path / "1.db"))
    pricebook.import_csv(e1, GOOD, TODAY)
    out1 = pricebook.export_csv(e1)
    e2 = pricebook.open_book(str(tmp_path / "2.db"))
    pricebook.import_csv(e2, out1, TODAY)
    out2 = pricebook.export_csv(e2)
    assert out1 == out2
    assert out1.splitlines()[0] == ",".join(pricebook.COLUMNS)
    assert '"network,storage"' in out1


@pytest.mark.parametrize("bad_row", [
    "VendorE,H800,64,monthly,-3,CNY,card-hour,Daxing,local-dedicated,,2026-11-01,2027-03-01,neg",
    "VendorE,H800,64,monthly,3,EUR,card-hour,Daxing,local-dedicated,,2026-11-01,2027-03-01,eur",
    "VendorE,H800,64,monthly,3,CNY,card-hour,Daxing,local-dedicated,,2025-11-01,2026-03-01,expired",
    "VendorE,H800,64,monthly,3,CNY",
])
def test_import_with_a_bad_row_changes_nothing(tmp_path, bad_row):
    eng = pricebook.open_book(str(tmp_path / "b.db"))
    pricebook.import_csv(eng, GOOD, TODAY)
    before = pricebook.export_csv(eng)
    content = HDR + "VendorOK,H800,64,monthly,12,CNY,card-hour,Daxing,local-dedicated,,2026-11-01,2027-03-01,ok\n" + bad_row + "\n"
    with pytest.raises(KashuError) as e:
        pricebook.import_csv(eng, content, TODAY)
    assert "row 3" in e.value.message
    assert pricebook.export_csv(eng) == before


def test_bad_header_rejected(tmp_path):
    eng = pricebook.open_book(str(tmp_path / "b.db"))
    with pytest.raises(KashuError, match="header"):
        pricebook.import_csv(eng, "vendor,gpu\nA,H800\n", TODAY)
    with pytest.raises(KashuError, match="empty"):
        pricebook.import_csv(eng, "", TODAY)


def test_failure_inside_the_transaction_rolls_back(tmp_path):
    eng = pricebook.open_book(str(tmp_path / "b.db"))
    pricebook.import_csv(eng, GOOD, TODAY)
    qs = pricebook.parse_csv(GOOD, TODAY)

    def boom(i):
        if i == 3:
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        pricebook.add(eng, qs, on_row=boom)
    assert len(pricebook.list_quotes(eng)) == 4


CHILD = textwrap.dedent("""
    import sys, time, datetime as dt
    from kashu import pricebook
    eng = pricebook.open_book(sys.argv[1])
    content = open(sys.argv[2], encoding="utf-8").read()
    def on_row(i):
        if i == 150:
            print("MID-IMPORT", flush=True)
            time.sleep(60)
    pricebook.import_csv(eng, content, dt.date(2026, 11, 30), on_row=on_row)
    print("DONE", flush=True)
""")


def test_sigkill_mid_import_leaves_the_book_intact(tmp_path):
    db = str(tmp_path / "crash.db")
    eng = pricebook.open_book(db)
    pricebook.import_csv(eng, GOOD, TODAY)
    before = pricebook.export_csv(eng)
    eng.dispose()
    big = tmp_path / "big.csv"
    big.write_text(HDR + "".join(
        f"Bulk{i},H800,64,monthly,{10 + i % 7},CNY,card-hour,Daxing,local-dedicated,,2026-11-01,2027-03-01,n{i}\n"
        for i in range(300)), encoding="utf-8")
    script = tmp_path / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, str(script), db, str(big)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ})
    line = proc.stdout.readline()
    assert line.strip() == "MID-IMPORT"
    # the writer holds the write lock with 150 rows written but not committed: kill it there
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    eng2 = pricebook.open_book(db)
    assert pricebook.export_csv(eng2) == before
    with eng2.connect() as c:
        assert c.execute(text("PRAGMA integrity_check")).scalar() == "ok"
        c.rollback()
    # and the book still takes writes
    pricebook.import_csv(eng2, HDR + "After,H800,8,daily,20,CNY,card-hour,,remote-cloud,,2026-11-01,,\n", TODAY)
    assert len(pricebook.list_quotes(eng2)) == 5


def test_migrations_tolerate_foreign_tables_and_register(tmp_path):
    db = str(tmp_path / "shared.db")
    eng = store.make_engine(db)
    with eng.begin() as c:  # another module's table, created before any kashu migration ran
        c.exec_driver_sql("CREATE TABLE bench_results (id INTEGER PRIMARY KEY, step_time_s REAL)")
        c.exec_driver_sql("INSERT INTO bench_results (step_time_s) VALUES (1.25)")
    ran = store.migrate(eng, namespaces=("pricebook",))
    assert any("pricebook#1" in r for r in ran)
    assert store.migrate(eng, namespaces=("pricebook",)) == []  # idempotent

    @store.migration("testns", 1, "create things")
    def _t1(conn):
        conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS test_things (x INTEGER)")

    @store.migration("testns", 2, "add column")
    def _t2(conn):
        conn.exec_driver_sql("ALTER TABLE test_things ADD COLUMN y INTEGER")

    ran = store.migrate(eng, namespaces=("testns",))
    assert ran == ["testns#1 create things", "testns#2 add column"]
    assert ("testns", 2) in store.applied(eng)
    with eng.connect() as c:
        assert c.execute(text("SELECT step_time_s FROM bench_results")).scalar() == 1.25
        c.rollback()


def test_failed_migration_is_not_recorded(tmp_path):
    eng = store.make_engine(str(tmp_path / "m.db"))

    @store.migration("failns", 1, "half-done")
    def _f1(conn):
        conn.exec_driver_sql("CREATE TABLE half (x INTEGER)")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        store.migrate(eng, namespaces=("failns",))
    assert ("failns", 1) not in store.applied(eng)
    with eng.connect() as c:  # the DDL rolled back with it
        assert c.execute(text("SELECT count(*) FROM sqlite_master WHERE name='half'")).scalar() == 0
        c.rollback()
    store._REGISTRY.pop(("failns", 1))
