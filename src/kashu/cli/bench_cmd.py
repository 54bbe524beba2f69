"""`kashu bench step|comm|scale|list|show`: measure one card, the fabric and multi-card scaling.

torch is imported only when a benchmark runs; without it these commands say how to install it
(`pip install 'kashu[bench]'`) and exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from ..errors import KashuError
from ..i18n import detect_lang
from . import LangOpt, app, emit_json

bench_app = typer.Typer(help="Measure, don't guess: benchmark one card (step), the fabric (comm), multi-card scaling "
                             "(scale); results are stored and `kashu plan --from-bench` uses them.",
                        no_args_is_help=True)
app.add_typer(bench_app, name="bench")

DbOpt = typer.Option(None, "--db", help="The kashu store: a file path or SQLAlchemy URL (default $KASHU_DB, else the user data dir).")
JsonOpt = typer.Option(False, "--json", help="Print the result as JSON.")
OutOpt = typer.Option(None, "--out", help="Also write the JSON result to this file.")


def _arch(model, layers, hidden, heads, kv_heads, ffn, vocab):
    from ..bench import arch as A

    if model:
        if any(v is not None for v in (layers, hidden, heads, kv_heads, ffn, vocab)):
            raise KashuError("give --model or the architecture options (--layers --hidden ...), not both",
                             "--model 与结构选项（--layers --hidden ...）只能给一种", "model")
        return A.arch_from_preset(model)
    return A.make_arch(layers, hidden, heads, kv_heads, ffn, vocab), None


def _finish(result: dict, db: str | None, out: Path | None, json_out: bool, lang: str, show) -> None:
    """Store (one transaction, only after success), write --out, print."""
    from ..bench import results

    doc = results.save(result, db)
    if out:
        Path(out).write_text(json.dumps(doc, ensure_ascii=False, indent=2, default=str) + "\n", encoding="utf-8")
    if json_out:
        emit_json(doc)
    else:
        show(doc, lang)


def _show_step(r: dict, lang: str) -> None:
    zh = lang == "zh"
    c = Console()
    t = Table.grid(padding=(0, 2))
    t.add_column(style="bold")
    t.add_column()
    m = r["model"]
    card = r.get("gpu") or r.get("device_name")
    t.add_row("编号" if zh else "Run id", str(r["id"]))
    t.add_row("设备" if zh else "Device", f"{r['device']} — {card}")
    proxy = (f" [yellow]({'截断层数的代理模型' if zh else 'layer-truncated proxy'})[/yellow]" if r["proxy"] else "")
    t.add_row("模型" if zh else "Model", f"{m['name']}: h={m['hidden']}, heads={m['heads']}/{m['kv_heads']}, ffn={m['ffn']}, "
              f"V={m['vocab']}, {r['layers_run']}/{r['layers_full']} {'层' if zh else 'layers'}{proxy}")
    cfg = r["config"]
    t.add_row("配置" if zh else "Config", f"seq {cfg['seq']} × mbs {cfg['mbs']}, {cfg['precision']}, {cfg['optimizer']}"
              + (", compile" if cfg["compile"] else "") + (", checkpoint" if cfg["checkpoint"] else ""))
    s = r["step_time_spread"]
    t.add_row("step 耗时（中位数）" if zh else "Step time (median)",
              f"[green]{r['step_time_s'] * 1e3:,.1f} ms[/green]  (p10 {s['p10'] * 1e3:,.1f}, p90 {s['p90'] * 1e3:,.1f}, "
              f"{cfg['steps']} {'步' if zh else 'steps'})")
    t.add_row("吞吐" if zh else "Throughput", f"{r['tokens_per_s']:,.0f} tokens/s")
    t.add_row("实际算力" if zh else "Achieved", f"{r['tflops']:,.3g} TFLOPS")
    mfu = f"[green]{r['mfu']:.1%}[/green]" if r.get("mfu") is not None else ("未知（给出 --gpu 或 --peak-tflops）" if zh else "unknown (give --gpu or --peak-tflops)")
    t.add_row("MFU", f"{mfu}  [dim]({r.get('peak_source')})[/dim]")
    t.add_row("峰值显存" if zh else "Peak memory", f"{r['peak_memory_gb']:.2f} GB ({r['peak_memory_kind']}; "
              f"{'估算' if zh else 'estimate'} {r['memory_estimate_gb']:.2f} GB)")
    from rich.panel import Panel

    c.print(Panel(t, title="kashu bench step", expand=False))
    c.print(f"[dim]{'用于规划' if zh else 'Plan with it'}: kashu plan ... --gpu {r.get('gpu') or 'CARD'} --from-bench {r['id']}[/dim]")


@bench_app.command("step")
def step_cmd(
    model: str = typer.Option(None, "--model", help="Model preset (see kashu.models), e.g. llama3-8b."),
    layers: int = typer.Option(None, "--layers", help="Layers of the full model (the proxy runs as many as fit)."),
    hidden: int = typer.Option(None, "--hidden", help="Hidden size h."),
    heads: int = typer.Option(None, "--heads", help="Attention heads (default h/128)."),
    kv_heads: int = typer.Option(None, "--kv-heads", help="Key/value heads for GQA (default = heads)."),
    ffn: int = typer.Option(None, "--ffn", help="SwiGLU width (default 8h/3 rounded up to 256)."),
    vocab: int = typer.Option(None, "--vocab", help="Vocabulary size (default 32000)."),
    seq: int = typer.Option(None, "--seq", help="Sequence length (default: the preset's, else 2048)."),
    mbs: int = typer.Option(1, "--mbs", help="Micro-batch size (sequences per step)."),
    steps: int = typer.Option(20, "--steps", help="Timed steps."),
    warmup: int = typer.Option(5, "--warmup", help="Warm-up steps (not timed)."),
    device: str = typer.Option("cuda", "--device", help="cuda or cpu."),
    compile_: bool = typer.Option(False, "--compile", help="torch.compile the model."),
    checkpoint: bool = typer.Option(False, "--checkpoint", help="Activation checkpointing (recompute each block)."),
    gpu: str = typer.Option(None, "--gpu", help="The card, when detection fails (catalog name; see `kashu gpus`)."),
    peak_tflops: float = typer.Option(None, "--peak-tflops", help="Dense peak to measure MFU against, TFLOPS."),
    max_layers: int = typer.Option(None, "--max-layers", help="Run at most this many layers."),
    memory_gb: float = typer.Option(None, "--memory-gb", help="Memory the proxy may use, GB (default: 90% of free)."),
    db: str = DbOpt, out: Path = OutOpt, json_out: bool = JsonOpt, lang: str = LangOpt,
) -> None:
    """One card: train the model (real width, as many layers as fit) and record step time, tokens/s, TFLOPS, MFU."""
    from ..bench import require_torch

    lang = detect_lang(lang)
    require_torch()
    from ..bench.step import StepConfig, run_step

    a, preset_seq = _arch(model, layers, hidden, heads, kv_heads, ffn, vocab)
    cfg = StepConfig(arch=a, seq=seq or preset_seq or 2048, mbs=mbs, steps=steps, warmup=warmup, device=device,
                     compile=compile_, checkpoint=checkpoint, gpu=gpu, peak_tflops=peak_tflops, max_layers=max_layers,
                     memory_gb=memory_gb, progress=True)
    _finish(run_step(cfg), db, out, json_out, lang, _show_step)


@bench_app.command("list")
def list_cmd(kind: str = typer.Option(None, "--kind", help="step, comm or scale."),
             db: str = DbOpt, json_out: bool = JsonOpt, lang: str = LangOpt) -> None:
    """Stored benchmark runs, newest first."""
    from ..bench import results

    lang = detect_lang(lang)
    if kind and kind not in results.KINDS:
        raise KashuError(f"--kind {kind!r} must be step, comm or scale", f"--kind {kind!r} 应为 step、comm 或 scale", "kind")
    rows = results.list_runs(db, kind)
    if json_out:
        emit_json(rows)
        return
    zh = lang == "zh"
    tab = Table(title="基准测试记录" if zh else "Benchmark runs")
    for col in (("Id", "编号"), ("Kind", "类型"), ("When (UTC)", "时间（UTC）"), ("Device", "设备"), ("Card", "卡型"),
                ("Summary", "摘要")):
        tab.add_column(col[1] if zh else col[0])
    for r in rows:
        tab.add_row(str(r["id"]), r["kind"], r["created_at"] or "", r["device"], r["gpu"] or (r["device_name"] or "—"),
                    r["summary"] or "")
    Console().print(tab)


@bench_app.command("show")
def show_cmd(ref: str = typer.Argument(..., help="Run id, or `latest`."),
             db: str = DbOpt, json_out: bool = JsonOpt, lang: str = LangOpt) -> None:
    """One stored run, in full."""
    from ..bench import results

    lang = detect_lang(lang)
    r = results.get(ref, db)
    if json_out:
        emit_json(r)
    elif r["kind"] == "step":
        _show_step(r, lang)
    else:
        SHOW[r["kind"]](r, lang)


SHOW = {"step": _show_step}


def _show_comm(r: dict, lang: str) -> None:
    zh = lang == "zh"
    tab = Table(title=(f"集合通信带宽：{r['world_size']} 进程，{r['backend']}，编号 {r['id']}" if zh else
                       f"Collective bandwidth: {r['world_size']} ranks, {r['backend']}, run {r['id']}"))
    for col in (("Operation", "操作"), ("Size", "大小"), ("Time", "耗时"), ("algbw GB/s", "algbw GB/s"),
                ("busbw GB/s", "busbw GB/s")):
        tab.add_column(col[1] if zh else col[0], justify="left" if col[0] == "Operation" else "right")
    for row in r["results"]:
        tab.add_row(row["op"], _bytes(row["size_bytes"]), f"{row['time_s'] * 1e6:,.0f} µs", f"{row['algbw_gbps']:.3g}",
                    f"[green]{row['busbw_gbps']:.3g}[/green]")
    c = Console()
    c.print(tab)
    c.print(f"[dim]{r['definitions']}[/dim]")


def _bytes(n: int) -> str:
    for unit, m in (("G", 1024**3), ("M", 1024**2), ("K", 1024)):
        if n >= m and n % m == 0:
            return f"{n // m}{unit}"
    return f"{n}B"


SHOW["comm"] = _show_comm


@bench_app.command("comm")
def comm_cmd(
    device: str = typer.Option("cuda", "--device", help="cuda (NCCL) or cpu (gloo)."),
    nproc: int = typer.Option(None, "--nproc", help="Processes to spawn when not under torchrun (default 2)."),
    sizes: str = typer.Option(None, "--sizes", help="Message sizes, comma-separated: 1M,16M,256M (default by device)."),
    ops: str = typer.Option(None, "--ops", help="Comma-separated: all_reduce,all_gather,reduce_scatter,all_to_all."),
    iters: int = typer.Option(0, "--iters", help="Timed calls per size (default 20 on CUDA, 5 on CPU)."),
    warmup: int = typer.Option(0, "--warmup", help="Warm-up calls per size (default 5 on CUDA, 2 on CPU)."),
    timeout: float = typer.Option(300.0, "--timeout", help="Seconds to wait for the rendezvous and the run."),
    db: str = DbOpt, out: Path = OutOpt, json_out: bool = JsonOpt, lang: str = LangOpt,
) -> None:
    """The fabric: all-reduce, all-gather, reduce-scatter, all-to-all over message sizes; algbw and busbw (nccl-tests).

    One node: `kashu bench comm --nproc 8`, or `torchrun --standalone --nproc-per-node 8 -m kashu bench comm`.
    Many nodes: `torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint HOST:29500
    --rdzv-id JOB -m kashu bench comm` on every node.
    """
    from ..bench import require_torch
    from ..bench.figures import parse_size

    lang = detect_lang(lang)
    require_torch()
    from ..bench.comm import OPS, CommConfig, run_comm

    cfg = CommConfig(device=device, nproc=nproc,
                     sizes=tuple(parse_size(s) for s in sizes.split(",") if s.strip()) if sizes else (),
                     ops=tuple(o.strip().replace("-", "_") for o in ops.split(",") if o.strip()) if ops else OPS,
                     iters=iters, warmup=warmup, timeout_s=timeout)
    result, rank = run_comm(cfg)
    if rank == 0:
        _finish(result, db, out, json_out, lang, _show_comm)


def _show_scale(r: dict, lang: str) -> None:
    zh = lang == "zh"
    tab = Table(title=(f"弱扩展：{r['wrap']}，{r['backend']}，{r['nnodes']} 个节点，编号 {r['id']}" if zh else
                       f"Weak scaling: {r['wrap']}, {r['backend']}, {r['nnodes']} node(s), run {r['id']}"))
    for col in (("Cards", "卡数"), ("Step time", "step 耗时"), ("Tokens/s", "tokens/s"), ("Per card", "每卡"),
                ("MFU", "MFU"), ("Efficiency", "扩展效率")):
        tab.add_column(col[1] if zh else col[0], justify="right")
    for p in r["points"]:
        tab.add_row(str(p["cards"]), f"{p['step_time_s'] * 1e3:,.1f} ms", f"{p['tokens_per_s']:,.0f}",
                    f"{p['tokens_per_s_per_card']:,.0f}", f"{p['mfu']:.1%}" if p.get("mfu") is not None else "—",
                    f"{p['efficiency']:.2f}")
    c = Console()
    c.print(tab)
    ok = r["meets_bar"]
    verdict = (("达标" if ok else "未达标") if zh else ("meets" if ok else "is below"))
    color = "green" if ok else "yellow"
    c.print(f"[{color}]{'扩展效率' if zh else 'Scaling efficiency'} {r['efficiency']:.2f} "
            f"({r['max_cards']} {'卡' if zh else 'cards'}) {verdict} {'文章的' if zh else 'the article’s'} ≥ {r['bar']:.2g}"
            f"[/{color}]  [dim]({r['bar_source']})[/dim]")
    if r.get("note"):
        c.print(f"[dim]{r['note']}[/dim]")


SHOW["scale"] = _show_scale


@bench_app.command("scale")
def scale_cmd(
    model: str = typer.Option(None, "--model", help="Model preset (see kashu.models)."),
    layers: int = typer.Option(None, "--layers", help="Layers of the full model."),
    hidden: int = typer.Option(None, "--hidden", help="Hidden size h."),
    heads: int = typer.Option(None, "--heads", help="Attention heads (default h/128)."),
    kv_heads: int = typer.Option(None, "--kv-heads", help="Key/value heads (default = heads)."),
    ffn: int = typer.Option(None, "--ffn", help="SwiGLU width."),
    vocab: int = typer.Option(None, "--vocab", help="Vocabulary size (default 32000)."),
    seq: int = typer.Option(None, "--seq", help="Sequence length (default: the preset's, else 2048)."),
    mbs: int = typer.Option(1, "--mbs", help="Micro-batch per card (weak scaling keeps it fixed)."),
    steps: int = typer.Option(10, "--steps", help="Timed steps per size."),
    warmup: int = typer.Option(3, "--warmup", help="Warm-up steps per size."),
    device: str = typer.Option("cuda", "--device", help="cuda (NCCL) or cpu (gloo)."),
    wrap: str = typer.Option("auto", "--wrap", help="auto, ddp or fsdp (FSDP2 fully_shard)."),
    sizes: str = typer.Option(None, "--sizes", help="Card counts, e.g. 1,2,4,8 (default powers of two up to all)."),
    nproc: int = typer.Option(None, "--nproc", help="Processes to spawn when not under torchrun (default: all GPUs; 2 on CPU)."),
    compile_: bool = typer.Option(False, "--compile", help="torch.compile the model."),
    checkpoint: bool = typer.Option(False, "--checkpoint", help="Activation checkpointing."),
    gpu: str = typer.Option(None, "--gpu", help="The card, when detection fails."),
    peak_tflops: float = typer.Option(None, "--peak-tflops", help="Dense peak for MFU, TFLOPS."),
    max_layers: int = typer.Option(None, "--max-layers", help="Run at most this many layers."),
    memory_gb: float = typer.Option(None, "--memory-gb", help="Memory per card the proxy may use, GB."),
    timeout: float = typer.Option(600.0, "--timeout", help="Seconds to wait for the rendezvous and the run."),
    db: str = DbOpt, out: Path = OutOpt, json_out: bool = JsonOpt, lang: str = LangOpt,
) -> None:
    """Multi-card: weak-scaling efficiency at 1, 2, 4, … cards under DDP or FSDP2, against the article's ≥ 0.8 bar.

    One node: `kashu bench scale --nproc 8 ...` or `torchrun --standalone --nproc-per-node 8 -m kashu bench scale ...`.
    Many nodes, on every node: `torchrun --nnodes 4 --nproc-per-node 8 --rdzv-backend c10d
    --rdzv-endpoint HOST:29500 --rdzv-id JOB -m kashu bench scale ...`.
    """
    from ..bench import require_torch

    lang = detect_lang(lang)
    require_torch()
    from ..bench.scale import ScaleConfig, run_scale

    a, preset_seq = _arch(model, layers, hidden, heads, kv_heads, ffn, vocab)
    try:
        size_list = tuple(int(s) for s in sizes.split(",") if s.strip()) if sizes else ()
    except ValueError:
        raise KashuError(f"--sizes {sizes!r} must be card counts like 1,2,4,8", f"--sizes {sizes!r} 应为 1,2,4,8 这样的卡数",
                         "sizes") from None
    cfg = ScaleConfig(arch=a, seq=seq or preset_seq or 2048, mbs=mbs, steps=steps, warmup=warmup, device=device, wrap=wrap,
                      sizes=size_list, nproc=nproc, compile=compile_, checkpoint=checkpoint, gpu=gpu,
                      peak_tflops=peak_tflops, max_layers=max_layers, memory_gb=memory_gb, timeout_s=timeout)
    result, rank = run_scale(cfg)
    if rank == 0:
        _finish(result, db, out, json_out, lang, _show_scale)
