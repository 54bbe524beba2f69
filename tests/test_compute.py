import pytest
from hypothesis import given
from hypothesis import strategies as st

from kashu import compute


def test_six_n_d_article_example():
    # the seed article's 7B x 1T: 6 x 7e9 x 1e12 = 4.2e22 (the article says 2e23: wrong)
    assert compute.training_flops(7e9, 1e12) == pytest.approx(4.2e22)


def test_palm_attention_term():
    # PaLM App. B: 6N + 12·L·h·s; GPT-3 175B (L=96, h=12288, s=2048)
    n = 175e9
    assert compute.flops_per_token(n, 96, 12288, 2048) == pytest.approx(6 * n + 12 * 96 * 12288 * 2048)
    assert compute.flops_per_token(n) == 6 * n


def test_lora_skips_weight_gradients():
    assert compute.lora_flops_per_token(7e9, 0) == pytest.approx(4 * 7e9)
    assert compute.lora_flops_per_token(7e9, 1e7) == pytest.approx(4 * 7e9 + 6e7)
    # rank-16 adapters on 4 square projections of a 32-layer, 4096-wide model
    assert compute.lora_adapter_params(7e9, 16, 32, 4096) == 4 * 32 * 16 * 2 * 4096


def test_chinchilla():
    assert compute.chinchilla_tokens(13e9) == pytest.approx(260e9)  # the article's 13B -> 260B


def test_card_seconds_hand_computed():
    # 4.2e22 / (989e12 x 0.45) = 9.437e7 s = 26,214 card-hours
    assert compute.card_seconds(4.2e22, 989e12, 0.45) / 3600 == pytest.approx(26214.3, rel=1e-4)


@given(st.floats(1e6, 1e13), st.floats(1e6, 1e15), st.floats(1.0, 10.0))
def test_more_tokens_never_fewer_flops(n, d, k):
    assert compute.training_flops(n, d * k) >= compute.training_flops(n, d)
