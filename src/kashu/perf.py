"""Step time, throughput and MFU of a parallel layout (vectorised over layouts).

Per micro-batch and layer, on one card:
  GEMMs at a shape-dependent fraction of dense peak (perf.toml [gemm]),
  attention scores as batched GEMMs, or fused (flash) attention at [attention].flash_fraction,
  memory-bound kernels (norms, softmax, dropout, activations, residuals) at HBM bandwidth,
  tensor-parallel all-reduce / all-gather+reduce-scatter over the intra-node link (nccl-tests busbw),
  MoE all-to-all and context-parallel K/V exchange.
Per step: 1F1B pipeline with bubble (p-1)/(v·m) (Narayanan et al. 2021 §2.2), point-to-point sends,
data-parallel gradient reduction (all-reduce, or reduce-scatter + all-gather with ZeRO), overlapped
with the last backward where the framework overlaps it, and the Adam update at HBM bandwidth.
Overlapped communication is not free: its hidden time × perf.toml [overlap].contention (SMs and HBM
bandwidth held by NCCL kernels) is added to the step.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import cache

import numpy as np

from .collectives import collective_time
from .data import load_toml
from .errors import KashuError
from .layout import Layout, check_layout
from .memory import fits, memory_per_card


@dataclass(frozen=True)
class Fabric:
    """Inter-node fabric as one card sees it (the network module passes its own figures in)."""

    bytes_per_s_per_gpu: float = 50.0e9
    efficiency: float = 0.74
    latency_s: float = 3.0e-5
    source: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Framework:
    name: str
    flash: bool
    tp_overlap: float
    dp_overlap: float  # fraction of the overlap window the gradient/parameter traffic really hides behind
    grad_reduce_bytes: float
    step_overhead_s: float
    kernel_efficiency: float = 1.0  # the stack's GEMM/kernel speed relative to the reference stack (perf.toml)
    z3_pieces_per_layer: float = 1.0  # separate parameter gathers per layer under ZeRO-3/FSDP
    ep_overlap: float = 0.0  # share of the MoE all-to-all the schedule hides behind another micro-batch's compute
    layer_overhead_s: float = 0.0  # fixed host/launch time per layer per micro-batch pass (fwd + bwd)
    pp_overlap: float = 0.0  # share of the stage-to-stage sends hidden behind the next chunk's compute
    selective_op: bool = False  # "selective" = PyTorch per-op checkpointing (torchtitan), not Megatron's attention-only
    grad_memory_bytes: float = 0.0  # bytes per parameter of the gradient buffer; 0: perf.toml [memory].grad_bytes
    source: str = ""


@cache
def constants() -> dict:
    return load_toml("perf.toml")


def default_fabric() -> Fabric:
    k = constants()["inter"]
    return Fabric(k["bytes_per_s_per_gpu"], k["efficiency"], k["latency_s"], k["source"])


def check_framework(name: str) -> str:
    """A framework profile's name (data/perf.toml [framework.*]), or a KashuError listing them."""
    names = ", ".join(constants()["framework"])
    if name not in constants()["framework"]:
        raise KashuError(f"--framework {name!r} must be one of {names}", f"--framework {name!r} 应为 {names} 之一", "framework")
    return name


def framework(name: str = "modern") -> Framework:
    f = dict(constants()["framework"][check_framework(name)])
    f.pop("as_of", None)
    return Framework(name=name, **f)


def _by_family(gpu, table: dict, default: float) -> float:
    """The entry of `table` whose key is the longest prefix of the card's catalog name."""
    best = ("", default)
    for prefix, frac in table.items():
        if gpu.name.upper().startswith(prefix.upper()) and len(prefix) > len(best[0]):
            best = (prefix, frac)
    return float(best[1])


def gemm_peak_fraction(gpu) -> float:
    """Measured large-GEMM fraction of dense peak for the card's family (perf.toml [gemm.peak_fraction])."""
    g = constants()["gemm"]
    return _by_family(gpu, g["peak_fraction"], g["peak_fraction_default"])


def sustained_fraction(gpu) -> float:
    """Clock held under the power cap in a training loop vs the clock the GEMM benchmark ran at."""
    g = constants()["gemm"]
    return _by_family(gpu, g["sustained"], g["sustained_fraction"])


def contention() -> float:
    """Share of overlapped communication's hidden time that still lands on the step (perf.toml [overlap]):
    NCCL kernels hold SMs and HBM bandwidth while they run, so the compute they hide behind slows down."""
    return float(constants()["overlap"]["contention"])


def tp_overlap_support(gpu) -> float:
    """Share of a profile's tp_overlap the card's stack realises (perf.toml [tp_comm_overlap]): the
    userbuffers comm+GEMM overlap ships tuned for Hopper and later only, so 0 on Ampere."""
    k = constants()["tp_comm_overlap"]
    return _by_family(gpu, k["family"], k["default"])


class _Card:
    """The card's rates in SI units, resolved once per evaluation."""

    def __init__(self, gpu, precision: str, fabric: Fabric, kernel_efficiency: float = 1.0):
        k = constants()
        self.gpu = gpu
        self.bf16 = gpu.peak_flops
        self.frac = gemm_peak_fraction(gpu) * sustained_fraction(gpu) * kernel_efficiency
        self.bwd = float(k["gemm"]["backward_factor"])
        self.half = float(k["gemm"]["half_dim"])
        if precision == "fp8":
            self.gemm_peak = gpu.peak_flops_for("fp8") * k["fp8"]["relative_efficiency"]
        else:
            self.gemm_peak = self.bf16
        att = k["attention"]
        self.flash = self.bf16 * _by_family(gpu, att["family"], att["flash_fraction"]) * kernel_efficiency
        self.hbm = gpu.hbm_bytes_per_s * k["hbm"]["fraction"] * kernel_efficiency
        self.chunk = float(k["inter"]["channel_chunk_bytes"])
        self.intra = gpu.intra_link_bytes_per_s_one_way * k["intra"]["busbw_fraction"]
        self.intra_lat = k["intra"]["latency_s"]
        self.inter = fabric.bytes_per_s_per_gpu * fabric.efficiency
        self.inter_lat = fabric.latency_s
        self.node = gpu.gpus_per_node

    def eff(self, *dims):
        """Fraction of peak for a GEMM of these dimensions: peak_fraction · Π x/(x + half_dim)."""
        e = self.frac
        for x in dims:
            e = e * (x / (x + self.half))
        return e

    def gemm(self, M, N, K, count=1.0, peak=None):
        """Seconds for `count` GEMMs of M×K by K×N (2·M·N·K FLOPs each)."""
        return count * 2.0 * M * N * K / ((peak or self.gemm_peak) * self.eff(M, N, K))

    def link(self, span, stride=None, per_rank_bytes=None):
        """Bus bandwidth and latency of a group spanning `span` ranks, members `stride` ranks apart.

        Inside a node: the NVLink busbw. Across nodes NCCL runs one ring/tree channel per NIC, so the
        k = node/stride members a node holds share its k NICs and the collective's busbw is k × the
        per-card fabric figure, capped by NVLink (NCCL multi-node all-reduce busbw ≈ per-node NIC
        aggregate: nccl-tests doc/PERFORMANCE.md; stas00/ml-engineering network chapter). NCCL only
        opens as many channels as the message fills (one ring step per channel moves at most
        NCCL_BUFFSIZE/NCCL_STEPS = 512 KiB), so small per-rank pieces ride one NIC."""
        inside = span <= self.node
        stride = span if stride is None else stride
        k = np.maximum(1.0, np.floor(self.node / np.maximum(stride, 1.0)))
        if per_rank_bytes is not None:
            k = np.clip(np.asarray(per_rank_bytes, dtype=float) / self.chunk, 1.0, k)
        across = np.minimum(self.intra, k * self.inter)
        return np.where(inside, self.intra, across), np.where(inside, self.intra_lat, self.inter_lat)


def gbytes_of(fw) -> float:
    return float(fw.grad_reduce_bytes)


def model_flops_per_token(model) -> float:
    """6·N_matmul + 6·L·s·(d_qk + d_v)·heads: PaLM Appendix B (12·L·h·s for standard attention, non-causal).

    N_matmul is the active parameters that multiply activations: the input embedding (untied) and
    learned positions are table lookups, not matmuls, so they are left out (Kaplan et al. 2020 §2.1
    count the vocabulary only through the output projection; Megatron-LM's FLOP formula likewise)."""
    lookup = (0 if model.tied else model.vocab * model.hidden) + (model.seq_len * model.hidden if model.pos == "learned" else 0)
    return (6.0 * (model.n_active_params - lookup)
            + 6.0 * model.layers * model.seq_len * (model.qk_dim + model.q_dim))


def evaluate(model, gpu, lay: dict, global_batch: int, precision: str = "bf16", fabric: Fabric | None = None,
             fw: Framework | str = "modern") -> dict[str, np.ndarray]:
    """Everything about a batch of layouts (dict of equal-shape arrays; see Layout.arrays())."""
    fabric = fabric or default_fabric()
    fw = framework(fw) if isinstance(fw, str) else fw
    C = _Card(gpu, precision, fabric, fw.kernel_efficiency)
    t, p, d, c, ep, v, b = (np.asarray(lay[k], dtype=float) for k in ("tp", "pp", "dp", "cp", "ep", "vp", "mbs"))
    rc, sp, zero = (np.asarray(lay[k], dtype=float) for k in ("rc", "sp", "zero"))
    lay = {"tp": t, "pp": p, "dp": d, "cp": c, "ep": ep, "vp": v, "mbs": b, "rc": rc, "sp": sp, "zero": zero}
    m = global_batch / (d * b)
    h, s, a, L, V = model.hidden, model.seq_len, model.heads, model.layers, model.vocab
    T = b * s / c
    flash = fw.flash
    drop = 1.0 if model.dropout else 0.0
    fm = model.moe_layers / L
    sp_div = np.where((sp > 0) & (t > 1), t, 1.0)

    # ---- GEMMs of one layer, forward (Megatron's column/row-parallel split, Shoeybi et al. 2019 §3)
    if model.mla:
        qk_head = model.qk_nope_head_dim + model.qk_rope_head_dim
        g_attn = (C.gemm(T, model.q_lora_rank or 1, h) * (1 if model.q_lora_rank else 0)
                  + C.gemm(T, a * qk_head / t, model.q_lora_rank or h)
                  + C.gemm(T, model.kv_lora_rank + model.qk_rope_head_dim, h)
                  + C.gemm(T, a * (model.qk_nope_head_dim + model.v_head_dim) / t, model.kv_lora_rank)
                  + C.gemm(T, h, a * model.v_head_dim / t))
    else:
        g_attn = C.gemm(T, (model.q_dim + 2 * model.kv_dim) / t, h) + C.gemm(T, h, model.q_dim / t)

    def mlp(M, f, count=1.0):
        up = 2 * f if model.ffn_type == "swiglu" else f
        return C.gemm(M, up / t, h, count) + C.gemm(M, h, f / t, count)

    g_mlp = mlp(T, model.ffn)
    if model.is_moe:
        per_expert_tokens = T * model.top_k * ep / model.experts
        g_moe = (mlp(per_expert_tokens, model.expert_ffn, model.experts / ep) + C.gemm(T, model.experts, h)
                 + (mlp(T, model.expert_ffn * model.shared_experts) if model.shared_experts else 0.0))
        g_layer = g_attn + (1 - fm) * g_mlp + fm * g_moe
    else:
        g_layer = g_attn + g_mlp

    # ---- attention scores (QKᵀ and ·V): batched GEMMs, or one fused kernel
    dqk = model.qk_dim / a
    dv = model.q_dim / a
    heads_card = b * a / t
    if flash:
        att_flops = 2.0 * heads_card * (s / c) * s * (dqk + dv) * 0.5  # causal mask skips half (Dao 2023 §3)
        att_f = att_flops / C.flash
        att_b = 2.5 * att_f  # FA2 backward: 2.5x the forward matmuls (Dao 2023 §3.1.2)
    else:
        att_f = C.gemm(s / c, s, dqk, heads_card, peak=C.bf16) + C.gemm(s / c, dv, s, heads_card, peak=C.bf16)
        att_b = 2.0 * att_f

    # ---- memory-bound kernels, bytes moved in the forward pass (backward ≈ 2x: reads grads and saved inputs)
    th = T * h / sp_div
    mem_f = th * (8 + 2 * (6 + drop))  # 2 norms (r2+w2), 2 bias-dropout-add (r4+w2 [+mask 1])
    if model.pos == "rope":
        mem_f = mem_f + 4.0 * T * (model.qk_dim + model.kv_dim) / t
    act_bytes = 6.0 if model.ffn_type == "swiglu" else 4.0
    mem_mlp = act_bytes * T * model.ffn / t
    if model.is_moe:
        mem_moe = (act_bytes * T * (model.top_k + model.shared_experts) * model.expert_ffn / t
                   + 8.0 * T * model.top_k * h / t)  # activation + permute/unpermute
        mem_f = mem_f + (1 - fm) * mem_mlp + fm * mem_moe
    else:
        mem_f = mem_f + mem_mlp
    soft_f = 0.0 if flash else (4.0 + 5.0 * drop) * heads_card * (s / c) * s  # scale-mask-softmax + dropout
    mem_f = mem_f + soft_f
    t_mem_f = mem_f / C.hbm
    t_soft_f = soft_f / C.hbm

    # ---- tensor-parallel collectives: 2 all-reduce equivalents per layer per pass (Korthikanti §4.2.2)
    S = 2.0 * T * h
    bw_tp, lat_tp = C.link(t)
    ar = collective_time("all_reduce", S, t, bw_tp, lat_tp)
    tp_ov = fw.tp_overlap * tp_overlap_support(gpu)
    tp_pass = 2.0 * ar * (1.0 - tp_ov)
    # with sequence parallelism the backward pass all-gathers the layer inputs again for the weight
    # gradients (Korthikanti §4.2.2): one more all-reduce equivalent per layer
    tp_bwd = tp_pass + np.where((sp > 0) & (t > 1), ar * (1.0 - tp_ov), 0.0)
    tp_hid_f = 2.0 * ar * tp_ov
    tp_hid_b = tp_hid_f + np.where((sp > 0) & (t > 1), ar * tp_ov, 0.0)
    # MoE all-to-all: dispatch + combine per pass, group of ep ranks strided by t·c
    if model.is_moe:
        bw_ep, lat_ep = C.link(t * c * ep, t * c)
        a2a = collective_time("all_to_all", 2.0 * T * model.top_k * h / t, ep, bw_ep, lat_ep)
        ep_pass = fm * 2.0 * a2a
    else:
        ep_pass = 0.0 * t
    # context parallel: K and V of all c chunks gathered (ring), hidden behind the attention kernel
    bw_cp, lat_cp = C.link(t * c, t)
    kv_bytes = 2.0 * 2.0 * b * s * (model.kv_dim if not model.mla else a * (dqk + dv) / 2) / t
    cp_ag = collective_time("all_gather", kv_bytes, c, bw_cp, lat_cp)  # 0 when c == 1
    cp_f = np.maximum(cp_ag - att_f, 0.0)
    cp_b = np.maximum(2.0 * cp_ag - att_b, 0.0)

    # the schedule overlaps one micro-batch's dispatch/combine with another's compute (DeepSeek-V3 §3.2.1
    # DualPipe; Megatron-Core EP all-to-all overlap): the hidden share costs time only past the compute it hides behind
    comp_f = g_layer + att_f + t_mem_f
    comp_b = C.bwd * g_layer + att_b + 2.0 * t_mem_f
    hid = fw.ep_overlap * ep_pass
    ep_f = (ep_pass - hid) + np.maximum(hid - comp_f, 0.0)
    ep_b = (ep_pass - hid) + np.maximum(hid - comp_b, 0.0)
    # overlapped is not free: the hidden part of every overlapped collective (TP userbuffers, MoE
    # all-to-all, CP K/V ring) slows the compute it hides behind by `kappa` of its time (NCCL kernels
    # hold SMs and HBM bandwidth; perf.toml [overlap].contention, the figure kashu.network uses)
    kappa = contention()
    cont_f = kappa * (tp_hid_f + np.minimum(hid, comp_f) + np.minimum(cp_ag, att_f))
    cont_b = kappa * (tp_hid_b + np.minimum(hid, comp_b) + np.minimum(2.0 * cp_ag, att_b))
    # fixed time per layer and micro-batch that does not shrink with the work: kernel launches and
    # tails of ~10^2 small kernels, framework hooks (perf.toml [framework.*].layer_overhead_s); 1/3 fwd, 2/3 bwd
    f_l = comp_f + tp_pass + ep_f + cp_f + cont_f + fw.layer_overhead_s / 3.0
    b_l = comp_b + tp_bwd + ep_b + cp_b + cont_b + 2.0 * fw.layer_overhead_s / 3.0
    # selective: Megatron recomputes the attention scores (nothing with flash); torchtitan's per-op policy
    # re-runs every second matmul and the elementwise kernels of the forward pass
    sel = (0.5 * g_layer + t_mem_f) if fw.selective_op else (0.0 if flash else att_f + t_soft_f)
    r_l = np.where(rc == 2, f_l, np.where(rc == 1, sel, 0.0))
    t_layer = f_l + b_l + r_l

    # ---- first/last stage extras: logits GEMM + cross-entropy (fp32), embedding lookup
    logit = 3.0 * C.gemm(T, V / t, h) + (constants()["cross_entropy"]["bytes_per_logit"] * T * V / t) / C.hbm
    embed = (4.0 * T * h) / C.hbm
    from .memory import stage_layers

    Ls = stage_layers(L, p, v)  # layers on the busiest card (uneven splits: the remainder)
    body = Ls * t_layer
    t_max = body + np.where(p == 1, logit + embed, np.maximum(logit, embed))
    t_avg = body + (logit + embed) / p
    pipe_busy = m * t_max
    bubble = (p - 1) / v * t_avg  # Narayanan et al. 2021 §2.2.1: (p-1)/(v·m) of the ideal time
    # point-to-point activations between stages (scatter-gather across t with SP, Narayanan §4.1)
    bw_pp, lat_pp = C.link(t * c * d + 1)  # neighbouring stages sit t·c·d ranks apart
    bw_pp = np.where(t * c * d >= C.node, C.inter, C.intra)
    xfer = (2.0 * T * h / np.where(t > 1, t, 1.0)) / bw_pp + lat_pp
    # Megatron-Core --overlap-p2p-comm (interleaved schedule): sends/receives posted asynchronously and
    # waited on one chunk later, so only the share the profile does not hide (fw.pp_overlap) stays exposed
    p2p_all = np.where(p > 1, (2.0 * v * m + 2.0 * (p - 1)) * xfer, 0.0)
    pp_hid = p2p_all * np.where(v > 1, fw.pp_overlap, 0.0)
    p2p = p2p_all - pp_hid

    # ---- data-parallel gradient reduction over dp·cp ranks (ZeRO / distributed optimizer)
    from .memory import stage_params

    spar = stage_params(model, lay)
    n_dense = np.maximum(spar["first_dense"], spar["last_dense"])
    n_exp = spar["expert"]
    dsh = d * c
    esh = np.maximum(dsh / ep, 1.0)
    bw_dp, lat_dp = C.link(t * c * d, t * c, gbytes_of(fw) * n_dense / dsh)
    # ZeRO-3 / FSDP gathers one layer (one FSDP unit) at a time: small pieces per rank at large dp
    bw_z3, _ = C.link(t * c * d, t * c, 2.0 * spar["layer_full"] / (fw.z3_pieces_per_layer * dsh))
    gbytes = fw.grad_reduce_bytes

    def sync(n, g):
        allr = collective_time("all_reduce", gbytes * n, g, bw_dp, lat_dp)
        rs_ag = (collective_time("reduce_scatter", gbytes * n, g, bw_dp, lat_dp)
                 + collective_time("all_gather", 2.0 * n, g, bw_dp, lat_dp))
        return np.where(zero == 0, allr, np.where(zero <= 2, rs_ag, 0.0))

    t_dp = sync(n_dense, dsh) + sync(n_exp, esh)
    window = Ls * (b_l + f_l)  # the last micro-batch's backward and the next step's first forward
    dp_hid = np.minimum(t_dp, fw.dp_overlap * window)
    dp_exposed = t_dp - dp_hid
    # ZeRO-3: weights gathered for forward and backward (and recomputation), gradients reduce-scattered, per micro-batch
    z3_mb = (collective_time("all_gather", 2.0 * n_dense, dsh, bw_z3, lat_dp) * np.where(rc == 2, 3.0, 2.0)
             + collective_time("reduce_scatter", gbytes * n_dense, dsh, bw_z3, lat_dp))
    z3_mb = z3_mb + (collective_time("all_gather", 2.0 * n_exp, esh, bw_z3, lat_dp) * 2.0
                     + collective_time("reduce_scatter", gbytes * n_exp, esh, bw_z3, lat_dp))
    z3_hid = np.where(zero >= 3, m * np.minimum(z3_mb, fw.dp_overlap * body), 0.0)
    z3 = np.where(zero >= 3, m * np.maximum(z3_mb - fw.dp_overlap * body, 0.0), 0.0)
    # the same contention on the hidden stage-to-stage sends and DP/ZeRO traffic
    cont_step = kappa * (pp_hid + dp_hid + z3_hid)

    # ---- Adam update over the locally owned parameters, HBM-bound
    owned = n_dense / np.where(zero >= 1, dsh, 1.0) + n_exp / np.where(zero >= 1, esh, 1.0)
    t_opt = owned * constants()["optimizer"]["bytes_per_param"] / C.hbm

    step = pipe_busy + bubble + p2p + dp_exposed + z3 + cont_step + t_opt + fw.step_overhead_s
    gpus = t * p * d * c
    tokens = global_batch * s
    mft = model_flops_per_token(model)
    rec_tok = np.where(rc == 2, mft / 3.0, np.where(rc == 1, 0.0 if flash else 2.0 * L * s * (model.qk_dim + model.q_dim), 0.0))
    peak = gpu.peak_flops_for(precision)
    mem = memory_per_card(model, gpu, lay, m, precision, flash, fw.grad_memory_bytes or None, fw.selective_op)
    n_mb = m * Ls
    return {
        "step_time_s": step, "tokens_per_s": tokens / step, "m": m, "gpus": gpus,
        "model_flops_per_step": tokens * mft * np.ones_like(step),
        "tflops_per_gpu": tokens * mft / step / gpus / 1e12,
        "mfu": tokens * mft / step / gpus / peak,
        "hfu": tokens * (mft + rec_tok) / step / gpus / peak,
        "memory_bytes": mem["total"], "fits": fits(mem), "memory": mem,
        "breakdown": {
            "gemm": n_mb * (1.0 + C.bwd) * g_layer + m * logit, "attention": n_mb * (att_f + att_b),
            "memory_bound": n_mb * 3.0 * t_mem_f, "tp_comm": n_mb * (tp_pass + tp_bwd),
            "moe_all_to_all": n_mb * (ep_f + ep_b), "cp_comm": n_mb * (cp_f + cp_b),
            "recompute": n_mb * r_l, "pipeline_bubble": bubble, "pp_p2p": p2p,
            "dp_comm": dp_exposed + z3, "optimizer": t_opt,
            "overlap_contention": n_mb * (cont_f + cont_b) + cont_step,
        },
    }


def _pick(res: dict, i: int = 0, shape=None) -> dict:
    """The i-th layout of an evaluate() result, as plain floats."""
    shape = np.shape(res.get("step_time_s", res.get("total"))) if shape is None else shape
    out = {}
    for k, v in res.items():
        if isinstance(v, dict):
            out[k] = _pick(v, i, shape)
        else:
            out[k] = np.broadcast_to(np.asarray(v, dtype=float), shape).reshape(-1)[i].item()
    return out


def step(model, gpu, layout: Layout, global_batch: int, precision: str = "bf16", fabric: Fabric | None = None,
         fw: Framework | str = "modern", gpus: int | None = None) -> dict:
    """One explicit layout: the fields of `kashu step --json` (SI units inside, GB for people)."""
    check_layout(layout, model, global_batch, gpus)
    res = _pick(evaluate(model, gpu, layout.arrays(), global_batch, precision, fabric, fw))
    return result_dict(res, layout)


def result_dict(res: dict, layout: Layout) -> dict:
    mem = res["memory"]
    return {
        "layout": layout.to_dict(),
        "step_time_s": res["step_time_s"], "tokens_per_s": res["tokens_per_s"],
        "tokens_per_s_per_gpu": res["tokens_per_s"] / res["gpus"],
        "tflops_per_gpu": res["tflops_per_gpu"], "mfu": res["mfu"], "hfu": res["hfu"],
        "memory_gb_per_gpu": res["memory_bytes"] / 1e9, "fits": bool(res["fits"]),
        "memory_gb": {k: v / 1e9 for k, v in mem.items()},
        "micro_batches": int(round(res["m"])), "gpus": int(round(res["gpus"])),
        "breakdown": {k: float(v) for k, v in res["breakdown"].items()},
    }
