"""kashu's one store: a SQLAlchemy engine on `paths.db_url()`, ordered migrations, transactional writes.

The store is SQLite by default (a file in the user's data dir; `--db PATH` or `$KASHU_DB` to choose) and
any SQLAlchemy URL otherwise, so a team can share a PostgreSQL book.

Migrations
----------
A migration is a plain function ``fn(conn)`` that receives a SQLAlchemy ``Connection`` inside a
transaction. Migrations are grouped by *namespace* (one per module that owns tables) and ordered by an
integer *version* inside the namespace. Applied migrations are recorded in the table
``kashu_migrations(namespace, version, name, applied_at)``; a migration and its record commit together,
so a crash leaves it either fully applied or not at all.

Another module registers its own tables like this (do it at import time of that module)::

    from kashu import store

    @store.migration("bench", 1, "create bench_results")
    def _bench_v1(conn):
        conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS bench_results (...)")

and opens the store with ``engine = store.open_store(db, namespaces=("bench",))`` (or ``migrate(engine)``
for all registered namespaces). Rules that keep several owners in one file safe:

* The migration machinery never touches tables it did not create through a migration: foreign tables
  (another module's, created before or without this mechanism) are left alone.
* Use ``CREATE TABLE IF NOT EXISTS`` / ``checkfirst=True`` in a namespace's first migration, so a table
  created by an earlier ad-hoc version of that module is adopted rather than clobbered.
* Never reuse a (namespace, version) pair; add a new version to change a schema.

Writes go through ``with store.transaction(engine) as conn:`` — one transaction, committed on success,
rolled back on any exception (and, on SQLite, undone by the journal when the process is killed).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from .errors import KashuError
from .paths import db_url


@dataclass(frozen=True)
class Migration:
    namespace: str
    version: int
    name: str
    fn: Callable[[Connection], None]


_REGISTRY: dict[tuple[str, int], Migration] = {}

MIGRATIONS_TABLE = "kashu_migrations"


def register_migration(namespace: str, version: int, name: str, fn: Callable[[Connection], None]) -> None:
    """Register `fn` as migration `version` of `namespace` (idempotent for the same function)."""
    if version < 1:
        raise ValueError("migration versions start at 1")
    key = (namespace, version)
    old = _REGISTRY.get(key)
    if old is not None and old.fn is not fn and old.fn.__qualname__ != fn.__qualname__:
        raise ValueError(f"migration {namespace}#{version} is already registered as {old.name!r}")
    _REGISTRY[key] = Migration(namespace, version, name, fn)


def migration(namespace: str, version: int, name: str = "") -> Callable[[Callable], Callable]:
    """Decorator form of `register_migration`."""

    def deco(fn: Callable[[Connection], None]) -> Callable[[Connection], None]:
        register_migration(namespace, version, name or fn.__name__, fn)
        return fn

    return deco


def registered(namespace: str | None = None) -> list[Migration]:
    return sorted((m for m in _REGISTRY.values() if namespace is None or m.namespace == namespace),
                  key=lambda m: (m.namespace, m.version))


def make_engine(url_or_path: str | None = None) -> Engine:
    """An engine for an explicit --db value, else $KASHU_DB, else the user data dir (see kashu.paths)."""
    url = db_url(url_or_path)
    if url.startswith("sqlite"):
        eng = create_engine(url, connect_args={"timeout": 30})

        @event.listens_for(eng, "connect")
        def _on_connect(dbapi_conn, _rec):  # pragma: no cover - exercised through every test
            # let SQLAlchemy, not pysqlite, decide where transactions start (pysqlite would run DDL in
            # autocommit); then every transaction is BEGIN IMMEDIATE: one writer at a time, no upgrades
            dbapi_conn.isolation_level = None
            dbapi_conn.execute("PRAGMA busy_timeout = 30000")

        @event.listens_for(eng, "begin")
        def _on_begin(conn):  # pragma: no cover
            conn.exec_driver_sql("BEGIN IMMEDIATE")

        return eng
    try:
        return create_engine(url)
    except (SQLAlchemyError, ImportError, ValueError) as e:
        raise KashuError(f"cannot open the store {url!r}: {e}", f"无法打开数据库 {url!r}：{e}", "db") from e


def sqlite_file(url_or_path: str | None = None) -> Path | None:
    """The file behind a SQLite store (None for other databases)."""
    url = db_url(url_or_path)
    if url.startswith("sqlite:///"):
        return Path(url[len("sqlite:///"):])
    return None


@contextmanager
def transaction(engine: Engine) -> Iterator[Connection]:
    """One write transaction: commit on success, roll back on any exception."""
    try:
        with engine.begin() as conn:
            yield conn
    except KashuError:
        raise
    except SQLAlchemyError as e:
        raise KashuError(f"the store refused the write ({type(e).__name__}: {str(e).splitlines()[0]}); nothing was changed",
                         f"数据库拒绝写入（{type(e).__name__}）；未做任何更改", "db") from e


def _ensure_migrations_table(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.exec_driver_sql(
            f"CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} ("
            " namespace VARCHAR(64) NOT NULL, version INTEGER NOT NULL, name VARCHAR(200) NOT NULL,"
            " applied_at VARCHAR(40) NOT NULL, PRIMARY KEY (namespace, version))")


def applied(engine: Engine) -> set[tuple[str, int]]:
    _ensure_migrations_table(engine)
    with engine.connect() as conn:
        rows = conn.execute(text(f"SELECT namespace, version FROM {MIGRATIONS_TABLE}")).all()
        conn.rollback()
    return {(r[0], int(r[1])) for r in rows}


def migrate(engine: Engine, namespaces: Iterable[str] | None = None) -> list[str]:
    """Apply the registered migrations not yet applied (in (namespace, version) order); return their names.

    Each migration runs in its own transaction together with its record, so two processes racing to
    migrate cannot both apply it: the loser's record insert fails and its transaction rolls back.
    """
    wanted = None if namespaces is None else set(namespaces)
    done = applied(engine)
    ran: list[str] = []
    for m in registered():
        if wanted is not None and m.namespace not in wanted:
            continue
        if (m.namespace, m.version) in done:
            continue
        try:
            with engine.begin() as conn:
                row = conn.execute(text(f"SELECT 1 FROM {MIGRATIONS_TABLE} WHERE namespace = :n AND version = :v"),
                                   {"n": m.namespace, "v": m.version}).first()
                if row is not None:
                    continue
                m.fn(conn)
                conn.execute(text(f"INSERT INTO {MIGRATIONS_TABLE} (namespace, version, name, applied_at) "
                                  "VALUES (:n, :v, :name, :t)"),
                             {"n": m.namespace, "v": m.version, "name": m.name,
                              "t": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")})
        except IntegrityError:
            continue  # another process applied it first
        ran.append(f"{m.namespace}#{m.version} {m.name}")
    return ran


def open_store(url_or_path: str | None = None, namespaces: Iterable[str] | None = None) -> Engine:
    """Engine + migrations applied. Errors opening the database become a KashuError (exit 2)."""
    eng = make_engine(url_or_path)
    try:
        migrate(eng, namespaces)
    except SQLAlchemyError as e:
        raise KashuError(f"cannot open the store {db_url(url_or_path)!r}: {str(e).splitlines()[0]}",
                         f"无法打开数据库 {db_url(url_or_path)!r}", "db") from e
    return eng
