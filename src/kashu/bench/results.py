"""Benchmark results: one JSON document per run, kept in its own table of the kashu store.

The store is kashu.paths.db_url() (--db, $KASHU_DB, else the user data dir; SQLite by default,
any SQLAlchemy URL). Other parts of kashu keep their own tables in the same database (the price
book's quotes): this module creates only `bench_runs`, idempotently, and never touches the rest.
A run is written in one transaction, after it succeeded: a failed run leaves nothing behind.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import cache

from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, Text, create_engine, select

from ..errors import KashuError
from ..paths import db_url

metadata = MetaData()  # ours alone: create_all creates only bench_runs

bench_runs = Table(
    "bench_runs", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("kind", String(16), nullable=False, index=True),  # step | comm | scale
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("device", String(16), nullable=False),  # cuda | cpu
    Column("gpu", String(64), nullable=True),  # catalog name of the card that ran; null for CPU or unknown
    Column("device_name", String(128), nullable=True),
    Column("summary", String(256), nullable=True),
    Column("result_json", Text, nullable=False),
)

KINDS = ("step", "comm", "scale")


@cache
def _engine(url: str):
    eng = create_engine(url, future=True)
    metadata.create_all(eng)  # idempotent; leaves other tables alone
    return eng


def engine(db: str | None = None):
    url = db_url(db)
    try:
        return _engine(url)
    except Exception as e:
        raise KashuError(f"cannot open the kashu store {url}: {type(e).__name__}: {e}",
                         f"无法打开 kashu 存储 {url}：{type(e).__name__}", "db") from None


def summary_line(r: dict) -> str:
    k = r.get("kind")
    if k == "step":
        mfu = f", MFU {r['mfu']:.1%}" if r.get("mfu") is not None else ""
        return (f"{r.get('model', {}).get('name', '?')} {r.get('layers_run')}/{r.get('layers_full')} layers, "
                f"{r['step_time_s'] * 1e3:.1f} ms/step, {r['tokens_per_s']:,.0f} tok/s, {r['tflops']:.3g} TFLOPS{mfu}")
    if k == "comm":
        ar = r.get("summary", {}).get("all_reduce")
        bus = f", all-reduce busbw {ar['busbw_gbps_at_largest']:.3g} GB/s" if ar else ""
        return f"{r.get('world_size')} ranks ({r.get('backend')}){bus}"
    if k == "scale":
        return (f"{r.get('wrap')} to {r.get('max_cards')} cards: efficiency {r['efficiency']:.2f} "
                f"({'meets' if r.get('meets_bar') else 'below'} the {r.get('bar'):.2g} bar)")
    return ""


def save(result: dict, db: str | None = None) -> dict:
    """Store a finished run in one transaction; return it with its `id` and `created_at`."""
    if result.get("kind") not in KINDS:
        raise ValueError(f"unknown bench kind {result.get('kind')!r}")
    now = datetime.now(UTC)
    doc = {**result, "created_at": now.isoformat(timespec="seconds")}
    eng = engine(db)
    with eng.begin() as conn:
        res = conn.execute(bench_runs.insert().values(
            kind=doc["kind"], created_at=now, device=doc.get("device", "?"), gpu=doc.get("gpu"),
            device_name=(doc.get("device_name") or "")[:128], summary=summary_line(doc)[:256],
            result_json="{}"))
        rid = int(res.inserted_primary_key[0])
        doc = {"id": rid, **doc}
        conn.execute(bench_runs.update().where(bench_runs.c.id == rid).values(
            result_json=json.dumps(doc, ensure_ascii=False, default=str)))
    return doc


def _row_doc(row) -> dict:
    doc = json.loads(row.result_json)
    doc["id"] = row.id
    return doc


def get(ref: str | int, db: str | None = None, kind: str | None = None) -> dict:
    """One stored run by id, or `latest` (of `kind` when given)."""
    eng = engine(db)
    with eng.connect() as conn:
        if str(ref).strip().lower() == "latest":
            q = select(bench_runs).order_by(bench_runs.c.id.desc()).limit(1)
            if kind:
                q = q.where(bench_runs.c.kind == kind)
            row = conn.execute(q).first()
            if row is None:
                what = f"{kind} " if kind else ""
                raise KashuError(f"no {what}benchmark stored yet in {eng.url!r}; run `kashu bench step` first",
                                 f"存储中还没有{what}基准测试结果；请先运行 `kashu bench step`", "from_bench")
            return _row_doc(row)
        try:
            rid = int(str(ref).strip())
        except ValueError:
            raise KashuError(f"benchmark id {ref!r} is not a number or `latest`",
                             f"基准测试编号 {ref!r} 应为数字或 latest", "from_bench") from None
        row = conn.execute(select(bench_runs).where(bench_runs.c.id == rid)).first()
    if row is None:
        raise KashuError(f"no benchmark with id {rid} in the store (see `kashu bench list`)",
                         f"存储中没有编号为 {rid} 的基准测试（见 `kashu bench list`）", "from_bench")
    return _row_doc(row)


def list_runs(db: str | None = None, kind: str | None = None, limit: int = 100) -> list[dict]:
    """Newest first: id, kind, created_at, device, gpu, summary."""
    eng = engine(db)
    q = select(bench_runs.c.id, bench_runs.c.kind, bench_runs.c.created_at, bench_runs.c.device,
               bench_runs.c.gpu, bench_runs.c.device_name, bench_runs.c.summary).order_by(bench_runs.c.id.desc()).limit(limit)
    if kind:
        q = q.where(bench_runs.c.kind == kind)
    with eng.connect() as conn:
        rows = conn.execute(q).all()
    return [{"id": r.id, "kind": r.kind, "created_at": r.created_at.isoformat(timespec="seconds") if r.created_at else None,
             "device": r.device, "gpu": r.gpu, "device_name": r.device_name, "summary": r.summary} for r in rows]
