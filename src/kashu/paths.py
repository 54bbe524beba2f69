"""Where kashu keeps the user's data: one store (SQLite by default, any SQLAlchemy URL).

Order: an explicit --db value, then $KASHU_DB, then <user data dir>/kashu/kashu.db.
A value with '://' is used as a SQLAlchemy URL as is; anything else is a file path.
"""

from __future__ import annotations

import os
from pathlib import Path


def db_url(explicit: str | None = None) -> str:
    value = explicit or os.environ.get("KASHU_DB")
    if value:
        if "://" in value:
            return value
        p = Path(value).expanduser().resolve()
    else:
        from platformdirs import user_data_dir

        p = Path(user_data_dir("kashu", appauthor=False)) / "kashu.db"
    p.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{p}"
