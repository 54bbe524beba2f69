"""Predictions against published measurements (package data validation/*.csv, each row with its source).

Every row runs through the same model with the same constants (perf.toml). What a row states is
used as stated (card, layout, batch, recomputation); what it does not state (micro-batch size,
interleaving) is searched the way the authors tuned it: the fastest setting that fits. The framework
generation (what overlaps what) and the cluster's NICs come from the row's source.
"""

from __future__ import annotations

import re
from functools import cache

import numpy as np

from .data import load_csv, load_toml
from .hardware import get_gpu
from .layout import RECOMPUTE, Layout
from .models import ModelSpec, get_model
from .perf import Fabric, _pick, constants, evaluate, framework, result_dict

# Rows whose CSV line lacks the architecture name the preset of the same model (shape only).
PRESET_OF = {
    "GPT-174.6B (PTD)": "gpt3-175b", "GPT-174.6B (ZeRO-3)": "gpt3-175b",
    "GPT-529.6B (PTD)": "megatron-gpt-529.6b", "GPT-529.6B (ZeRO-3)": "megatron-gpt-529.6b",
    "GPT3-5B": "nemo-gpt3-5b", "GPT3-20B": "nemo-gpt3-20b", "GPT3-175B": "gpt3-175b",
    "LLAMA2-7B": "llama2-7b", "LLAMA2-13B": "llama2-13b", "LLAMA2-70B": "llama2-70b",
    "LLAMA3-8B": "llama3-8b", "LLAMA3-70B": "llama3-70b", "Nemotron-340B": "nemotron-4-340b",
    "MPT-7B": "mpt-7b", "MPT-13B": "mpt-13b", "MPT-30B": "mpt-30b", "MPT-70B": "mpt-70b",
}


def _f(x: str) -> float | None:
    m = re.match(r"\s*([-+]?\d+(?:\.\d+)?)", x or "")
    return float(m.group(1)) if m else None


def _i(x: str) -> int | None:
    v = _f(x)
    return int(v) if v is not None else None


def _gpu(text: str):
    t = text.upper()
    if "A100-40" in t:
        return get_gpu("A100-40GB")
    if "A100" in t:
        return get_gpu("A100-80GB")
    if "H100" in t:
        return get_gpu("H100-SXM")
    return get_gpu(text)


def _cluster(row) -> Fabric:
    k = constants()
    cl = k["clusters"]
    inter = k["inter"]
    g = row["gpu"].upper()
    bw = cl["dgx_h100"] if "H100" in g else (cl["mosaic_a100"] if "ROCE" in g else cl["selene_a100"])
    return Fabric(bw, inter["efficiency"], inter["latency_s"], cl["source"])


def _spec(row) -> ModelSpec | None:
    label = row["model"].strip()
    seq = _i(row["seq_len"])
    if label in PRESET_OF:
        return get_model(PRESET_OF[label]).with_seq(seq)
    L, h, a = _i(row["layers"]), _i(row["hidden"]), _i(row["heads"])
    if not (L and h and a):
        return None
    vm = re.search(r"vocab (\d+)", row.get("notes", ""))
    vocab = int(vm.group(1)) if vm else 51200
    modern = "Megatron-LM README 'Training Speed" in row["source"]
    return ModelSpec(name=label, layers=L, hidden=h, heads=a, ffn=4 * h, vocab=vocab, seq_len=seq or 2048,
                     ffn_type="gelu", bias=True, norm="layernorm", pos="rope" if modern else "learned", tied=not modern,
                     dropout=not modern)


def _framework(row):
    src = row["source"]
    if src.startswith("mosaicml"):
        return framework("fsdp")
    if "ZeRO-3" in row["model"]:
        return framework("deepspeed-2021")
    if src.startswith("Korthikanti"):
        return framework("megatron-2022")
    if src.startswith("Narayanan"):
        return framework("megatron-2021")
    if src.startswith("NVIDIA/NeMo"):
        return framework("nemo")
    return framework("modern")


def _recompute(text: str) -> list[str]:
    t = (text or "").lower()
    if t.startswith("full"):
        return ["full"]
    if t.startswith("selective"):
        return ["selective"]
    if t.startswith("none"):
        return ["none"]
    return ["none", "selective", "full"]


def _korthikanti_interleave(rows, label: str) -> int:
    """Table 3's interleaving as the rows' notes state it ('interleaved schedule m=3 for 175B/530B')."""
    for r in rows:
        mm = re.search(r"interleaved schedule m=(\d+) for ([\w/]+)", r.get("notes", ""))
        if mm and r["source"].startswith("Korthikanti"):
            sizes = mm.group(2).split("/")
            base = label.split()[0].replace("GPT-", "")
            return int(mm.group(1)) if base in sizes else 1
    return 1


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


def best_layout(model, gpu, gb, tp, pp, dp, cp, zero, recomputes, mbs_opts, vp_opts, sp, precision, fabric, fw,
                uneven=False):
    """The fastest fitting layout among the stated degrees and the unstated knobs (vectorised). `uneven`:
    the stack splits layers unevenly over the virtual stages (Llama 3 §3.3.2); Megatron-LM needs L % (p·v) == 0."""
    cand = []
    for rc in recomputes:
        for b in mbs_opts:
            if gb % (dp * b):
                continue
            m = gb // (dp * b)
            for v in vp_opts:
                if v > 1 and (pp == 1 or m % pp or (model.layers % (pp * v) and not uneven)):
                    continue
                cand.append(Layout(tp=tp, pp=pp, dp=dp, cp=cp, vp=v, mbs=b, recompute=rc, sp=sp and tp > 1, zero=zero))
    if not cand:
        return None, None
    arrs = {k: np.concatenate([c.arrays()[k] for c in cand]) for k in cand[0].arrays()}
    res = evaluate(model, gpu, arrs, gb, precision, fabric, fw)
    st = np.where(res["fits"], res["step_time_s"], np.inf)
    i = int(np.argmin(st))
    if not np.isfinite(st[i]):
        i = int(np.argmin(res["step_time_s"]))
    return cand[i], result_dict(_pick(res, i), cand[i])


def _table(name: str, rows: list[dict], note: str = "") -> dict:
    errs = [abs(r["error_pct"]) for r in rows if r.get("error_pct") is not None]
    return {"name": name, "note": note, "rows": rows,
            "mean_abs_error_pct": float(np.mean(errs)) if errs else None,
            "max_abs_error_pct": float(np.max(errs)) if errs else None}


def _err(pred: float, pub: float) -> float:
    return (pred / pub - 1.0) * 100.0


def _eq3_flops(model, gb) -> float:
    """Narayanan et al. 2021 eq. 3: 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) (counts recomputation)."""
    s, L, h, V = model.seq_len, model.layers, model.hidden, model.vocab
    return 96.0 * gb * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h))


@cache
def run() -> dict:
    rows = load_csv("validation/throughput.csv")
    groups: dict[str, list] = {}
    for row in rows:
        src = row["source"]
        model = _spec(row)
        gpu = _gpu(row["gpu"])
        fab = _cluster(row)
        fw = _framework(row)
        n = _i(row["gpu_count"])
        tp, pp = _i(row["tp"]) or 1, _i(row["pp"]) or 1
        dp = _i(row["dp"]) or n // (tp * pp)
        gb = _i(row["global_batch"])
        mbs = _i(row["micro_batch"])
        notes = row.get("notes", "")
        cpm = re.search(r"CP=(\d+)", notes)
        vpm = re.search(r"VP=(\d+)", notes)
        cp = int(cpm.group(1)) if cpm else 1
        precision = "fp8" if row["precision"].strip().upper() == "FP8" else "bf16"
        zero = 3 if ("ZeRO-3" in row["model"] or "FSDP" in row["dp"]) else (0 if fw.name.startswith("megatron-20") else 1)
        if cp > 1 and n // (tp * pp) == dp * cp:
            pass
        elif cp > 1:
            dp = n // (tp * pp * cp)
        if src.startswith("Korthikanti"):
            key = "Korthikanti et al. 2022 Table 5 (step time, A100, Megatron)" if dp == 1 else \
                  "Korthikanti et al. 2022 §6.3 (530B with 8-way data parallelism, step time)"
        elif src.startswith("Narayanan") and "Table 1" in src:
            key = "Narayanan et al. 2021 Table 1 (TFLOPS per GPU, eq. 3 hardware FLOPs)"
        elif src.startswith("Narayanan"):
            key = "Narayanan et al. 2021 Table 2 (GPT-3 175B / 530B, PTD vs ZeRO-3, TFLOPS per GPU)"
        elif src.startswith("NVIDIA/Megatron-LM"):
            key = "Megatron-LM README 2024 H100 weak scaling (model TFLOPS per GPU)"
        elif src.startswith("NVIDIA/NeMo"):
            key = "NeMo 24.07 H100 FP8 (tokens/s per GPU)"
        else:
            key = "MosaicML llm-foundry FSDP (tokens/s per GPU)"
        out = {"model": row["model"], "gpu": gpu.name, "gpus": n, "tp": tp, "pp": pp, "dp": dp, "cp": cp,
               "global_batch": gb}
        if model is None:
            out.update(published=None, predicted=None, error_pct=None, skipped="architecture not given in the source row")
            groups.setdefault(key, []).append(out)
            continue
        if tp * pp * dp * cp != n:
            out.update(published=None, predicted=None, error_pct=None, skipped="degrees do not multiply to the card count")
            groups.setdefault(key, []).append(out)
            continue
        rcs = _recompute(row["recompute"])
        sp = "+ sequence parallel" in row["recompute"] or not fw.name.startswith("megatron-20")
        vp_opts = [int(vpm.group(1))] if vpm else ([1] if "(baseline)" in row["model"] else [1, 2, 3, 4, 5, 6, 7, 8])
        if src.startswith("Korthikanti"):
            vp_opts = [_korthikanti_interleave(rows, row["model"])]
        mbs_opts = [mbs] if mbs else [1, 2, 4, 8, 16]
        lay, res = best_layout(model, gpu, gb, tp, pp, dp, cp, zero, rcs, mbs_opts, vp_opts, sp, precision, fab, fw)
        if res is None:
            out.update(published=None, predicted=None, error_pct=None, skipped="no layout divides the batch")
            groups.setdefault(key, []).append(out)
            continue
        out["layout"] = lay.to_dict()
        out["fits"] = res["fits"]
        out["framework"] = fw.name
        if key.startswith("Korthikanti"):
            pub, pred, unit = _f(row["step_time_s"]), res["step_time_s"], "s per step"
        elif key.startswith("Narayanan"):
            pub = _f(row["achieved_tflops_per_gpu"])
            pred = _eq3_flops(model, gb) / res["step_time_s"] / n / 1e12
            unit = "TFLOPS per GPU (eq. 3)"
        elif key.startswith("Megatron-LM"):
            pub, pred, unit = _f(row["achieved_tflops_per_gpu"]), res["tflops_per_gpu"], "model TFLOPS per GPU"
        else:
            pub, pred, unit = _f(row["tokens_per_sec_per_gpu"]), res["tokens_per_s_per_gpu"], "tokens/s per GPU"
        out.update(published=pub, predicted=pred, unit=unit, error_pct=_err(pred, pub), mfu=res["mfu"],
                   memory_gb_per_gpu=res["memory_gb_per_gpu"], step_time_s=res["step_time_s"],
                   breakdown=res["breakdown"])
        groups.setdefault(key, []).append(out)
    order = sorted(groups, key=lambda k: (not k.startswith("Korthikanti et al. 2022 Table 5"),
                                          not k.startswith("Narayanan et al. 2021 Table 1"), k))
    tables = [_table(k, groups[k]) for k in order]
    tables.extend(layouts_tables())
    tables.append(_memory_table())
    tables.append(wholerun_table())
    return {"tables": tables, "constants": "kashu/data/perf.toml"}


LAYOUT_TABLES = {
    "llama3-405b": "Llama 3 405B Table 4 (8,192-16,384 H100, model TFLOPS per GPU)",
    "torchtitan-a100": "torchtitan FSDP2 on 64 A100 (tokens/s per GPU)",
    "torchtitan-h100": "torchtitan FSDP2 Llama 3.1 8B on H100 500 W (tokens/s per GPU)",
    "bloom-a100": "BLOOM-176B on 384 A100 (Megatron-DeepSpeed, hardware TFLOPS per GPU)",
}


def layouts_tables() -> list[dict]:
    """Runs with their layout stated per column (validation/layouts.csv): presets, the row's framework
    profile and fabric; unstated knobs (micro-batch, interleaving, recomputation) searched as above."""
    groups: dict[str, list] = {}
    for row in load_csv("validation/layouts.csv"):
        model = get_model(row["model"]).with_seq(int(row["seq_len"]))
        gpu = get_gpu(row["gpu"])
        k = constants()["inter"]
        fab = Fabric(float(row["inter_bytes_per_s_per_gpu"]), k["efficiency"], k["latency_s"], row["notes"])
        fw = framework(row["framework"])
        n, tp, pp, dp, cp = (int(row[c]) for c in ("gpus", "tp", "pp", "dp", "cp"))
        gb = int(row["global_batch"])
        mbs_opts = [int(row["mbs"])] if row["mbs"] else [1, 2, 4]
        vp_opts = [int(row["vp"])] if row["vp"] else [1, 2, 3, 4, 5, 6, 7, 8]
        lay, res = best_layout(model, gpu, gb, tp, pp, dp, cp, int(row["zero"]), _recompute(row["recompute"]),
                               mbs_opts, vp_opts, tp > 1 and "no sequence parallel" not in row["notes"], row["precision"], fab, fw,
                               uneven="uneven" in row["notes"])
        metric = row["metric"]
        pred = {"model_tflops_per_gpu": res["tflops_per_gpu"],
                "hardware_tflops_per_gpu": res["hfu"] * gpu.peak_flops_for(row["precision"]) / 1e12,
                }.get(metric, res["tokens_per_s_per_gpu"])
        pub = float(row["published"])
        groups.setdefault(row["table"], []).append({
            "model": row["model"], "gpu": gpu.name, "gpus": n, "tp": tp, "pp": pp, "dp": dp, "cp": cp,
            "global_batch": gb, "layout": lay.to_dict(), "fits": res["fits"], "framework": fw.name,
            "published": pub, "predicted": pred, "unit": metric.replace("_", " "), "error_pct": _err(pred, pub),
            "mfu": res["mfu"], "memory_gb_per_gpu": res["memory_gb_per_gpu"], "step_time_s": res["step_time_s"],
            "breakdown": res["breakdown"], "source": row["source"], "convention": row["convention"]})
    return [_table(LAYOUT_TABLES.get(k, k), rows) for k, rows in groups.items()]


def wholerun_table() -> dict:
    """Whole-run card-hours of published trainings through the planner path (preset + tokens + card + count):
    the cards the plan holds × its days, i.e. steady-state card-hours / (scaling × goodput)."""
    from .planner import PlanRequest, plan

    rows = []
    for row in load_csv("validation/wholerun.csv"):
        p = plan(PlanRequest(model=row["model"], tokens=row["tokens"], gpu=row["gpu"], gpus=int(row["gpus"]),
                             precision=row["precision"], framework=row.get("framework") or "modern"))
        pred = p.gpus_training * p.days * 24.0
        pub = float(row["published_card_hours"])
        lay = p.layout or {}
        rows.append({"model": row["model"], "gpu": p.gpu.name, "gpus": int(row["gpus"]),
                     "gpus_published": row["gpus_published"] == "yes", "published": pub, "predicted": pred,
                     "unit": "card-hours (whole run)", "error_pct": _err(pred, pub), "mfu": p.mfu,
                     "goodput": p.goodput, "steady_card_hours": p.gpu_hours,
                     "layout": {k: lay.get(k) for k in ("tp", "pp", "dp", "ep", "vp", "mbs", "recompute", "zero")},
                     "source": row["source"], "notes": row["notes"]})
    return _table("Whole-run card-hours (planner path: preset, tokens, card, card count)", rows,
                  "predicted = cards × planned days × 24 (steady-state step time ÷ failure goodput); "
                  "card counts not published are assumed (see notes)")


def _memory_table() -> dict:
    from .memory import memory_per_card

    rows = []
    gib = 2.0**30
    k = load_toml("perf.toml")["memory"]
    for row in load_csv("validation/memory.csv"):
        L, h, a = int(row["layers"]), int(row["hidden"]), int(row["heads"])
        model = ModelSpec(name=row["model"], layers=L, hidden=h, heads=a, ffn=int(row["ffn"]), vocab=51200,
                          seq_len=int(row["seq_len"]), ffn_type="gelu", bias=True, norm="layernorm", pos="learned",
                          tied=True, dropout=True)
        gpu = _gpu(row["gpu"])
        rc = row["recompute_mode"].strip()
        lay = Layout(tp=int(row["tp"]), pp=int(row["pp"]), dp=int(row["dp"]), vp=int(row["pipeline_interleaving"]),
                     mbs=int(row["micro_batch"]), recompute=rc if rc in RECOMPUTE else "none",
                     sp=row["sequence_parallel"].strip() == "yes", zero=0)
        m = int(row["global_batch"]) // (lay.dp * lay.mbs)
        mem = _pick(memory_per_card(model, gpu, lay.arrays(), m, "bf16", False))
        pub_states = float(row["params_and_optimizer_GiB_per_gpu"])
        pub_act = float(row["activations_GiB_per_gpu"])
        pred_states = (mem["weights"] + mem["gradients"] + mem["optimizer"]) / gib
        pred_act = mem["activations"] / gib
        pub, pred = pub_states + pub_act, pred_states + pred_act
        rows.append({"model": row["model"], "recompute": rc, "sp": lay.sp, "published": pub, "predicted": pred,
                     "unit": "GiB per GPU (weights+grads+optimizer + activations, no framework overhead)",
                     "error_pct": _err(pred, pub),
                     "states_gib": {"published": pub_states, "predicted": pred_states},
                     "activations_gib": {"published": pub_act, "predicted": pred_act}})
    return _table("Korthikanti et al. 2022 Figure 1 (memory per GPU)", rows,
                  f"framework overhead ({k['framework_overhead_bytes'] / 1e9:g} GB) left out, as the figure does")
