"""Package data: specs, presets, prices, defaults. Each file is read once and cached."""

from __future__ import annotations

import csv
import tomllib
from functools import cache
from importlib import resources
from typing import Any


def path(name: str):
    return resources.files(__name__).joinpath(name)


@cache
def load_toml(name: str) -> dict[str, Any]:
    with path(name).open("rb") as f:
        return tomllib.load(f)


@cache
def load_csv(name: str) -> list[dict[str, str]]:
    with path(name).open("r", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def default(key: str) -> float:
    """A named planning default from defaults.toml (its `value`)."""
    return float(load_toml("defaults.toml")[key]["value"])


def default_source(key: str) -> str:
    return str(load_toml("defaults.toml")[key]["source"])
