"""`kashu plan`: from model, data and deadline (or cards, or budget) to a cluster."""

from __future__ import annotations

import typer
from rich.console import Console

from ..i18n import detect_lang
from ..planner import PlanRequest, plan
from ..report.terminal import render_plan
from . import LangOpt, app, emit_json
from .model_opts import (
    ExpertFfnOpt,
    ExpertsOpt,
    FfnOpt,
    HeadsOpt,
    HiddenOpt,
    KvHeadsOpt,
    LayersOpt,
    SeqOpt,
    TopKOpt,
    VocabOpt,
    resolve_model,
)
from .renting_opts import renting_inputs


@app.command("plan")
def plan_cmd(
    params: str = typer.Option(None, "--params", help="Parameters N: 7B, 7e9, 70亿 ..."),
    model: str = typer.Option(None, "--model", help="Model preset instead of --params (llama3-70b, gpt3-175b …)."),
    tokens: str = typer.Option(None, "--tokens", help="Training tokens D: 1T, 1万亿, or 'chinchilla' (D = 20·N)."),
    gpu: str = typer.Option("H800", "--gpu", help="Card type (see `kashu gpus`)."),
    days: str = typer.Option(None, "--days", help="Deadline: 30, 30d, 2w, 720h → solve for cards."),
    gpus: str = typer.Option(None, "--gpus", help="Card count → solve for days."),
    budget: str = typer.Option(None, "--budget", help="Budget: 200万, ¥2M, CNY 2000000 → largest affordable cluster."),
    mfu: float = typer.Option(None, "--mfu", help="Model FLOPs utilisation, a fraction (default 0.40, sourced)."),
    method: str = typer.Option("full", "--method", help="full (pre-training / full fine-tuning) or lora."),
    lora_rank: int = typer.Option(16, "--lora-rank", help="LoRA rank (with --method lora)."),
    precision: str = typer.Option("bf16", "--precision", help="bf16 or fp8 (the dense peak used for MFU)."),
    framework: str = typer.Option("modern", "--framework", help="Training stack for the predicted MFU: modern (Megatron-Core), megatron-2022, megatron-2021, nemo, fsdp, deepspeed-2021."),
    redundancy: float = typer.Option(None, "--redundancy", help="Spare share of the cluster (default 0.20, the article's)."),
    lease: str = typer.Option(None, "--lease", help="Lease unit: day, week, month, quarter (default by tier)."),
    fabric: str = typer.Option(None, "--fabric", help="Network: eth25, eth100, eth200, eth400, roce200, roce400, ib_hdr, ib_ndr, ib_xdr (default by size, sourced)."),
    nics_per_node: int = typer.Option(None, "--nics-per-node", help="Compute NICs (rails) per node, at most the cards per node."),
    oversubscription: float = typer.Option(None, "--oversubscription", help="Fat-tree down:up ratio (1 = non-blocking)."),
    failure_rate: float = typer.Option(None, "--failure-rate", help="Unexpected interruptions per card-day (default 4.7e-4, Llama 3)."),
    checkpoint_async: bool = typer.Option(None, "--checkpoint-async/--checkpoint-sync", help="Asynchronous or synchronous checkpoints (default sync)."),
    checkpoints_kept: int = typer.Option(None, "--checkpoints-kept", help="Checkpoints kept on storage (default 3)."),
    storage_write_gbps: float = typer.Option(None, "--storage-write-gbps", help="Write bandwidth of the storage you have, GB/s (default: what is required)."),
    kw_per_rack: float = typer.Option(None, "--kw-per-rack", help="Power per rack, kW (default 20, Beijing high-density racks)."),
    pue: float = typer.Option(None, "--pue", help="Data-centre PUE (default 1.35, Beijing's 2024-2027 target)."),
    from_bench: str = typer.Option(None, "--from-bench", help="Use measured figures: a `kashu bench` run id, `latest`, or ids 12,14."),
    force: bool = typer.Option(False, "--force", help="Use a benchmark from another card type anyway."),
    json_out: bool = typer.Option(False, "--json", help="Print the plan as JSON."),
    brief: bool = typer.Option(False, "--brief", help="Terminal: only the inputs, the working, the result and warnings."),
    lang: str = LangOpt,
    db: str = typer.Option(None, "--db", help="Price book (file or SQLAlchemy URL; default $KASHU_DB, else the user data dir)."),
    data_must_stay_local: bool = typer.Option(False, "--data-must-stay-local", help="Data must not leave Beijing (数据不出域)."),
    stage: str = typer.Option(None, "--stage", help="explore, train or iterate (the article's local vs remote table)."),
    subsidy: float = typer.Option(None, "--subsidy", help="Share of the lease a subsidy pays (policy; default 0.30 for domestic cards)."),
    voucher_cap: float = typer.Option(None, "--voucher-cap", help="Subsidy cap, CNY per firm per year (default 2,000,000)."),
    domestic_reserve: float = typer.Option(None, "--domestic-reserve", help="Share of nodes on domestic cards for compatibility tests."),
    layers: int = LayersOpt, hidden: int = HiddenOpt, heads: int = HeadsOpt, kv_heads: int = KvHeadsOpt,
    ffn: int = FfnOpt, vocab: int = VocabOpt, seq: int = SeqOpt, experts: int = ExpertsOpt, top_k: int = TopKOpt,
    expert_ffn: int = ExpertFfnOpt,
) -> None:
    """Plan a training run: how many cards, how long, which tier, at what cost — with the working shown."""
    lang = detect_lang(lang)
    if layers is not None or hidden is not None or heads is not None or (model and seq):
        # a bare architecture (issue 3 item 6), or a preset at another sequence length: a ModelSpec
        model = resolve_model(model, layers, hidden, heads, kv_heads, ffn, vocab, seq, experts, top_k, expert_ffn)
    p = plan(PlanRequest(params=params, tokens=tokens, gpu=gpu, days=days, gpus=gpus, budget=budget, mfu=mfu,
                         method=method, lora_rank=lora_rank, precision=precision, framework=framework, redundancy=redundancy,
                         lease=lease, lang=lang, model=model, fabric=fabric, nics_per_node=nics_per_node,
                         oversubscription=oversubscription, failure_rate=failure_rate, checkpoint_async=checkpoint_async,
                         checkpoints_kept=checkpoints_kept, storage_write_gbps=storage_write_gbps, kw_per_rack=kw_per_rack,
                         pue=pue, from_bench=from_bench, force=force, **renting_inputs(db, data_must_stay_local, stage, subsidy, voucher_cap, domestic_reserve)))
    if json_out:
        emit_json(p.to_dict())
    else:
        render_plan(p, Console(), lang, brief=brief)
    return p  # `kashu report` reuses this command's options and takes the plan from here
