"""Memory per card of a parallel layout: weights, gradients, optimizer states, activations, overhead.

Vectorised: every layout field may be a NumPy array (the search evaluates thousands at once).
Activations follow Korthikanti et al. 2022 (arXiv 2205.05198) §4, Table 2, generalised from their
inventory to GQA, SwiGLU, MoE, context parallelism and fused (flash) attention:
  per layer, 16-bit:  s·b·h·(34 + 5·a·s/h) without parallelism; of the 34, 10 stay replicated across
  tensor-parallel ranks (layer-norm inputs 4, QKV and MLP inputs 4, dropout masks 2) unless sequence
  parallelism shards them; 24 and the 5·a·s²·b score term are split by t.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from .data import load_toml


@cache
def constants() -> dict:
    return load_toml("perf.toml")


def stage_layers(L, p, v=1.0):
    """Layers on the busiest card: ⌈L/(p·v)⌉·v; uneven splits put the remainder on fewer stages
    (Llama 3 405B: 126 layers over 16 stages, Dubey et al. 2024 §3.3.2; DeepSeek-V3: 61 over PP16)."""
    v = np.asarray(v, dtype=float)
    return np.ceil(L / (np.asarray(p, dtype=float) * v) - 1e-9) * v


def stage_params(model, lay: dict) -> dict[str, np.ndarray]:
    """Parameters held by one card of the first and the last pipeline stage (after TP/EP sharding)."""
    t, p, ep = lay["tp"], lay["pp"], lay["ep"]
    L = model.layers
    dense_layer = model.layer_params(False)
    if model.is_moe:
        moe_total = model.layer_params(True)
        routed = model.experts * model.mlp_params(model.expert_ffn)
        moe_shared = moe_total - routed
        frac_moe = model.moe_layers / L
    else:
        routed = moe_shared = 0
        frac_moe = 0.0
    per_layer_dense = (1 - frac_moe) * dense_layer + frac_moe * moe_shared  # non-expert part, averaged
    per_layer_expert = frac_moe * routed
    layers_stage = stage_layers(L, p, lay.get("vp", 1.0))
    dense = layers_stage * per_layer_dense / t
    expert = layers_stage * per_layer_expert / (t * ep)
    emb_in = model.vocab * model.hidden + (model.seq_len * model.hidden if model.pos == "learned" else 0)
    emb_out = model.vocab * model.hidden  # untied: own matrix; tied with p > 1: a copy on the last stage
    first_extra = emb_in / t
    last_extra = np.where(p > 1, emb_out / t, 0.0) if model.tied else emb_out / t + 0.0 * p
    return {"first_dense": dense + first_extra + np.where(p == 1, last_extra, 0.0), "last_dense": dense + last_extra,
            "expert": expert, "layer_full": (dense_layer if not model.is_moe else model.layer_params(True)) / (t * 1.0)}


def activation_per_layer(model, lay: dict, flash, precision: str = "bf16") -> dict[str, np.ndarray]:
    """Bytes of activations one layer keeps for one micro-batch on one card (Korthikanti 2022 Table 2, generalised).

    FP8: Transformer Engine's Linear/LayerNormLinear save their input for the weight gradient as the FP8
    cast (1 byte, not 2): the QKV, projection, fc1 and fc2 inputs (TE docs, 'FP8 ... saved tensors')."""
    t, c, b, sp, rc = lay["tp"], lay["cp"], lay["mbs"], lay["sp"], lay["rc"]
    h, s = model.hidden, model.seq_len
    T = b * s / c  # tokens per card per micro-batch
    a = model.heads
    drop = 1.0 if model.dropout else 0.0
    shard_repl = np.where((sp > 0) & (t > 1), t, 1.0)
    # replicated part: two norm inputs (4), QKV and MLP inputs (4), dropout masks (2) — Korthikanti §4.1
    f8 = 1.0 if precision == "fp8" else 0.0  # bytes saved per element of a linear input under FP8
    repl = T * h * (8 - 2 * f8 + 2 * drop) / shard_repl
    # split by t: Q, K, V, attention output (proj input) and the MLP's intermediate tensors
    qkv = 2 * T * (model.qk_dim + 2 * (model.kv_dim if not model.mla else model.heads * model.qk_nope_head_dim)
                   + model.q_dim) / t - f8 * T * model.q_dim / t
    if model.is_moe:
        f_e = model.expert_ffn
        per_tok = (3 if model.ffn_type == "swiglu" else 2) * 2 * f_e
        frac_moe = model.moe_layers / model.layers
        mlp_moe = T * (model.top_k + model.shared_experts) * per_tok / t + 2 * 2 * T * model.top_k * h / t
        mlp_dense = T * (6 if model.ffn_type == "swiglu" else 4) * model.ffn / t
        mlp = frac_moe * mlp_moe + (1 - frac_moe) * mlp_dense
    else:
        mlp = T * ((6 if model.ffn_type == "swiglu" else 4) - f8) * model.ffn / t
    # score term: softmax output 2, dropout mask 1, dropout output 2 bytes per score (5·a·s²·b)
    score = (2 + 3 * drop) * b * a * (s / c) * s / t
    score = np.where(flash, 4.0 * b * a * s / c / t, score)  # flash: only the log-sum-exp, fp32
    full = repl + qkv + mlp + np.where(rc >= 1, np.where(flash, score, 0.0), score)
    inp = 2 * T * h / shard_repl
    kept = np.where(rc == 2, inp, full)
    return {"kept": kept, "working": full}


def memory_per_card(model, gpu, lay: dict, m, precision: str = "bf16", flash=False) -> dict[str, np.ndarray]:
    """Bytes per card, worst pipeline stage. `m` = micro-batches per step per pipeline."""
    k = constants()["memory"]
    t, p, d, c, v, zero, ep = lay["tp"], lay["pp"], lay["dp"], lay["cp"], lay["vp"], lay["zero"], lay["ep"]
    sp_ = stage_params(model, lay)
    wb = k["weight_bytes"] + (k["fp8_extra_weight_bytes"] if precision == "fp8" else 0)
    gb, ob = k["grad_bytes"], k["optimizer_bytes"]
    dshard = d * c  # ZeRO shards over the data-parallel (and context-parallel) ranks
    eshard = np.maximum(dshard / ep, 1.0)

    def states(n_dense, n_exp):
        def one(n, shard):
            w = wb * n / np.where(zero >= 3, shard, 1.0)
            g = gb * n / np.where(zero >= 2, shard, 1.0)
            o = ob * n / np.where(zero >= 1, shard, 1.0)
            return w, g, o
        w1, g1, o1 = one(n_dense, dshard)
        w2, g2, o2 = one(n_exp, eshard)
        return w1 + w2, g1 + g2, o1 + o2

    wf, gf, of = states(sp_["first_dense"], sp_["expert"])
    wl, gl, ol = states(sp_["last_dense"], sp_["expert"])
    act = activation_per_layer(model, lay, flash, precision)
    layers_stage = stage_layers(model.layers, p, v)
    # 1F1B: the first stage holds min(p, m) micro-batches; interleaving adds (p-1)/(p·v) (Korthikanti §4.2.3)
    inflight = np.minimum(p, m) * np.where(v > 1, 1 + (p - 1) / (p * v), 1.0)
    act_first = act["kept"] * layers_stage * inflight
    # full recomputation re-materialises one layer at a time during the backward pass
    act_first = act_first + np.where(lay["rc"] == 2, act["working"], 0.0)
    T = lay["mbs"] * model.seq_len / c
    logits = 6.0 * T * model.vocab / t  # bf16 logits + fp32 copy for the cross-entropy (one micro-batch)
    act_last = act["kept"] * layers_stage + np.where(lay["rc"] == 2, act["working"], 0.0) + logits
    zero3_buf = np.where(zero >= 3, 2 * 2.0 * sp_["layer_full"], 0.0)  # gathered weights of ~2 layers in flight
    overhead = k["framework_overhead_bytes"]
    first = wf + gf + of + act_first + zero3_buf + overhead
    last = wl + gl + ol + act_last + zero3_buf + overhead
    use_first = first >= last
    pick = lambda a1, a2: np.where(use_first, a1, a2)  # noqa: E731
    total = np.maximum(first, last)
    return {
        "weights": pick(wf, wl), "gradients": pick(gf, gl), "optimizer": pick(of, ol),
        "activations": pick(act_first, act_last), "zero3_buffers": zero3_buf,
        "overhead": np.broadcast_to(np.asarray(overhead, dtype=float), np.shape(total)), "total": total,
        "capacity": np.full(np.shape(total), gpu.memory_bytes * (1 - k["headroom"])),
    }


def fits(mem: dict) -> np.ndarray:
    """A layout fits when it leaves the stated headroom of the card's memory (perf.toml [memory].headroom)."""
    return mem["total"] <= mem["capacity"]
