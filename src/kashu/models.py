"""Model architectures: exact parameter counts (total and active) and presets with sources.

Counting follows the layer inventory of each architecture (no 12·L·h² shortcut):
  attention  Q h·(a·d), K and V h·(kv·d) each, output (a·d)·h        (Vaswani et al. 2017; GQA: Ainslie et al. 2023)
  MLA        q_a, q_b, kv_a, kv_b, o projections                       (DeepSeek-V2 §2.1, V3 config)
  MLP        gelu: 2·h·f; swiglu: 3·h·f                                (Shazeer 2020)
  MoE        E routed experts + shared experts, router h·E              (DeepSeek-V3 §2.1; Mixtral §2)
  embeddings V·h (+ V·h output when untied, + s·h learned positions)  (GPT-3; Llama)
Megatron's GPT count 12·L·h²·(1 + 13/(12h) + (V+s)/(12·L·h)) (Narayanan et al. 2021, eq. 2)
is what this gives for a biased GELU GPT with tied embeddings.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import asdict, dataclass, replace
from functools import cache

from .data import load_toml
from .errors import KashuError


@dataclass(frozen=True)
class ModelSpec:
    name: str
    layers: int
    hidden: int
    heads: int
    ffn: int
    vocab: int
    seq_len: int
    kv_heads: int = 0  # 0 = same as heads (multi-head attention)
    head_dim: int = 0  # 0 = hidden / heads
    ffn_type: str = "swiglu"  # gelu | swiglu
    tied: bool = False
    bias: bool = False
    qkv_bias: bool = False
    norm: str = "rmsnorm"  # layernorm | rmsnorm | layernorm_nobias
    pos: str = "rope"  # learned | rope | alibi
    dropout: bool = False
    experts: int = 0
    top_k: int = 0
    shared_experts: int = 0
    expert_ffn: int = 0
    first_dense_layers: int = 0
    mla: bool = False
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    aliases: tuple[str, ...] = ()
    source: str = ""
    as_of: str = ""
    note: str = ""

    def __post_init__(self):
        if not self.kv_heads:
            object.__setattr__(self, "kv_heads", self.heads)
        if not self.head_dim and self.heads:
            object.__setattr__(self, "head_dim", self.hidden // self.heads if self.hidden % self.heads == 0 else 0)
        validate_spec(self)

    # --- shape helpers -------------------------------------------------------------------------
    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    @property
    def moe_layers(self) -> int:
        return self.layers - self.first_dense_layers if self.is_moe else 0

    @property
    def dense_layers(self) -> int:
        return self.layers - self.moe_layers

    @property
    def q_dim(self) -> int:
        """Width of the attention output (a·d_v), the input of the output projection."""
        return self.heads * (self.v_head_dim if self.mla else self.head_dim)

    @property
    def qk_dim(self) -> int:
        """Width of one Q (or K) over all heads, for the score GEMM."""
        return self.heads * ((self.qk_nope_head_dim + self.qk_rope_head_dim) if self.mla else self.head_dim)

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    @property
    def mlp_mats(self) -> int:
        return 3 if self.ffn_type == "swiglu" else 2

    # --- parameter counts -----------------------------------------------------------------------
    def _norm_params(self) -> int:
        return 2 * self.hidden if self.norm == "layernorm" else self.hidden

    def attention_params(self) -> int:
        h = self.hidden
        if self.mla:
            qk_head = self.qk_nope_head_dim + self.qk_rope_head_dim
            p = 0
            if self.q_lora_rank:
                p += h * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * self.heads * qk_head
            else:
                p += h * self.heads * qk_head
            p += h * (self.kv_lora_rank + self.qk_rope_head_dim) + self.kv_lora_rank
            p += self.kv_lora_rank * self.heads * (self.qk_nope_head_dim + self.v_head_dim)
            p += self.heads * self.v_head_dim * h
            return p
        qd, kvd = self.heads * self.head_dim, self.kv_dim
        p = h * qd + 2 * h * kvd + qd * h
        if self.bias or self.qkv_bias:
            p += qd + 2 * kvd
        if self.bias:
            p += h
        return p

    def mlp_params(self, f: int) -> int:
        p = self.mlp_mats * self.hidden * f
        if self.bias:
            p += (self.mlp_mats - 1) * f + self.hidden
        return p

    def layer_params(self, moe: bool, active: bool = False) -> int:
        p = self.attention_params() + 2 * self._norm_params()
        if moe:
            n_routed = self.top_k if active else self.experts
            p += (n_routed + self.shared_experts) * self.mlp_params(self.expert_ffn) + self.hidden * self.experts
        else:
            p += self.mlp_params(self.ffn)
        return p

    def embedding_params(self) -> int:
        p = self.vocab * self.hidden * (1 if self.tied else 2)
        if self.pos == "learned":
            p += self.seq_len * self.hidden
        return p + self._norm_params()  # final norm

    @property
    def n_params(self) -> int:
        return (self.dense_layers * self.layer_params(False) + self.moe_layers * self.layer_params(True)
                + self.embedding_params())

    @property
    def n_active_params(self) -> int:
        return (self.dense_layers * self.layer_params(False) + self.moe_layers * self.layer_params(True, True)
                + self.embedding_params())

    def to_dict(self) -> dict:
        d = asdict(self)
        d["aliases"] = list(self.aliases)
        d["n_params"] = self.n_params
        d["n_active_params"] = self.n_active_params
        return d

    def with_seq(self, seq_len: int | None) -> ModelSpec:
        return self if not seq_len or seq_len == self.seq_len else replace(self, seq_len=int(seq_len))


def _bad(en: str, zh: str, field: str) -> KashuError:
    return KashuError(en, zh, field)


def validate_spec(m: ModelSpec) -> None:
    """Inconsistent numbers are the user's to fix: each error names the constraint."""
    for f in ("layers", "hidden", "heads", "ffn", "vocab", "seq_len"):
        v = getattr(m, f)
        if not isinstance(v, int) or v <= 0:
            raise _bad(f"model {m.name}: --{f.replace('_len', '')} must be a positive whole number (got {v!r})",
                       f"模型 {m.name}：--{f.replace('_len', '')} 应为正整数（现为 {v!r}）", f)
    if not m.mla and m.hidden % m.heads and not m.head_dim:
        raise _bad(f"model {m.name}: hidden {m.hidden} is not divisible by heads {m.heads}",
                   f"模型 {m.name}：hidden {m.hidden} 不能被 heads {m.heads} 整除", "heads")
    if m.kv_heads <= 0 or m.kv_heads > m.heads or m.heads % m.kv_heads:
        raise _bad(f"model {m.name}: kv_heads {m.kv_heads} must divide heads {m.heads} (GQA groups)",
                   f"模型 {m.name}：kv_heads {m.kv_heads} 必须整除 heads {m.heads}（GQA 分组）", "kv_heads")
    if m.ffn_type not in ("gelu", "swiglu"):
        raise _bad(f"model {m.name}: ffn_type {m.ffn_type!r} must be gelu or swiglu",
                   f"模型 {m.name}：ffn_type {m.ffn_type!r} 应为 gelu 或 swiglu", "ffn_type")
    if m.experts:
        if not 1 <= m.top_k <= m.experts:
            raise _bad(f"model {m.name}: top_k {m.top_k} must be between 1 and experts {m.experts}",
                       f"模型 {m.name}：top_k {m.top_k} 应在 1 与 experts {m.experts} 之间", "top_k")
        if m.expert_ffn <= 0:
            raise _bad(f"model {m.name}: an MoE model needs expert_ffn > 0", f"模型 {m.name}：MoE 模型需要 expert_ffn > 0",
                       "expert_ffn")
        if not 0 <= m.first_dense_layers < m.layers:
            raise _bad(f"model {m.name}: first_dense_layers {m.first_dense_layers} must be < layers {m.layers}",
                       f"模型 {m.name}：first_dense_layers 应小于 layers", "first_dense_layers")
    elif m.top_k or m.expert_ffn:
        raise _bad(f"model {m.name}: --top-k/--expert-ffn given without --experts",
                   f"模型 {m.name}：给了 --top-k/--expert-ffn 却没有 --experts", "experts")
    if m.mla and not (m.kv_lora_rank and m.qk_nope_head_dim and m.v_head_dim):
        raise _bad(f"model {m.name}: MLA needs kv_lora_rank, qk_nope_head_dim and v_head_dim",
                   f"模型 {m.name}：MLA 需要 kv_lora_rank、qk_nope_head_dim、v_head_dim", "mla")


def _key(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", str(name).strip().lower())


@cache
def presets() -> tuple[ModelSpec, ...]:
    out = []
    for r in load_toml("models.toml")["model"]:
        r = dict(r)
        r["aliases"] = tuple(r.get("aliases", ()))
        out.append(ModelSpec(**r))
    return tuple(out)


@cache
def _index() -> dict[str, ModelSpec]:
    idx: dict[str, ModelSpec] = {}
    for m in presets():
        for n in (m.name, *m.aliases):
            idx[_key(n)] = m
    return idx


def get_model(name: str) -> ModelSpec:
    """Resolve a preset name or alias (`llama3-70b`, `gpt3-175b`; case and separators ignored)."""
    if isinstance(name, ModelSpec):
        return name
    m = _index().get(_key(name))
    if m:
        return m
    close = difflib.get_close_matches(_key(name), list(_index()), n=4, cutoff=0.5)
    sugg = sorted({_index()[k].name for k in close}) or [p.name for p in presets()]
    raise KashuError(f"unknown model {name!r}; close matches: {', '.join(sugg)}",
                     f"未知模型 {name!r}；相近的预设：{', '.join(sugg)}", "model")


def from_architecture(layers: int, hidden: int, heads: int, ffn: int | None = None, vocab: int = 32000,
                      seq_len: int = 4096, kv_heads: int | None = None, ffn_type: str = "swiglu",
                      experts: int = 0, top_k: int = 0, expert_ffn: int = 0, name: str = "custom") -> ModelSpec:
    """A bare architecture from CLI flags (Llama-style defaults: RMSNorm, RoPE, untied, no biases)."""
    if ffn is None:
        ffn = _swiglu_ffn(hidden) if ffn_type == "swiglu" else 4 * hidden
    return ModelSpec(name=name, layers=int(layers), hidden=int(hidden), heads=int(heads), ffn=int(ffn),
                     vocab=int(vocab), seq_len=int(seq_len), kv_heads=int(kv_heads or heads), ffn_type=ffn_type,
                     experts=int(experts or 0), top_k=int(top_k or 0), expert_ffn=int(expert_ffn or 0))


def _swiglu_ffn(h: int) -> int:
    """Llama's 8/3·h rounded up to a multiple of 256 (Touvron et al. 2023a §2.2)."""
    return int(math.ceil(8 * h / 3 / 256) * 256)


def shape_for_params(n: float, seq_len: int = 4096, vocab: int = 32000) -> ModelSpec:
    """A Llama-style dense shape with about n parameters, for a bare `--params`.

    Aspect ratio h/L ≈ 128 (Llama 2 7B/13B, Llama 3 8B/405B), head size 128, SwiGLU FFN 8/3·h,
    grouped-query attention (8 KV heads) from 64 heads up (Llama 2 70B); Kaplan et al. 2020 §3.1
    found loss nearly flat across aspect ratios, so the shape matters for speed, not quality.
    """
    if not n or n <= 0 or math.isnan(n):
        raise KashuError(f"parameter count {n!r} must be positive", f"参数量 {n!r} 应为正数", "params")
    best = None
    grid = [*range(256, 4096, 256), *range(4096, 65536 + 1, 1024)]  # heads a multiple of 8 from 4096 up (TP 8)
    for h in grid:
        heads = max(1, h // 128)
        kv = 8 if heads >= 64 and heads % 8 == 0 else heads
        probe = ModelSpec(name="probe", layers=1, hidden=h, heads=heads, kv_heads=kv, ffn=_swiglu_ffn(h),
                          vocab=vocab, seq_len=seq_len)
        per_layer = probe.layer_params(False)
        raw = (n - probe.embedding_params()) / per_layer
        for layers in {round(raw), 4 * round(raw / 4)}:  # a multiple of 4 divides into pipeline stages
            if layers < 1:
                continue
            total = probe.embedding_params() + layers * per_layer
            score = abs(math.log((h / layers) / 128.0)) + 4 * abs(math.log(total / n))
            if best is None or score < best[0]:
                best = (score, h, layers, heads, kv)
    if best is None:
        best = (0, 256, 1, 2, 2)
    _, h, layers, heads, kv = best
    return ModelSpec(name=f"llama-style-{layers}x{h}", layers=layers, hidden=h, heads=heads, kv_heads=kv,
                     ffn=_swiglu_ffn(h), vocab=vocab, seq_len=seq_len,
                     source="kashu.models.shape_for_params: Llama-style shape, h/L ≈ 128, SwiGLU 8/3·h",
                     note=f"no --model given: assumed a Llama-style shape with {layers} layers, hidden {h}, "
                          f"{heads} heads ({kv} KV heads)")
