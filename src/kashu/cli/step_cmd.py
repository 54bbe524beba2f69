"""`kashu step`: memory, step time and MFU of one explicit layout."""

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


@app.command("step")
def step_cmd(
    model: str = ModelOpt, layers: int = LayersOpt, hidden: int = HiddenOpt, heads: int = HeadsOpt,
    kv_heads: int = KvHeadsOpt, ffn: int = FfnOpt, vocab: int = VocabOpt, seq: int = SeqOpt,
    experts: int = ExpertsOpt, top_k: int = TopKOpt, expert_ffn: int = ExpertFfnOpt,
    gpu: str = typer.Option("H800", "--gpu", help="Card type (see `kashu gpus`)."),
    gpus: int = typer.Option(None, "--gpus", help="Card count (default tp·pp·dp·cp)."),
    tp: int = typer.Option(1, "--tp"), pp: int = typer.Option(1, "--pp"), dp: int = typer.Option(None, "--dp"),
    cp: int = typer.Option(1, "--cp"), ep: int = typer.Option(1, "--ep"),
    vp: int = typer.Option(1, "--vp", help="Interleaved pipeline stages per card."),
    mbs: int = typer.Option(1, "--mbs", help="Micro-batch size (sequences)."),
    global_batch: int = typer.Option(None, "--global-batch", help="Global batch (sequences); default dp·mbs·pp·4."),
    recompute: str = typer.Option("selective", "--recompute", help="none | selective | full"),
    sp: bool = typer.Option(False, "--sp", help="Sequence parallelism (with tp > 1)."),
    zero: int = typer.Option(1, "--zero", help="ZeRO stage 0-3 (1 = distributed optimizer)."),
    precision: str = typer.Option("bf16", "--precision", help="bf16 or fp8."),
    framework: str = typer.Option("modern", "--framework", help="Training stack: modern, megatron-2022, megatron-2021, nemo, fsdp, deepspeed-2021 (data/perf.toml)"),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
    lang: str = LangOpt,
) -> None:
    """Evaluate one parallel layout: step time, tokens/s, MFU, memory per card, where the time goes."""
    from ..errors import KashuError
    from ..hardware import get_gpu
    from ..i18n import detect_lang
    from ..layout import Layout
    from ..perf import check_framework, step

    lang = detect_lang(lang)
    spec = resolve_model(model, layers, hidden, heads, kv_heads, ffn, vocab, seq, experts, top_k, expert_ffn)
    card = get_gpu(gpu)
    check_precision(card, precision)
    check_framework(framework)
    for name, v in (("tp", tp), ("pp", pp), ("cp", cp)):
        if v is None or v < 1:
            raise KashuError(f"--{name} {v!r} must be a whole number >= 1", f"--{name} {v!r} 应为不小于 1 的整数", name)
    if dp is None:
        if gpus is None:
            dp = 1
        elif gpus % (tp * pp * cp):
            raise KashuError(f"--gpus {gpus} is not divisible by tp {tp} × pp {pp} × cp {cp}",
                             f"--gpus {gpus} 不能被 tp {tp} × pp {pp} × cp {cp} 整除", "gpus")
        else:
            dp = gpus // (tp * pp * cp)
    if global_batch is None:
        global_batch = dp * mbs * pp * 4
    lay = Layout(tp=tp, pp=pp, dp=dp, cp=cp, ep=ep, vp=vp, mbs=mbs, recompute=recompute, sp=sp, zero=zero)
    r = step(spec, card, lay, global_batch, precision, fw=framework, gpus=gpus)
    r.update(model=spec.name, gpu=card.name, global_batch=global_batch, seq_len=spec.seq_len,
             n_params=spec.n_params, n_active_params=spec.n_active_params, precision=precision, framework=framework)
    if json_out:
        emit_json(r)
        return
    from rich.console import Console

    from ..report.perf_terminal import render_step

    render_step(r, Console(), lang)
