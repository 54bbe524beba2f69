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


def end_stage_layers(L, p, v=1.0):
    """Layers on the first and on the last card when the split is uneven: the stages that also carry the
    embedding and the loss give up the missing layers, half each (Llama 3 405B: 126 layers over 16 stages,
    'we reduce one Transformer layer each from the first and the last stages', Dubey et al. 2024 §3.3.2;
    Megatron-Core --decoder-first/last-pipeline-num-layers). Even splits: every card the same."""
    v = np.asarray(v, dtype=float)
    busy = stage_layers(L, p, v)
    deficit = np.maximum(np.asarray(p, dtype=float) * busy - L, 0.0)
    first = np.maximum(busy - np.ceil(deficit / 2.0), np.minimum(v, busy))
    last = np.maximum(busy - np.floor(deficit / 2.0), np.minimum(v, busy))
    return first, last


def stage_params(model, lay: dict, layers_first=None, layers_last=None) -> dict[str, np.ndarray]:
    """Parameters held by one card of the first and the last pipeline stage (after TP/EP sharding);
    `mid_dense`: a middle stage (no embedding). Layer counts default to the busiest card's."""
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
    lf = layers_stage if layers_first is None else layers_first
    ll = layers_stage if layers_last is None else layers_last
    dense = layers_stage * per_layer_dense / t
    expert = layers_stage * per_layer_expert / (t * ep)
    emb_in = model.vocab * model.hidden + (model.seq_len * model.hidden if model.pos == "learned" else 0)
    emb_out = model.vocab * model.hidden  # untied: own matrix; tied with p > 1: a copy on the last stage
    first_extra = emb_in / t
    last_extra = np.where(p > 1, emb_out / t, 0.0) if model.tied else emb_out / t + 0.0 * p
    return {"first_dense": lf * per_layer_dense / t + first_extra + np.where(p == 1, last_extra, 0.0),
            "last_dense": ll * per_layer_dense / t + last_extra, "mid_dense": dense,
            "expert": expert, "layer_full": (dense_layer if not model.is_moe else model.layer_params(True)) / (t * 1.0)}


def in_flight(p, v, m, rank):
    """Micro-batches whose activations pipeline rank `rank` holds at its peak, in units of its whole stage.

    1F1B (Narayanan et al. 2021 §2.2.1): rank r runs p − r warm-up forwards, so it holds min(p − r, m).
    Interleaved (Megatron-Core schedules.py): 2·(p − r − 1) + (v − 1)·p warm-up chunks plus the one in
    steady state, each 1/v of the stage: (v·p + p − 2r − 1)/v; rank 0: p·(1 + (p − 1)/(p·v)) (Korthikanti
    §4.2.3). Never more than the m micro-batches of the step (m = p: every chunk's forward runs first)."""
    p = np.asarray(p, dtype=float)
    v = np.asarray(v, dtype=float)
    r = np.minimum(np.asarray(rank, dtype=float), p - 1)
    inter = (v * p + p - 2 * r - 1) / v
    plain = p - r
    return np.minimum(np.where(v > 1, inter, plain), m)


def activation_per_layer(model, lay: dict, flash, precision: str = "bf16", selective_op=False) -> dict[str, np.ndarray]:
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
    if selective_op:
        # PyTorch per-op selective checkpointing (torchtitan 'selective op AC', torchtitan/models/llama/
        # parallelize_llama.py _save_list): keeps the block input, the attention output (+ log-sum-exp) and
        # every second matmul output; norms, RoPE and activations are recomputed
        mm = (model.q_dim + 2 * model.kv_dim + 2 * h
              + (3 if model.ffn_type == "swiglu" else 2) * model.ffn) / t
        sel = inp + 2 * T * model.q_dim / t + 4.0 * b * a * s / c / t + 0.5 * 2 * T * mm
        full = np.where(rc == 1, sel, full)
    kept = np.where(rc == 2, inp, full)
    return {"kept": kept, "working": full}


def memory_per_card(model, gpu, lay: dict, m, precision: str = "bf16", flash=False,
                    grad_bytes=None, selective_op=False) -> dict[str, np.ndarray]:
    """Bytes per card, worst pipeline stage. `m` = micro-batches per step per pipeline; `grad_bytes`: the
    stack's gradient buffer per parameter (default perf.toml [memory].grad_bytes, fp32 main grads)."""
    k = constants()["memory"]
    t, p, d, c, v, zero, ep = lay["tp"], lay["pp"], lay["dp"], lay["cp"], lay["vp"], lay["zero"], lay["ep"]
    wb = k["weight_bytes"] + (k["fp8_extra_weight_bytes"] if precision == "fp8" else 0)
    gb, ob = grad_bytes or k["grad_bytes"], k["optimizer_bytes"]
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

    act = activation_per_layer(model, lay, flash, precision, selective_op)
    busy = stage_layers(model.layers, p, v)
    lf, ll = end_stage_layers(model.layers, p, v)
    lf = np.where(p > 1, lf, busy)
    sp_ = stage_params(model, lay, lf, np.where(p > 1, ll, busy))
    wf, gf, of = states(sp_["first_dense"], sp_["expert"])
    wl, gl, ol = states(sp_["last_dense"], sp_["expert"])
    wm, gm, om = states(sp_["mid_dense"], sp_["expert"])
    # full recomputation re-materialises one layer at a time during the backward pass
    rematerialised = np.where(lay["rc"] == 2, act["working"], 0.0)
    act_first = act["kept"] * lf * in_flight(p, v, m, 0) + rematerialised
    # rank 1 holds a whole stage and one micro-batch fewer than rank 0 (only a middle stage when p > 2):
    # with an uneven split it is the busiest in memory (Llama 3 405B: 8 layers x 15 vs 7 x 16)
    act_mid = act["kept"] * busy * in_flight(p, v, m, 1) + rematerialised
    T = lay["mbs"] * model.seq_len / c
    logits = 6.0 * T * model.vocab / t  # bf16 logits + fp32 copy for the cross-entropy (one micro-batch)
    act_last = act["kept"] * np.where(p > 1, ll, busy) * in_flight(p, v, m, p - 1) + rematerialised + logits
    zero3_buf = np.where(zero >= 3, 2 * 2.0 * sp_["layer_full"], 0.0)  # gathered weights of ~2 layers in flight
    overhead = k["framework_overhead_bytes"]
    first = wf + gf + of + act_first + zero3_buf + overhead
    mid = np.where(p > 2, wm + gm + om + act_mid + zero3_buf + overhead, 0.0)
    last = wl + gl + ol + act_last + zero3_buf + overhead
    use_mid = mid > np.maximum(first, last)
    wf, gf, of, act_first = (np.where(use_mid, x1, x0) for x0, x1 in ((wf, wm), (gf, gm), (of, om), (act_first, act_mid)))
    first = np.maximum(first, mid)
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
