from kashu.hardware import get_gpu
from kashu.layout import Layout
from kashu.memory import activation_per_layer
from kashu.models import ModelSpec


def _gpt(L, h, a, s=2048):
    return ModelSpec(name="g", layers=L, hidden=h, heads=a, ffn=4 * h, vocab=51200, seq_len=s, ffn_type="gelu",
                     bias=True, norm="layernorm", pos="learned", tied=True, dropout=True)


def test_table2_tensor_parallel():
    m = _gpt(48, 6144, 64)
    s, b, h, a, t = 2048, 4, 6144, 64, 8
    lay = Layout(tp=t, mbs=b, recompute="none", sp=False).arrays()
    got = activation_per_layer(m, lay, False)["kept"][0]
    assert abs(got - s * b * h * (10 + 24 / t + 5 * a * s / (h * t))) < 1


def test_table2_selective_sp_and_full():
    m = _gpt(48, 6144, 64)
    s, b, h, t = 2048, 1, 6144, 8
    sel = activation_per_layer(m, Layout(tp=t, mbs=b, recompute="selective", sp=True).arrays(), False)["kept"][0]
    assert abs(sel - s * b * h * 34 / t) < 1
    full = activation_per_layer(m, Layout(tp=t, mbs=b, recompute="full", sp=False).arrays(), False)["kept"][0]
    assert abs(full - 2 * s * b * h) < 1


def test_figure1_within_5pct():
    from kashu.validation import run

    tab = [t for t in run()["tables"] if "Figure 1" in t["name"]][0]
    assert tab["max_abs_error_pct"] <= 5.0
    assert get_gpu("A100-80GB").memory_gb == 80
