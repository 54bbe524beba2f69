import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kashu.errors import KashuError
from kashu.quantities import format_count, format_days, parse_count, parse_days, parse_money


@pytest.mark.parametrize(
    "text,value",
    [
        ("7B", 7e9), ("7b", 7e9), ("7e9", 7e9), ("7000M", 7e9), ("1.5T", 1.5e12), ("70亿", 7e9),
        ("1万亿", 1e12), ("2000亿", 2e11), ("130亿", 1.3e10), ("13B", 1.3e10), ("1,000,000", 1e6),
        ("500K", 5e5), ("0.5T", 5e11), ("7 B", 7e9), ("3千亿", 3e11), (7e9, 7e9), (64, 64.0),
    ],
)
def test_parse_count(text, value):
    assert parse_count(text) == pytest.approx(value)


@pytest.mark.parametrize("bad", ["7X", "-5B", "0", "nan", "inf", "", "B7", "7BB", "abc", "1e", "七十亿", "-1万亿"])
def test_parse_count_rejects(bad):
    with pytest.raises(KashuError) as e:
        parse_count(bad, "parameters", "参数量", "params")
    assert repr(bad.strip()) in str(e.value) or bad == ""
    assert e.value.field == "params"


@pytest.mark.parametrize(
    "text,days",
    [("30d", 30), ("30", 30), (30, 30), ("2w", 14), ("720h", 30), ("3mo", 90), ("30天", 30), ("2周", 14),
     ("720小时", 30), ("3个月", 90), ("1.5d", 1.5), ("1q", 91)],
)
def test_parse_days(text, days):
    assert parse_days(text) == pytest.approx(days)


@pytest.mark.parametrize("bad", ["0", "0d", "-3d", "nan", "30x", "d", "inf"])
def test_parse_days_rejects(bad):
    with pytest.raises(KashuError):
        parse_days(bad)


@pytest.mark.parametrize(
    "text,amount,cur",
    [("¥1.2M", 1.2e6, "CNY"), ("120万", 1.2e6, "CNY"), ("CNY 500000", 5e5, "CNY"), ("$2M", 2e6, "USD"),
     ("200万元", 2e6, "CNY"), ("1亿", 1e8, "CNY"), (300000, 3e5, "CNY"), ("USD 10k", 1e4, "USD")],
)
def test_parse_money(text, amount, cur):
    a, c = parse_money(text)
    assert a == pytest.approx(amount)
    assert c == cur


@pytest.mark.parametrize("bad", ["¥-5", "free", "EUR 100", "0"])
def test_parse_money_rejects(bad):
    with pytest.raises(KashuError):
        parse_money(bad)


@given(st.floats(min_value=1e3, max_value=1e15, allow_nan=False))
def test_count_round_trip_en(x):
    # the writer keeps 4 significant digits; parsing it back stays within that rounding
    assert parse_count(format_count(x)) == pytest.approx(x, rel=1e-3)


@given(st.floats(min_value=1e4, max_value=1e15, allow_nan=False))
def test_count_round_trip_zh(x):
    assert parse_count(format_count(x, "zh")) == pytest.approx(x, rel=1e-3)


@given(st.sampled_from(["7B", "1T", "70亿", "1万亿", "2000亿", "1.5T", "130亿", "405B"]))
def test_typed_values_round_trip_exactly(s):
    x = parse_count(s)
    assert parse_count(format_count(x)) == x
    assert parse_count(format_count(x, "zh")) == x


def test_format_examples():
    assert format_count(7e9) == "7B"
    assert format_count(7e9, "zh") == "70亿"
    assert format_count(1e12, "zh") == "1万亿"
    assert format_days(30) == "30d"
    assert format_days(30, "zh") == "30天"
    assert format_days(0.5) == "12h"
    assert not math.isnan(parse_days(format_days(12.5)))
