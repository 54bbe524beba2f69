"""Quantities a user types, parsed into SI numbers, and written back for people.

Counts (parameters, tokens): ``7B``, ``7e9``, ``7000M``, ``1.5T``, ``70亿``, ``1万亿``, ``2000亿``.
Durations: ``30d``, ``2w``, ``720h``, ``3mo``, ``30天``, ``2周``, ``720小时``, ``3个月`` (a bare number is days).
Money: ``¥1.2M``, ``120万``, ``CNY 500000``, ``$2M`` (converted at the dated rate in data/defaults.toml).
"""

from __future__ import annotations

import math
import re

from .errors import KashuError

# English magnitude suffixes (case-insensitive; "G" is accepted as a synonym of billion).
_EN_SUFFIX = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "p": 1e15}
# Chinese units, longest first so that 万亿 wins over 万.
_ZH_SUFFIX = [("万亿", 1e12), ("千亿", 1e11), ("百亿", 1e10), ("十亿", 1e9), ("亿", 1e8), ("万", 1e4), ("千", 1e3), ("百", 1e2)]

_NUM = r"[+-]?(?:\d+(?:[.,_]\d+)*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"


def _number(text: str) -> float:
    t = text.replace(",", "").replace("_", "")
    return float(t)


def _finite_positive(value: float, raw: str, what: str, zh_what: str, field: str | None) -> float:
    if math.isnan(value) or math.isinf(value):
        raise KashuError(f"{what} {raw!r} is not a finite number", f"{zh_what} {raw!r} 不是有限数值", field)
    if value <= 0:
        raise KashuError(f"{what} {raw!r} must be greater than zero", f"{zh_what} {raw!r} 必须大于零", field)
    return value


def parse_count(text: str | float | int, what: str = "count", zh_what: str = "数量", field: str | None = None) -> float:
    """Parse a count such as ``7B``, ``1.5T``, ``70亿``, ``1万亿``, ``7e9`` into a float."""
    if isinstance(text, bool):
        raise KashuError(f"{what} {text!r} is not a number", f"{zh_what} {text!r} 不是数字", field)
    if isinstance(text, (int, float)):
        return _finite_positive(float(text), str(text), what, zh_what, field)
    raw = str(text).strip()
    s = raw.replace(" ", "")
    low = s.lower()
    if low in ("nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity"):
        return _finite_positive(float(low), raw, what, zh_what, field)
    for unit, mult in _ZH_SUFFIX:
        if s.endswith(unit):
            head = s[: -len(unit)]
            if re.fullmatch(_NUM, head):
                return _finite_positive(_number(head) * mult, raw, what, zh_what, field)
    m = re.fullmatch(rf"({_NUM})([a-zA-Z]?)", s)
    if m and m.group(2).lower() in _EN_SUFFIX:
        return _finite_positive(_number(m.group(1)) * _EN_SUFFIX[m.group(2).lower()], raw, what, zh_what, field)
    raise KashuError(
        f"{what} {raw!r} is not understood; expected a number like 7B, 7e9, 7000M, 1.5T, 70亿 or 1万亿",
        f"无法识别{zh_what} {raw!r}；应为 7B、7e9、7000M、1.5T、70亿 或 1万亿 这样的数",
        field,
    )


_DUR_UNITS = {
    "s": 1 / 86400, "sec": 1 / 86400, "秒": 1 / 86400,
    "m": 1 / 1440, "min": 1 / 1440, "分钟": 1 / 1440,
    "h": 1 / 24, "hr": 1 / 24, "hrs": 1 / 24, "hour": 1 / 24, "hours": 1 / 24, "小时": 1 / 24, "时": 1 / 24,
    "": 1.0, "d": 1.0, "day": 1.0, "days": 1.0, "天": 1.0, "日": 1.0,
    "w": 7.0, "wk": 7.0, "week": 7.0, "weeks": 7.0, "周": 7.0, "星期": 7.0,
    "mo": 30.0, "mon": 30.0, "month": 30.0, "months": 30.0, "个月": 30.0, "月": 30.0,
    "q": 91.0, "quarter": 91.0, "季度": 91.0, "个季度": 91.0,
    "y": 365.0, "yr": 365.0, "year": 365.0, "years": 365.0, "年": 365.0,
}


def parse_days(text: str | float | int, what: str = "duration", zh_what: str = "时长", field: str | None = None) -> float:
    """Parse a duration (``30d``, ``2w``, ``720h``, ``3mo``, ``30天``) into days. A bare number is days."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return _finite_positive(float(text), str(text), what, zh_what, field)
    raw = str(text).strip()
    s = raw.replace(" ", "").lower()
    m = re.fullmatch(rf"({_NUM}|nan|inf)(.*)", s)
    if m and m.group(2) in _DUR_UNITS:
        return _finite_positive(float(m.group(1).replace(",", "")) * _DUR_UNITS[m.group(2)], raw, what, zh_what, field)
    raise KashuError(
        f"{what} {raw!r} is not understood; expected e.g. 30d, 2w, 720h, 3mo or 30天",
        f"无法识别{zh_what} {raw!r}；应为 30d、2w、720h、3mo 或 30天 这样的时长",
        field,
    )


_CURRENCY_WORDS = {"¥": "CNY", "￥": "CNY", "cny": "CNY", "rmb": "CNY", "元": "CNY", "人民币": "CNY",
                   "$": "USD", "usd": "USD", "us$": "USD", "美元": "USD"}


def parse_money(text: str | float | int, field: str | None = None) -> tuple[float, str]:
    """Parse money (``¥1.2M``, ``120万``, ``CNY 500000``, ``$2M``) into (amount, ISO currency)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return _finite_positive(float(text), str(text), "amount", "金额", field), "CNY"
    raw = str(text).strip()
    s = raw.replace(" ", "")
    currency = "CNY"
    low = s.lower()
    for word in sorted(_CURRENCY_WORDS, key=len, reverse=True):
        if low.startswith(word):
            currency, s = _CURRENCY_WORDS[word], s[len(word):]
            break
        if low.endswith(word):
            currency, s = _CURRENCY_WORDS[word], s[: -len(word)]
            break
    try:
        amount = parse_count(s, "amount", "金额", field)
    except KashuError:
        raise KashuError(
            f"amount {raw!r} is not understood; expected e.g. ¥1.2M, 120万, CNY 500000 or $2M",
            f"无法识别金额 {raw!r}；应为 ¥1.2M、120万、CNY 500000 或 $2M 这样的金额",
            field,
        ) from None
    return amount, currency


# ---------------------------------------------------------------- formatting


def _trim(x: float, digits: int = 3) -> str:
    s = f"{x:.{digits}g}"
    if "e" in s:
        s = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return s


def format_count(x: float, lang: str = "en") -> str:
    """Write a count back the way people type it: ``7B``/``1T`` or ``70亿``/``1万亿``."""
    if lang == "zh":
        for unit, mult in (("万亿", 1e12), ("亿", 1e8), ("万", 1e4)):
            if abs(x) >= mult:
                return f"{_trim(x / mult, 4)}{unit}"
        return _trim(x, 4)
    for unit, mult in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(x) >= mult:
            return f"{_trim(x / mult, 4)}{unit}"
    return _trim(x, 4)


def format_days(days: float, lang: str = "en") -> str:
    if days < 1:
        h = days * 24
        return f"{_trim(h, 3)}小时" if lang == "zh" else f"{_trim(h, 3)}h"
    return f"{_trim(days, 3)}天" if lang == "zh" else f"{_trim(days, 3)}d"


def format_money(cny: float, lang: str = "en") -> str:
    if lang == "zh":
        if abs(cny) >= 1e8:
            return f"¥{cny / 1e8:,.2f}亿"
        if abs(cny) >= 1e4:
            return f"¥{cny / 1e4:,.1f}万"
        return f"¥{cny:,.0f}"
    if abs(cny) >= 1e9:
        return f"¥{cny / 1e9:,.2f}B"
    if abs(cny) >= 1e6:
        return f"¥{cny / 1e6:,.2f}M"
    return f"¥{cny:,.0f}"


def format_flops(x: float) -> str:
    return f"{x:.3g}".replace("e+", "e")
