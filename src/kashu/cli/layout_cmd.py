"""`kashu layout`: the fastest parallel layouts that fit, found by a vectorised search."""

from __future__ import annotations

import typer

from . import LangOpt, app, emit_json
from .model_opts import (
    ExpertFfnOpt,
    ExpertsOpt,
    FfnOpt,
    HeadsOpt,
    HiddenOpt,
    KvHeadsOpt,
    LayersOpt,
    ModelOpt,
    SeqOpt,
    TopKOpt,
    VocabOpt,
    check_precision,
    resolve_model,
)


@app.command("layout")
def layout_cmd(
    model: str = ModelOpt, layers: int = LayersOpt, hidden: int = HiddenOpt, heads: int = HeadsOpt,
    kv_heads: int = KvHeadsOpt, ffn: int = FfnOpt, vocab: int = VocabOpt, seq: int = SeqOpt,
    experts: int = ExpertsOpt, top_k: int = TopKOpt, expert_ffn: int = ExpertFfnOpt,
    gpu: str = typer.Option("H800", "--gpu", help="Card type (see `kashu gpus`)."),
    gpus: int = typer.Option(..., "--gpus", help="Card count."),
    global_batch: int = typer.Option(None, "--global-batch", help="Global batch in sequences (default ≈ 4M tokens)."),
    precision: str = typer.Option("bf16", "--precision", help="bf16 or fp8."),
    framework: str = typer.Option("modern", "--framework", help="Training stack: modern, megatron-2022, megatron-2021, nemo, fsdp, deepspeed-2021 (data/perf.toml)"),
    top: int = typer.Option(5, "--top", help="How many layouts to show."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON (a list of layouts)."),
    lang: str = LangOpt,
) -> None:
    """Search every TP × PP × DP × CP × EP × micro-batch × interleaving × recompute × ZeRO layout; rank by step time."""
    from ..errors import KashuError
    from ..hardware import get_gpu
    from ..i18n import detect_lang
    from ..perf import check_framework
    from ..search import search

    lang = detect_lang(lang)
    spec = resolve_model(model, layers, hidden, heads, kv_heads, ffn, vocab, seq, experts, top_k, expert_ffn)
    card = get_gpu(gpu)
    check_precision(card, precision)
    check_framework(framework)
    if top < 1:
        raise KashuError("--top must be at least 1", "--top 至少为 1", "top")
    gb = global_batch or max(1, round(4 * 2**20 / spec.seq_len))
    res = search(spec, card, gpus, gb, precision, fw=framework, top=top)
    for r in res:
        r.update(model=spec.name, gpu=card.name, seq_len=spec.seq_len)
    if json_out:
        emit_json(res)
        return
    from rich.console import Console

    from ..report.perf_terminal import render_layouts

    render_layouts(res, spec, card, gpus, gb, Console(), lang)
