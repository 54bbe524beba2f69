import pytest

from kashu.errors import KashuError
from kashu.hardware import get_gpu
from kashu.models import get_model
from kashu.search import search


def test_gpt3_on_1024_a100():
    res = search(get_model("gpt3-175b"), get_gpu("A100-80GB"), 1024, 1536, top=5)
    assert 1 <= len(res) <= 5
    times = [r["step_time_s"] for r in res]
    assert times == sorted(times) and all(r["fits"] for r in res)
    lay = res[0]["layout"]
    assert lay["tp"] * lay["pp"] * lay["dp"] * lay["cp"] == 1024


def test_moe_search_uses_ep():
    res = search(get_model("mixtral-8x7b"), get_gpu("H800"), 64, 256, top=3)
    assert res and all(r["fits"] for r in res)


def test_nothing_fits_says_what_would():
    with pytest.raises(KashuError, match="more cards"):
        search(get_model("llama3-405b"), get_gpu("RTX 4090"), 8, 8)
