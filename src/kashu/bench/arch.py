"""The benchmarked model's shape: parameters, FLOPs, and how many layers fit in memory (pure, no torch).

A Llama-style decoder (Touvron et al. 2023): token embedding, L blocks of
[RMSNorm → GQA attention with RoPE → residual, RMSNorm → SwiGLU MLP → residual], final RMSNorm,
untied output head. The benchmark keeps the real width (hidden, heads, FFN, vocabulary) and runs
as many layers as fit on the card: a layer-truncated proxy whose per-layer cost is the full model's.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

from .. import compute
from ..errors import KashuError


def llama_ffn(hidden: int, multiple_of: int = 256) -> int:
    """SwiGLU width when none is given: 2/3 of 4h rounded up to a multiple of 256 (Llama, model.py)."""
    f = int(2 * 4 * hidden / 3)
    return multiple_of * ((f + multiple_of - 1) // multiple_of)


@dataclass(frozen=True)
class Arch:
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    name: str = "custom"

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    def params_per_layer(self) -> int:
        h, kv = self.hidden, self.kv_heads * self.head_dim
        attn = h * h + 2 * h * kv + h * h  # q, k, v, o (no biases)
        mlp = 3 * h * self.ffn  # gate, up, down
        return attn + mlp + 2 * h  # two RMSNorm weights

    def params(self, layers: int | None = None) -> int:
        """All parameters, embedding included, of the model with `layers` blocks (default: all)."""
        n = self.layers if layers is None else layers
        return 2 * self.vocab * self.hidden + self.hidden + n * self.params_per_layer()

    def flop_params(self, layers: int | None = None) -> int:
        """N for 6N: parameters that do matmuls, i.e. all but the input-embedding lookup (torchtitan's count)."""
        return self.params(layers) - self.vocab * self.hidden

    def flops_per_token(self, seq_len: int, layers: int | None = None) -> float:
        """Training FLOPs per token: the planner's function, 6N + 12·L·h·s (PaLM App. B)."""
        n = self.layers if layers is None else layers
        return compute.flops_per_token(self.flop_params(n), n, self.hidden, seq_len)

    def with_layers(self, layers: int) -> Arch:
        return replace(self, layers=layers)

    def to_dict(self) -> dict:
        return asdict(self)


def make_arch(layers=None, hidden=None, heads=None, kv_heads=None, ffn=None, vocab=None, name="custom") -> Arch:
    """Check and complete an architecture given by its numbers (heads default to hidden/128, kv to heads)."""
    if not layers or not hidden:
        raise KashuError("give --model PRESET, or the architecture with at least --layers and --hidden",
                         "请给出 --model 预设，或至少用 --layers 和 --hidden 给出模型结构", "model")
    heads = heads or max(1, hidden // 128)
    kv_heads = kv_heads or heads
    ffn = ffn or llama_ffn(hidden)
    vocab = vocab or 32000
    for key, v in (("layers", layers), ("hidden", hidden), ("heads", heads), ("kv-heads", kv_heads),
                   ("ffn", ffn), ("vocab", vocab)):
        if int(v) != v or v < 1:
            raise KashuError(f"--{key} {v!r} must be a positive whole number", f"--{key} {v!r} 应为正整数", key)
    if hidden % heads:
        raise KashuError(f"--hidden {hidden} is not divisible by --heads {heads}",
                         f"--hidden {hidden} 不能被 --heads {heads} 整除", "heads")
    if heads % kv_heads:
        raise KashuError(f"--heads {heads} is not a multiple of --kv-heads {kv_heads} (grouped-query attention)",
                         f"--heads {heads} 不是 --kv-heads {kv_heads} 的整数倍（分组查询注意力）", "kv_heads")
    if (hidden // heads) % 2:
        raise KashuError(f"head size {hidden // heads} must be even for rotary embeddings",
                         f"注意力头维度 {hidden // heads} 必须为偶数（RoPE 需要）", "heads")
    return Arch(int(layers), int(hidden), int(heads), int(kv_heads), int(ffn), int(vocab), name)


def arch_from_preset(name: str) -> tuple[Arch, int | None]:
    """(Arch, its training sequence length) of a model preset from kashu.models (issue 3)."""
    try:
        from ..models import get_model  # written by the models issue; imported lazily
    except ImportError:
        raise KashuError(
            f"--model {name!r}: model presets (kashu.models) are not available in this build; give the "
            "architecture instead: --layers --hidden --heads --kv-heads --ffn --vocab",
            f"--model {name!r}：此版本没有模型预设（kashu.models）；请直接给出结构：--layers --hidden --heads --kv-heads --ffn --vocab",
            "model") from None
    spec = get_model(name)
    a = make_arch(spec.layers, spec.hidden, spec.heads, getattr(spec, "kv_heads", None) or spec.heads,
                  getattr(spec, "ffn", None), getattr(spec, "vocab", None), name=getattr(spec, "name", name))
    return a, getattr(spec, "seq_len", None)


# ---------------------------------------------------------------- memory

STATE_BYTES_PER_PARAM = 16  # fp32 weights 4 + fp32 grads 4 + AdamW m and v 8 (mixed precision, Rajbhandari et al. 2020 §3.1)


def activation_bytes_per_layer(a: Arch, seq: int, mbs: int, checkpoint: bool) -> float:
    """Saved activations of one block, bytes (an estimate for this implementation under bf16 autocast).

    Without recomputation: fp32 residual inputs of the two norms, bf16 inputs of the q/k/v, o, gate/up
    and down projections, q/k/v/out and the rotary copies for flash attention, and the SwiGLU
    intermediates: about s·b·(30·h + 8·ffn) bytes. The s² score matrix is never stored
    (scaled_dot_product_attention uses flash / memory-efficient kernels). With activation
    checkpointing only the fp32 block input is kept: 4·s·b·h.
    """
    if checkpoint:
        return 4.0 * seq * mbs * a.hidden
    return float(seq * mbs * (30 * a.hidden + 8 * a.ffn))


def memory_bytes(a: Arch, layers: int, seq: int, mbs: int, checkpoint: bool) -> float:
    """Estimated peak training memory of the model cut to `layers` blocks, bytes."""
    state = STATE_BYTES_PER_PARAM * a.params(layers)
    acts = layers * activation_bytes_per_layer(a, seq, mbs, checkpoint)
    if checkpoint:  # one block's full activations while it is recomputed
        acts += activation_bytes_per_layer(a, seq, mbs, False)
    logits = 10.0 * seq * mbs * a.vocab  # bf16 logits, their fp32 copy for the loss, and its gradient
    return state + acts + logits


def layers_that_fit(a: Arch, seq: int, mbs: int, budget_bytes: float, checkpoint: bool = False) -> int:
    """The most blocks (up to a.layers) whose estimated memory fits `budget_bytes`; 0 when not even one."""
    fixed = memory_bytes(a, 0, seq, mbs, checkpoint)
    per = STATE_BYTES_PER_PARAM * a.params_per_layer() + activation_bytes_per_layer(a, seq, mbs, checkpoint)
    if checkpoint:
        fixed += activation_bytes_per_layer(a, seq, mbs, False)
    if budget_bytes <= fixed + per:
        return 0
    return int(min(a.layers, math.floor((budget_bytes - fixed) / per)))


def no_fit_error(a: Arch, seq: int, mbs: int, budget_bytes: float, checkpoint: bool) -> KashuError:
    need = memory_bytes(a, 1, seq, mbs, checkpoint) / 1e9
    hint_en = "lower --mbs or --seq" + ("" if checkpoint else ", or add --checkpoint")
    hint_zh = "减小 --mbs 或 --seq" + ("" if checkpoint else "，或加 --checkpoint")
    return KashuError(
        f"the model does not fit even with one layer: about {need:.1f} GB needed (weights, gradients and AdamW "
        f"state of the embedding, output head and one block, plus activations), {budget_bytes / 1e9:.1f} GB "
        f"available; {hint_en}",
        f"即使只保留一层模型也放不下：约需 {need:.1f} GB（嵌入层、输出层和一个 block 的权重、梯度、AdamW 状态及激活），"
        f"可用 {budget_bytes / 1e9:.1f} GB；请{hint_zh}",
        "model")
