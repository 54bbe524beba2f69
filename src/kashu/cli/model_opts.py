"""Options shared by the commands that take a model (`step`, `layout`): a preset or a bare architecture."""

from __future__ import annotations

import typer

from ..errors import KashuError

ModelOpt = typer.Option(None, "--model", help="Model preset (llama3-70b, gpt3-175b, deepseek-v3 …).")
LayersOpt = typer.Option(None, "--layers", help="Bare architecture: layers.")
HiddenOpt = typer.Option(None, "--hidden", help="Bare architecture: hidden size.")
HeadsOpt = typer.Option(None, "--heads", help="Bare architecture: attention heads.")
KvHeadsOpt = typer.Option(None, "--kv-heads", help="Bare architecture: KV heads (GQA; default = heads).")
FfnOpt = typer.Option(None, "--ffn", help="Bare architecture: FFN size (default 8/3·h SwiGLU).")
VocabOpt = typer.Option(None, "--vocab", help="Bare architecture: vocabulary (default 32000).")
SeqOpt = typer.Option(None, "--seq", help="Sequence length (overrides the preset's).")
ExpertsOpt = typer.Option(None, "--experts", help="MoE: routed experts.")
TopKOpt = typer.Option(None, "--top-k", help="MoE: experts per token.")
ExpertFfnOpt = typer.Option(None, "--expert-ffn", help="MoE: FFN size of one expert.")


def resolve_model(model, layers, hidden, heads, kv_heads, ffn, vocab, seq, experts, top_k, expert_ffn):
    from ..models import from_architecture, get_model

    bare = [layers, hidden, heads]
    if model:
        if any(x is not None for x in bare):
            raise KashuError("give --model or a bare architecture (--layers --hidden --heads), not both",
                             "--model 与裸架构（--layers --hidden --heads）只能给一个", "model")
        return get_model(model).with_seq(seq)
    if any(x is None for x in bare):
        raise KashuError("give --model (e.g. llama3-70b) or a bare architecture: --layers, --hidden and --heads",
                         "请给出 --model（如 llama3-70b）或裸架构：--layers、--hidden、--heads", "model")
    return from_architecture(layers, hidden, heads, ffn, vocab or 32000, seq or 4096, kv_heads,
                             experts=experts or 0, top_k=top_k or 0, expert_ffn=expert_ffn or 0)


def check_precision(gpu, precision: str) -> None:
    if precision not in ("bf16", "fp8"):
        raise KashuError(f"--precision {precision!r} must be bf16 or fp8", f"--precision {precision!r} 应为 bf16 或 fp8",
                         "precision")
    gpu.peak_flops_for(precision)
