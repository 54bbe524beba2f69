"""Predicted MFU / throughput pinned to published configurations (tolerances say how far we trust it)."""

import pytest

from kashu.hardware import get_gpu
from kashu.layout import Layout
from kashu.models import get_model
from kashu.perf import _pick, evaluate
from kashu.validation import run


def _rows(prefix):
    t = next(t for t in run()["tables"] if t["name"].startswith(prefix))
    return [r for r in t["rows"] if r.get("error_pct") is not None]


def test_llama3_405b_on_16k_h100():
    """Dubey et al. 2024 (Llama 3) Table 4: 16,384 H100, TP8 CP1 PP16 DP128, 16M-token batch, seq 8192,
    BF16: 400 TFLOPS per GPU = 41 % MFU (uneven stages: 126 layers over 16 stages, interleaved)."""
    m, g = get_model("llama3-405b").with_seq(8192), get_gpu("H100")
    lay = Layout(tp=8, pp=16, dp=128, vp=8, mbs=1, recompute="full", sp=True, zero=1)
    r = _pick(evaluate(m, g, lay.arrays(), 2048))
    assert r["fits"]
    assert 0.30 < r["mfu"] < 0.48


def test_megatron_readme_h100_rows():
    """NVIDIA/Megatron-LM README (2024-07, Megatron-Core r0.8) H100 weak scaling, 41-49 % MFU."""
    rows = _rows("Megatron-LM README")
    assert len(rows) == 9
    assert all(abs(r["error_pct"]) < 15 for r in rows)
    assert all(0.35 < r["mfu"] < 0.55 for r in rows)


def test_mosaicml_a100_rows():
    """mosaicml/llm-foundry benchmarking README: MPT-70B on 64 A100-80GB 53.3 % MFU, MPT-30B on 8 55.3 %."""
    rows = [r for r in _rows("MosaicML") if "A100" in r["gpu"] and r["model"] in ("MPT-70B", "MPT-30B")]
    assert rows and all(abs(r["error_pct"]) < 15 for r in rows)


def test_narayanan_and_korthikanti_targets():
    t = {x["name"]: x for x in run()["tables"]}
    n1 = next(v for k, v in t.items() if k.startswith("Narayanan et al. 2021 Table 1"))
    k5 = next(v for k, v in t.items() if k.startswith("Korthikanti et al. 2022 Table 5"))
    assert n1["mean_abs_error_pct"] <= 5.0
    assert k5["mean_abs_error_pct"] <= 3.0 and k5["max_abs_error_pct"] <= 6.0


@pytest.mark.parametrize("cards", [32, 1024])
def test_planner_default_mfu_band(cards):
    """Bare --params 7B on H800 (modern stack): published Megatron-Core 7B-class 41-49 % (README)."""
    from kashu.planner import PlanRequest, plan

    p = plan(PlanRequest(params="7B", tokens="1T", gpu="H800", gpus=cards))
    assert 0.38 < p.mfu < 0.58


def test_moe_plan_counts_active_parameters():
    """DeepSeek-V3 report Table 1: 2.664M H800-hours for 14.8T tokens on 2048 H800 (37B of 671B active)."""
    from kashu.planner import PlanRequest, plan

    p = plan(PlanRequest(model="deepseek-v3", tokens="14.8T", gpu="H800", gpus=2048))
    assert p.total_flops < 0.1 * 6 * 671e9 * 14.8e12  # 6·N_active·D plus attention, not 6·671B·D
    assert 0.6 * 2.664e6 < p.gpus_training * p.days * 24 < 1.6 * 2.664e6


def test_wholerun_table_reported():
    t = next(t for t in run()["tables"] if t["name"].startswith("Whole-run card-hours"))
    assert len(t["rows"]) >= 8 and all(r["predicted"] > 0 for r in t["rows"])
    published = [r for r in t["rows"] if r["gpus_published"]]
    assert published and all(abs(r["error_pct"]) < 60 for r in published)


def _table(prefix):
    return next(t for t in run()["tables"] if t["name"].startswith(prefix))


def test_llama3_405b_table4_reported():
    """Dubey et al. 2024 Table 4: 430 / 400 / 380 model TFLOPS per GPU on 8,192 / 16,384 / 16,384 (CP16) H100.
    The 8K rows run without activation checkpointing (§3.3.2) and fit: 16,384 cards (m = p = 16) at any
    interleaving (+6 %); 8,192 cards (m = 32) only without interleaving in our memory model (-22 %: rank 1
    holds 8 layers x (p + (p - 3)/v) micro-batches). Known gap: the CP16 131K row (+27 %, our model FLOPs count
    non-causal attention, Meta's convention is not stated; CP all-gather assumed hidden)."""
    t = _table("Llama 3 405B Table 4")
    assert len(t["rows"]) == 3 and all(r["fits"] for r in t["rows"])
    assert t["max_abs_error_pct"] < 30.0
    assert all(0.30 < r["mfu"] < 0.48 for r in t["rows"][:2])  # published 41-43 % BF16 MFU at 8K


def test_new_layout_tables_have_sources():
    for prefix in ("Llama 3 405B", "torchtitan FSDP2 on 64 A100", "torchtitan FSDP2 Llama 3.1 8B"):
        t = _table(prefix)
        assert t["rows"] and all(r["source"] and r["published"] > 0 for r in t["rows"])


def test_nemo_fp8_no_worse_than_before():
    """NeMo 24.07 FP8 table: 18.8 % mean before FP8-saved linear inputs and overlapped p2p sends."""
    assert _table("NeMo 24.07")["mean_abs_error_pct"] < 16.0


_BAND_SOURCE = ("published 7B-70B dense on H100-class cards: Megatron-Core README 2024 GPT-7.1B 47 %, 70B 42 %; "
                "MosaicML MPT-7B on 8 H100 46 %; NeMo/Llama 3 405B 38-43 %; torchtitan Llama 3.1 8B 33-39 % (500 W)")


@pytest.mark.parametrize("model,tokens", [("llama2-7b", "2T"), ("llama3-8b", "15T"), ("llama2-13b", "2T"),
                                          ("llama2-70b", "2T"), ("llama3-70b", "15T")])
@pytest.mark.parametrize("gpu,cards", [("H100", 32), ("H800", 256), ("H100", 1024)])
def test_planner_mfu_band_h100_class(model, tokens, gpu, cards):
    """Planner default (modern profile, best layout) lands in the published band. """ + _BAND_SOURCE
    from kashu.planner import PlanRequest, plan

    p = plan(PlanRequest(model=model, tokens=tokens, gpu=gpu, gpus=cards))
    assert 0.38 <= p.mfu <= 0.57, (_BAND_SOURCE, p.mfu)


@pytest.mark.xfail(strict=True, reason="known optimism: A100 modern-profile plans on 256 cards predict 0.67-0.71 "
                   "(0.70-0.72 before overlapped communication paid its SM contention; >= 94 % of the step is now "
                   "GEMM/attention/memory-bound compute, so what is left is the A100 compute rates, which no modern-stack "
                   "A100 row calibrates); published A100 7B-70B: torchtitan FSDP2 64 A100 50-61 %, MosaicML 50-64 %, "
                   "Llama 2 whole-run ~40 %")
@pytest.mark.parametrize("model", ["llama2-7b", "llama2-70b"])
def test_planner_mfu_band_a100(model):
    from kashu.planner import PlanRequest, plan

    p = plan(PlanRequest(model=model, tokens="2T", gpu="A100", gpus=256))
    assert 0.38 <= p.mfu <= 0.62
