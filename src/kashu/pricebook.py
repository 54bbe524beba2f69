"""The price book: real vendor quotes, kept in the store (kashu.store), imported and exported as CSV.

A quote: vendor, card (resolved through kashu.hardware), cards available, rental mode, price and
currency (CNY or USD, converted at the dated rate in data/defaults.toml), unit (card-hour or
node-month), what it includes, site, deployment kind, the date quoted and the date it is valid until.

CSV columns (exactly, in this order)::

    vendor,gpu,cards,mode,price,currency,unit,site,deployment,includes,quoted_on,valid_until,notes

Every write is one transaction: an import with one bad row is rejected whole, naming the row, and the
book is unchanged. Export → import → export round-trips byte for byte (prices are kept as the decimal
text that was given, normalised; rows keep their order).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
import sys
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from sqlalchemy import Connection, Engine, text

from . import store
from .data import default
from .errors import KashuError
from .hardware import get_gpu

COLUMNS = ["vendor", "gpu", "cards", "mode", "price", "currency", "unit", "site", "deployment", "includes",
           "quoted_on", "valid_until", "notes"]
MODES = ("spot", "hourly", "daily", "weekly", "monthly", "quarterly", "yearly")
UNITS = ("card-hour", "node-month")
DEPLOYMENTS = ("local-dedicated", "remote-cloud", "bare-metal")
CURRENCIES = ("CNY", "USD")
_CURRENCY_ALIASES = {"CNY": "CNY", "RMB": "CNY", "¥": "CNY", "元": "CNY", "人民币": "CNY", "USD": "USD", "$": "USD",
                     "US$": "USD", "美元": "USD"}
# the lease unit a mode is billed in (kashu.cost.LEASE_UNITS_HOURS)
MODE_UNIT = {"spot": "hour", "hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month",
             "quarterly": "quarter", "yearly": "year"}
NODE_MONTH_HOURS = 720.0  # kashu.cost.LEASE_UNITS_HOURS["month"]
NAMESPACE = "pricebook"


@dataclass(frozen=True)
class Quote:
    vendor: str
    gpu: str  # canonical catalog name
    cards: int
    mode: str
    price: str  # normalised decimal text, as quoted
    currency: str
    unit: str
    site: str = ""
    deployment: str = "remote-cloud"
    includes: str = ""
    quoted_on: str = ""  # ISO date
    valid_until: str = ""  # ISO date, "" = open-ended
    notes: str = ""
    id: int | None = None

    @property
    def price_value(self) -> float:
        return float(self.price)

    def fx_rate(self) -> float:
        return 1.0 if self.currency == "CNY" else default("usd_cny")

    @property
    def cny_per_card_hour(self) -> float:
        p = self.price_value * self.fx_rate()
        if self.unit == "node-month":
            return p / get_gpu(self.gpu).gpus_per_node / NODE_MONTH_HOURS
        return p

    def valid_on(self, day: dt.date) -> bool:
        if self.valid_until and dt.date.fromisoformat(self.valid_until) < day:
            return False
        return not (self.quoted_on and dt.date.fromisoformat(self.quoted_on) > day)

    def label(self) -> str:
        return f"{self.vendor} {self.quoted_on}".strip()

    def to_row(self) -> dict[str, str]:
        d = asdict(self)
        return {c: str(d[c]) for c in COLUMNS}

    def to_dict(self) -> dict:
        d = asdict(self)
        d["cny_per_card_hour"] = self.cny_per_card_hour
        return d


# ---------------------------------------------------------------- validation (pure)

def _err(row: int | None, en: str, zh: str, field: str | None = None) -> KashuError:
    if row is not None:
        return KashuError(f"row {row}: {en}", f"第 {row} 行：{zh}", field)
    return KashuError(en, zh, field)


def _date(value: str, name: str, row: int | None, required: bool) -> str:
    v = (value or "").strip()
    if not v:
        if required:
            raise _err(row, f"{name} is required (YYYY-MM-DD)", f"{name} 不能为空（YYYY-MM-DD）", name)
        return ""
    try:
        return dt.date.fromisoformat(v).isoformat()
    except ValueError:
        raise _err(row, f"{name} {v!r} is not an ISO date (YYYY-MM-DD)", f"{name} {v!r} 不是 ISO 日期（YYYY-MM-DD）", name) from None


def normalise_price(value: str, row: int | None = None) -> str:
    v = str(value).strip().replace(",", "").replace("_", "")
    try:
        d = Decimal(v)
    except InvalidOperation:
        raise _err(row, f"price {value!r} is not a number", f"价格 {value!r} 不是数字", "price") from None
    if not d.is_finite():
        raise _err(row, f"price {value!r} is not a finite number", f"价格 {value!r} 不是有限数值", "price")
    if d < 0:
        raise _err(row, f"price {value!r} is negative", f"价格 {value!r} 为负数", "price")
    if d == 0:
        raise _err(row, f"price {value!r} is zero; a quote needs a price", f"价格 {value!r} 为零", "price")
    return format(d.normalize(), "f")


def make_quote(raw: dict[str, object], today: dt.date | None = None, row: int | None = None,
               allow_expired: bool = False) -> Quote:
    """Validate one quote given as text fields (a CSV row, CLI options or JSON); raise KashuError."""
    today = today or dt.date.today()

    def s(k: str) -> str:
        v = raw.get(k, "")
        return "" if v is None else str(v).strip()

    vendor = s("vendor")
    if not vendor:
        raise _err(row, "vendor is required", "供应商不能为空", "vendor")
    try:
        gpu = get_gpu(s("gpu")).name
    except KashuError as e:
        raise _err(row, e.message, e.zh, "gpu") from None
    c = s("cards")
    try:
        cards_f = float(c)
    except ValueError:
        raise _err(row, f"cards {c!r} is not a whole number", f"卡数 {c!r} 不是整数", "cards") from None
    if math.isnan(cards_f) or cards_f != int(cards_f) or cards_f < 1 or cards_f > 10_000_000:
        raise _err(row, f"cards {c!r} must be a whole number of cards, at least 1", f"卡数 {c!r} 应为不小于 1 的整数", "cards")
    mode = s("mode").lower()
    if mode not in MODES:
        raise _err(row, f"mode {s('mode')!r} is not one of {', '.join(MODES)}", f"租用方式 {s('mode')!r} 应为 {', '.join(MODES)} 之一", "mode")
    price = normalise_price(s("price"), row)
    cur_raw = s("currency") or "CNY"
    currency = _CURRENCY_ALIASES.get(cur_raw.upper(), _CURRENCY_ALIASES.get(cur_raw))
    if currency is None:
        raise _err(row, f"unknown currency {cur_raw!r}; kashu converts {', '.join(CURRENCIES)} (rate in data/defaults.toml)",
                   f"未知货币 {cur_raw!r}；支持 {', '.join(CURRENCIES)}", "currency")
    unit = s("unit").lower() or "card-hour"
    if unit not in UNITS:
        raise _err(row, f"unit {s('unit')!r} is not one of {', '.join(UNITS)}", f"计价单位 {s('unit')!r} 应为 {', '.join(UNITS)} 之一", "unit")
    deployment = s("deployment").lower() or "remote-cloud"
    if deployment not in DEPLOYMENTS:
        raise _err(row, f"deployment {s('deployment')!r} is not one of {', '.join(DEPLOYMENTS)}",
                   f"部署方式 {s('deployment')!r} 应为 {', '.join(DEPLOYMENTS)} 之一", "deployment")
    quoted_on = _date(s("quoted_on"), "quoted_on", row, required=True)
    valid_until = _date(s("valid_until"), "valid_until", row, required=False)
    if valid_until and valid_until < quoted_on:
        raise _err(row, f"valid_until {valid_until} is before quoted_on {quoted_on}",
                   f"有效期 {valid_until} 早于报价日期 {quoted_on}", "valid_until")
    if valid_until and not allow_expired and dt.date.fromisoformat(valid_until) < today:
        raise _err(row, f"the quote expired on {valid_until} (today is {today.isoformat()})",
                   f"报价已于 {valid_until} 过期（今天是 {today.isoformat()}）", "valid_until")
    for k in ("site", "includes", "notes", "vendor"):
        if "\n" in s(k) or "\r" in s(k):
            raise _err(row, f"{k} must be on one line", f"{k} 不能换行", k)
    return Quote(vendor=vendor, gpu=gpu, cards=int(cards_f), mode=mode, price=price, currency=currency, unit=unit,
                 site=s("site"), deployment=deployment, includes=s("includes"), quoted_on=quoted_on,
                 valid_until=valid_until, notes=s("notes"))


def parse_csv(content: str, today: dt.date | None = None) -> list[Quote]:
    """Parse and validate a whole CSV; the first bad row raises (naming the row: header = row 1)."""
    if content.startswith("\ufeff"):
        content = content[1:]
    reader = csv.reader(io.StringIO(content))
    try:
        header = next(reader)
    except StopIteration:
        raise KashuError("the CSV is empty; expected the header " + ",".join(COLUMNS),
                         "CSV 为空；应有表头 " + ",".join(COLUMNS), "file") from None
    header = [h.strip() for h in header]
    if header != COLUMNS:
        raise KashuError(f"row 1: the CSV header must be exactly {','.join(COLUMNS)} (got {','.join(header)})",
                         f"第 1 行：CSV 表头应为 {','.join(COLUMNS)}", "file")
    out = []
    for i, cells in enumerate(reader, start=2):
        if not cells or all(not c.strip() for c in cells):
            continue
        if len(cells) != len(COLUMNS):
            raise _err(i, f"{len(cells)} columns, expected {len(COLUMNS)}", f"有 {len(cells)} 列，应为 {len(COLUMNS)} 列", "file")
        out.append(make_quote(dict(zip(COLUMNS, cells, strict=True)), today, row=i))
    return out


def to_csv(quotes: Iterable[Quote]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for q in quotes:
        r = q.to_row()
        w.writerow([r[c] for c in COLUMNS])
    return buf.getvalue()


# ---------------------------------------------------------------- the store

@store.migration(NAMESPACE, 1, "create quotes")
def _v1(conn: Connection) -> None:
    conn.exec_driver_sql(
        "CREATE TABLE IF NOT EXISTS quotes ("
        " id INTEGER PRIMARY KEY, vendor VARCHAR(200) NOT NULL, gpu VARCHAR(64) NOT NULL,"
        " cards INTEGER NOT NULL CHECK (cards >= 1), mode VARCHAR(16) NOT NULL, price VARCHAR(40) NOT NULL,"
        " currency VARCHAR(8) NOT NULL, unit VARCHAR(16) NOT NULL, site VARCHAR(200) NOT NULL DEFAULT '',"
        " deployment VARCHAR(32) NOT NULL, includes VARCHAR(400) NOT NULL DEFAULT '',"
        " quoted_on VARCHAR(10) NOT NULL, valid_until VARCHAR(10) NOT NULL DEFAULT '',"
        " notes VARCHAR(2000) NOT NULL DEFAULT '')")


@store.migration(NAMESPACE, 2, "index quotes by card")
def _v2(conn: Connection) -> None:
    conn.exec_driver_sql("CREATE INDEX IF NOT EXISTS ix_quotes_gpu ON quotes (gpu)")


def open_book(db: str | None = None) -> Engine:
    return store.open_store(db, namespaces=(NAMESPACE,))


_INSERT = text("INSERT INTO quotes (vendor, gpu, cards, mode, price, currency, unit, site, deployment, includes,"
               " quoted_on, valid_until, notes) VALUES (:vendor, :gpu, :cards, :mode, :price, :currency, :unit,"
               " :site, :deployment, :includes, :quoted_on, :valid_until, :notes)")


def _params(q: Quote) -> dict:
    d = asdict(q)
    d.pop("id")
    return d


def add(engine: Engine, quotes: Iterable[Quote], on_row: Callable[[int], None] | None = None) -> int:
    """Insert quotes in one transaction (all or nothing). `on_row(i)` is called after each insert."""
    n = 0
    with store.transaction(engine) as conn:
        for q in quotes:
            conn.execute(_INSERT, _params(q))
            n += 1
            if on_row:
                on_row(n)
    return n


def list_quotes(engine: Engine, gpu: str | None = None) -> list[Quote]:
    sql = "SELECT id, " + ", ".join(COLUMNS) + " FROM quotes"
    args: dict = {}
    if gpu:
        sql += " WHERE gpu = :gpu"
        args["gpu"] = get_gpu(gpu).name
    sql += " ORDER BY id"
    with engine.connect() as conn:
        rows = conn.execute(text(sql), args).mappings().all()
        conn.rollback()
    return [Quote(**{**dict(r), "cards": int(r["cards"])}) for r in rows]


def remove(engine: Engine, ids: Iterable[int]) -> int:
    ids = list(ids)
    with store.transaction(engine) as conn:
        have = {r[0] for r in conn.execute(text("SELECT id FROM quotes")).all()}
        missing = [i for i in ids if i not in have]
        if missing:
            raise KashuError(f"no quote with id {', '.join(map(str, missing))} (see `kashu quotes list`); nothing removed",
                             f"没有编号为 {', '.join(map(str, missing))} 的报价；未删除任何报价", "id")
        for i in ids:
            conn.execute(text("DELETE FROM quotes WHERE id = :id"), {"id": i})
    return len(ids)


def read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise KashuError(f"no such file: {path}", f"文件不存在：{path}", "file") from None
    except UnicodeDecodeError:
        raise KashuError(f"{path} is not UTF-8 text", f"{path} 不是 UTF-8 文本", "file") from None
    except OSError as e:
        raise KashuError(f"cannot read {path}: {e.strerror}", f"无法读取 {path}：{e.strerror}", "file") from None


def import_csv(engine: Engine, content: str, today: dt.date | None = None,
               on_row: Callable[[int], None] | None = None) -> int:
    """Validate the whole file first, then insert it in one transaction."""
    quotes = parse_csv(content, today)
    return add(engine, quotes, on_row)


def export_csv(engine: Engine) -> str:
    return to_csv(list_quotes(engine))


def load_for_plan(db: str | None = None) -> list[Quote]:
    """The book's quotes for planning ([] if there is no book yet).

    Does not create a store file that does not exist (plain `kashu plan` must not write anything);
    a book that exists but cannot be read is an error the user can fix (exit 2), not a silent fallback.
    """
    f = store.sqlite_file(db)
    if f is not None and not f.exists():
        return []
    try:
        return list_quotes(open_book(db))
    except KashuError:
        raise
    except Exception as e:  # noqa: BLE001
        raise KashuError(f"the price book {store.db_url(db)} cannot be read ({type(e).__name__}: {str(e).splitlines()[0]})",
                         f"无法读取报价簿 {store.db_url(db)}（{type(e).__name__}）", "db") from e


# ---------------------------------------------------------------- matching (pure)

def matching(quotes: Iterable[Quote], gpu: str, cards: int, today: dt.date,
             modes: Iterable[str] | None = None, sites: Iterable[str] | None = None) -> list[Quote]:
    """Quotes for this card (catalog name), with enough cards, valid today (and in `modes`/`sites`)."""
    name = get_gpu(gpu).name
    ms = set(modes) if modes is not None else None
    ss = {s.lower() for s in sites} if sites is not None else None
    return [q for q in quotes if q.gpu == name and q.cards >= cards and q.valid_on(today)
            and (ms is None or q.mode in ms) and (ss is None or q.site.lower() in ss)]
