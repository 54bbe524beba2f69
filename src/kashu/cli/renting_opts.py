"""Renting options shared by `kashu plan`, `kashu compare` and `kashu sweep` (issue 5)."""

from __future__ import annotations

from .. import pricebook


def renting_inputs(db: str | None, data_must_stay_local: bool = False, stage: str | None = None,
                   subsidy: float | None = None, voucher_cap: float | None = None,
                   domestic_reserve: float | None = None) -> dict:
    """PlanRequest fields for the renting layer; the price book is read here, at the edge."""
    quotes = pricebook.load_for_plan(db)
    return {"quotes": quotes, "data_must_stay_local": data_must_stay_local, "stage": stage, "subsidy": subsidy,
            "voucher_cap": voucher_cap, "domestic_reserve": domestic_reserve}
