"""JSON for plans and results: the one encoder the CLI and the web app share."""

from __future__ import annotations

import json
from typing import Any


def json_default(o: Any) -> Any:
    """Typed results (to_dict), NumPy values (tolist), dates (isoformat); anything else as text."""
    if hasattr(o, "to_dict"):
        return o.to_dict()
    if hasattr(o, "tolist"):
        return o.tolist()
    if hasattr(o, "isoformat"):
        return o.isoformat()
    return str(o)


def dumps(obj: Any, indent: int | None = 2) -> str:
    """UTF-8 JSON (Chinese not escaped) with the shared encoder."""
    return json.dumps(obj, ensure_ascii=False, indent=indent, default=json_default)
