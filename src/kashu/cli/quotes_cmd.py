"""`kashu quotes`: the price book of real vendor quotes (add, list, remove, import, export)."""

from __future__ import annotations

import datetime as dt
import sys

import typer
from rich.console import Console
from rich.table import Table

from .. import pricebook
from ..errors import KashuError
from ..i18n import detect_lang
from . import LangOpt, app, emit_json

quotes_app = typer.Typer(help="The price book: real vendor quotes that price plans (kashu plan uses the cheapest valid match).",
                         no_args_is_help=True)
app.add_typer(quotes_app, name="quotes")

DbOpt = typer.Option(None, "--db", help="Price book: a file path or SQLAlchemy URL (default $KASHU_DB, else the user data dir).")


def _say(msg_en: str, msg_zh: str, lang: str | None) -> None:
    sys.stderr.write((msg_zh if detect_lang(lang) == "zh" else msg_en) + "\n")


@quotes_app.command("add")
def add_cmd(
    vendor: str = typer.Option(..., "--vendor", help="Who quoted."),
    gpu: str = typer.Option(..., "--gpu", help="Card type (see `kashu gpus`)."),
    cards: str = typer.Option(..., "--cards", help="Cards available."),
    mode: str = typer.Option(..., "--mode", help="spot, hourly, daily, weekly, monthly, quarterly or yearly."),
    price: str = typer.Option(..., "--price", help="Price per unit."),
    currency: str = typer.Option("CNY", "--currency", help="CNY or USD."),
    unit: str = typer.Option("card-hour", "--unit", help="card-hour or node-month."),
    site: str = typer.Option("", "--site", help="Site or region (see data/sites.toml), e.g. Daxing."),
    deployment: str = typer.Option("remote-cloud", "--deployment", help="local-dedicated, remote-cloud or bare-metal."),
    includes: str = typer.Option("", "--includes", help="What the price includes, e.g. network;storage."),
    quoted_on: str = typer.Option(None, "--quoted-on", help="Date quoted, YYYY-MM-DD (default today)."),
    valid_until: str = typer.Option("", "--valid-until", help="Valid until, YYYY-MM-DD (empty: open-ended)."),
    notes: str = typer.Option("", "--notes", help="Free text."),
    db: str = DbOpt,
    json_out: bool = typer.Option(False, "--json", help="Print the stored quote as JSON."),
    lang: str = LangOpt,
) -> None:
    """Add one quote."""
    q = pricebook.make_quote(dict(vendor=vendor, gpu=gpu, cards=cards, mode=mode, price=price, currency=currency,
                                  unit=unit, site=site, deployment=deployment, includes=includes,
                                  quoted_on=quoted_on or dt.date.today().isoformat(), valid_until=valid_until,
                                  notes=notes))
    eng = pricebook.open_book(db)
    pricebook.add(eng, [q])
    stored = pricebook.list_quotes(eng)[-1]
    if json_out:
        emit_json(stored.to_dict())
    else:
        _say(f"added quote {stored.id}: {q.vendor} {q.gpu} ×{q.cards} {q.mode} {q.price} {q.currency}/{q.unit} "
             f"(¥{q.cny_per_card_hour:.2f}/card-hour)",
             f"已添加报价 {stored.id}：{q.vendor} {q.gpu} ×{q.cards} {q.mode} {q.price} {q.currency}/{q.unit}"
             f"（¥{q.cny_per_card_hour:.2f}/卡时）", lang)


@quotes_app.command("list")
def list_cmd(
    gpu: str = typer.Option(None, "--gpu", help="Only this card."),
    db: str = DbOpt,
    json_out: bool = typer.Option(False, "--json", help="Print JSON: {\"quotes\": [...]}."),
    lang: str = LangOpt,
) -> None:
    """List the quotes in the book."""
    qs = pricebook.list_quotes(pricebook.open_book(db), gpu)
    today = dt.date.today()
    if json_out:
        emit_json({"quotes": [{**q.to_dict(), "valid_today": q.valid_on(today)} for q in qs]})
        return
    zh = detect_lang(lang) == "zh"
    tab = Table(title="报价簿" if zh else "Price book")
    heads = [("id", "编号"), ("vendor", "供应商"), ("gpu", "卡型"), ("cards", "卡数"), ("mode", "方式"), ("price", "价格"),
             ("¥/card-hour", "元/卡时"), ("site", "地点"), ("deployment", "部署"), ("quoted", "报价日"), ("valid until", "有效期至")]
    for en, z in heads:
        tab.add_column(z if zh else en)
    for q in qs:
        exp = "" if q.valid_on(today) else (" (过期)" if zh else " (expired)")
        tab.add_row(str(q.id), q.vendor, q.gpu, str(q.cards), q.mode, f"{q.price} {q.currency}/{q.unit}",
                    f"{q.cny_per_card_hour:.2f}", q.site, q.deployment, q.quoted_on, (q.valid_until or "—") + exp)
    Console().print(tab)


@quotes_app.command("remove")
def remove_cmd(
    ids: list[int] = typer.Argument(..., help="Quote ids (see `kashu quotes list`)."),
    db: str = DbOpt,
    lang: str = LangOpt,
) -> None:
    """Remove quotes by id (all or none)."""
    n = pricebook.remove(pricebook.open_book(db), ids)
    _say(f"removed {n} quote(s)", f"已删除 {n} 条报价", lang)


@quotes_app.command("import")
def import_cmd(
    file: str = typer.Argument(..., help="CSV file ('-' for stdin) with columns " + ",".join(pricebook.COLUMNS)),
    db: str = DbOpt,
    lang: str = LangOpt,
) -> None:
    """Import quotes from CSV: the whole file or nothing."""
    content = pricebook.read_text(file)
    quotes = pricebook.parse_csv(content)  # validate before touching the book
    n = pricebook.add(pricebook.open_book(db), quotes)
    _say(f"imported {n} quote(s)", f"已导入 {n} 条报价", lang)


@quotes_app.command("export")
def export_cmd(
    file: str = typer.Argument(..., help="CSV file to write ('-' for stdout)."),
    db: str = DbOpt,
    lang: str = LangOpt,
) -> None:
    """Export the book as CSV (import it again to get the same book)."""
    content = pricebook.export_csv(pricebook.open_book(db))
    if file == "-":
        sys.stdout.write(content)
        return
    try:
        with open(file, "w", encoding="utf-8", newline="") as f:
            f.write(content)
    except OSError as e:
        raise KashuError(f"cannot write {file}: {e.strerror}", f"无法写入 {file}：{e.strerror}", "file") from None
    _say(f"exported {content.count(chr(10)) - 1} quote(s) to {file}", f"已导出 {content.count(chr(10)) - 1} 条报价到 {file}", lang)
