import pytest

from kashu.errors import KashuError
from kashu.models import from_architecture, get_model, presets, shape_for_params


def test_llama3_8b_exact():
    assert get_model("llama3-8b").n_params == 8_030_261_248


def test_deepseek_v3_total_and_active():
    m = get_model("DeepSeek-V3")
    assert abs(m.n_params / 671e9 - 1) < 0.005
    assert abs(m.n_active_params / 37e9 - 1) < 0.03


def test_megatron_gpt_matches_narayanan_eq2():
    m = get_model("gpt3-175b")
    L, h, V, s = m.layers, m.hidden, m.vocab, m.seq_len
    eq2 = 12 * L * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * L * h))
    assert abs(m.n_params - eq2) <= 2 * h  # eq. 2 leaves out the final layer norm


def test_aliases_and_presets_have_sources():
    assert get_model("llama3-70b").name == get_model("Llama-3.1-70B").name
    assert get_model("gpt3-175b").layers == 96
    for p in presets():
        assert p.source


def test_shape_for_params_close():
    s = shape_for_params(13e9)
    assert abs(s.n_params / 13e9 - 1) < 0.1 and "assumed" in s.note


def test_bad_specs():
    with pytest.raises(KashuError, match="kv_heads"):
        from_architecture(32, 4096, 32, kv_heads=5)
    with pytest.raises(KashuError, match="unknown model"):
        get_model("llama9-1b")
    with pytest.raises(KashuError, match="top_k"):
        from_architecture(8, 1024, 8, experts=4, top_k=8, expert_ffn=512)
