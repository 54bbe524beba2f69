"""`kashu bench step`: one card, the article's first step — run your model and record the step time.

Builds the Llama-style decoder at its real width with as many layers as fit, trains on random
tokens made on the device (bf16 autocast and fused AdamW on CUDA; fp32 on CPU), times
`steps` steps after `warmup` with a device synchronisation around each, and reports the median
step time, its spread, tokens/s, achieved TFLOPS and MFU against the dense peak of the card
(catalog, `--gpu` or `--peak-tflops`), and peak memory. torch is imported inside the functions.
"""

from __future__ import annotations

import os
import platform
import time
from dataclasses import dataclass, field

from .. import __version__
from ..errors import KashuError
from ..hardware import get_gpu
from . import arch as A
from . import figures


@dataclass
class StepConfig:
    arch: A.Arch
    seq: int = 2048
    mbs: int = 1
    steps: int = 20
    warmup: int = 5
    device: str = "cuda"
    compile: bool = False
    checkpoint: bool = False
    gpu: str | None = None  # catalog name that overrides detection
    peak_tflops: float | None = None
    max_layers: int | None = None
    memory_gb: float | None = None  # memory budget override (default: the card's free memory)
    progress: bool = True
    extra: dict = field(default_factory=dict)

    def check(self) -> None:
        for key in ("seq", "mbs", "steps"):
            v = getattr(self, key)
            if not isinstance(v, int) or v < 1:
                raise KashuError(f"--{key} {v!r} must be a positive whole number", f"--{key} {v!r} 应为正整数", key)
        if self.warmup < 0:
            raise KashuError(f"--warmup {self.warmup} must be 0 or more", f"--warmup {self.warmup} 不能为负", "warmup")
        if self.peak_tflops is not None and not self.peak_tflops > 0:
            raise KashuError(f"--peak-tflops {self.peak_tflops} must be positive", f"--peak-tflops {self.peak_tflops} 应为正数",
                             "peak_tflops")
        if self.max_layers is not None and self.max_layers < 1:
            raise KashuError("--max-layers must be at least 1", "--max-layers 至少为 1", "max_layers")
        if self.memory_gb is not None and not self.memory_gb > 0:
            raise KashuError("--memory-gb must be positive", "--memory-gb 应为正数", "memory_gb")
        if self.gpu and self.peak_tflops:
            raise KashuError("give --gpu or --peak-tflops, not both", "--gpu 与 --peak-tflops 只能给一个", "peak_tflops")
        if self.gpu:
            get_gpu(self.gpu)  # unknown names fail early, with close matches


def software(torch) -> dict:
    """Versions that decide the figures."""
    sw = {"kashu": __version__, "torch": torch.__version__, "python": platform.python_version(),
          "platform": platform.platform(terse=True)}
    if torch.version.cuda:
        sw["cuda"] = torch.version.cuda
    try:
        if torch.cuda.is_available():
            sw["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
            sw["cudnn"] = str(torch.backends.cudnn.version())
            sw["driver_device"] = torch.cuda.get_device_name(0)
    except Exception:
        pass
    return sw


def card_and_peak(torch, device: str, gpu: str | None, peak_tflops: float | None, local_rank: int = 0) -> dict:
    """Which card ran (detected or --gpu), and the dense peak MFU is measured against."""
    device_name = torch.cuda.get_device_name(local_rank) if device == "cuda" else (platform.processor() or platform.machine() or "cpu")
    acc = get_gpu(gpu) if gpu else (figures.match_card(device_name) if device == "cuda" else None)
    # a CPU run is never "on" a catalog card: --gpu there only names the peak to compare with
    on_card = acc if device == "cuda" else None
    out = {"device_name": device_name, "gpu": on_card.name if on_card else None,
           "gpu_source": ("--gpu" if gpu else "detected") if on_card else None}
    if peak_tflops:
        out["peak_tflops"], out["peak_source"] = float(peak_tflops), "--peak-tflops"
    elif acc:
        out["peak_tflops"], out["peak_source"] = acc.bf16_tflops, f"catalog dense BF16 of {acc.name}: {acc.source}"
        out["peak_of"] = acc.name
    else:
        out["peak_tflops"], out["peak_source"] = None, "unknown (give --gpu or --peak-tflops for MFU)"
    if gpu and device == "cpu":
        out["note"] = f"CPU run: MFU against the peak of {acc.name} (--gpu), for testing only"
    return out


def memory_budget(torch, device: str, memory_gb: float | None, local_rank: int = 0) -> float:
    """Bytes the proxy may use: --memory-gb, else 90 % of the card's free memory, else half the free RAM."""
    if memory_gb:
        return memory_gb * 1e9
    if device == "cuda":
        free, _total = torch.cuda.mem_get_info(local_rank)
        return 0.90 * free
    try:
        with open("/proc/meminfo") as f:
            info = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in f}
        return 0.5 * info.get("MemAvailable", info.get("MemFree", 8e9))
    except OSError:
        return 0.5 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")


def is_oom(torch, e: BaseException) -> bool:
    oom = getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError", None)
    return (oom is not None and isinstance(e, oom)) or "out of memory" in str(e).lower()


class Trainer:
    """Model, optimizer and one training step on random tokens (shared by step and scale)."""

    def __init__(self, torch, arch: A.Arch, seq: int, mbs: int, device, compile_: bool, checkpoint: bool,
                 wrap=None, seed: int = 0, autocast: bool | None = None):
        from .model import Decoder, loss_fn, make_optimizer, random_batch

        self.torch, self.seq, self.mbs, self.vocab = torch, seq, mbs, arch.vocab
        self.device = torch.device(device) if isinstance(device, str) else device
        dev_type = self.device.type
        torch.manual_seed(seed)
        model = Decoder(arch, seq, checkpoint=checkpoint).to(self.device)
        if wrap is not None:
            model = wrap(model)
        self.model = model
        self.fwd = torch.compile(model) if compile_ else model
        self.opt, self.optimizer_kind = make_optimizer(model, dev_type)
        self.autocast = (dev_type == "cuda") if autocast is None else autocast
        self.gen = torch.Generator(device=self.device)
        self.gen.manual_seed(1234 + seed)
        self._loss, self._batch = loss_fn, random_batch
        self.sync = (lambda: torch.cuda.synchronize(self.device)) if dev_type == "cuda" else (lambda: None)

    def step(self) -> float:
        torch = self.torch
        x, y = self._batch(self.vocab, self.mbs, self.seq, self.device, self.gen)
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.autocast):
            logits = self.fwd(x)
        loss = self._loss(logits, y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        return loss

    def timed(self, steps: int, warmup: int, on_step=None) -> list[float]:
        """Warm-up steps, then `steps` timed ones, each between two device synchronisations."""
        for i in range(warmup):
            self.step()
            if on_step:
                on_step("warmup", i)
        self.sync()
        times = []
        for i in range(steps):
            t0 = time.perf_counter()
            loss = self.step()
            self.sync()
            times.append(time.perf_counter() - t0)
            if on_step:
                on_step("timed", i)
        if not self.torch.isfinite(loss.detach()).item():
            raise RuntimeError("training loss is not finite")
        return times


def _progress(enabled: bool, total: int, label: str):
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    prog = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, transient=True, disable=not enabled or not console.is_terminal)
    task = prog.add_task(label, total=total)
    return prog, task


def run_step(cfg: StepConfig) -> dict:
    """Run the one-card benchmark; return the result (not yet stored)."""
    cfg.check()
    from .dist import check_device

    torch = check_device(cfg.device)
    card = card_and_peak(torch, cfg.device, cfg.gpu, cfg.peak_tflops)
    device = torch.device("cuda", torch.cuda.current_device()) if cfg.device == "cuda" else torch.device("cpu")
    if cfg.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    budget = memory_budget(torch, cfg.device, cfg.memory_gb)
    a = cfg.arch
    fit = A.layers_that_fit(a, cfg.seq, cfg.mbs, budget, cfg.checkpoint)
    if fit < 1:
        raise A.no_fit_error(a, cfg.seq, cfg.mbs, budget, cfg.checkpoint)
    layers = min(a.layers, fit, cfg.max_layers or a.layers)
    total = cfg.warmup + cfg.steps
    prog, task = _progress(cfg.progress, total, f"bench step {a.name} {layers}/{a.layers} layers")
    oom_retries = []
    with prog:
        while True:
            trainer = None
            try:
                if cfg.device == "cuda":
                    torch.cuda.empty_cache()
                    torch.cuda.reset_peak_memory_stats(device)
                trainer = Trainer(torch, a.with_layers(layers), cfg.seq, cfg.mbs, device, cfg.compile, cfg.checkpoint)
                times = trainer.timed(cfg.steps, cfg.warmup, lambda phase, i: prog.advance(task))
                break
            except Exception as e:
                if not is_oom(torch, e):
                    raise
                del trainer
                oom_retries.append(layers)
                if layers <= 1:
                    raise A.no_fit_error(a, cfg.seq, cfg.mbs, budget, cfg.checkpoint) from None
                layers = max(1, int(layers * 0.75))
                prog.reset(task, description=f"bench step {a.name} {layers}/{a.layers} layers (after OOM)")
    if cfg.device == "cuda":
        peak_mem = torch.cuda.max_memory_allocated(device)
    else:
        import resource

        peak_mem = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB
    stats = figures.summarize_times(times)
    tokens = cfg.mbs * cfg.seq
    fpt = a.flops_per_token(cfg.seq, layers)
    peak = card["peak_tflops"] * 1e12 if card["peak_tflops"] else None
    figs = figures.step_figures(stats["median"], tokens, fpt, peak)
    return {
        "kind": "step",
        "device": cfg.device,
        **card,
        "model": {**a.to_dict(), "params_full": a.params(), "params_run": a.params(layers),
                  "flop_params_run": a.flop_params(layers)},
        "config": {"seq": cfg.seq, "mbs": cfg.mbs, "steps": cfg.steps, "warmup": cfg.warmup,
                   "compile": cfg.compile, "checkpoint": cfg.checkpoint,
                   "precision": "bf16-autocast" if cfg.device == "cuda" else "fp32",
                   "optimizer": f"AdamW ({trainer.optimizer_kind})", **cfg.extra},
        "layers_run": layers,
        "layers_full": a.layers,
        "proxy": layers < a.layers,
        "oom_retries_at_layers": oom_retries,
        "step_time_s": stats["median"],
        "step_time_spread": stats,
        "step_times_s": times,
        "tokens_per_step": tokens,
        "flops_per_token": fpt,
        "flops_formula": "6·N + 12·L·h·s (PaLM App. B; N without the input embedding), kashu.compute.flops_per_token",
        **figs,
        "peak_memory_gb": peak_mem / 1e9,
        "peak_memory_kind": "torch.cuda.max_memory_allocated" if cfg.device == "cuda" else "process max RSS",
        "memory_estimate_gb": A.memory_bytes(a, layers, cfg.seq, cfg.mbs, cfg.checkpoint) / 1e9,
        "memory_budget_gb": budget / 1e9,
        "software": software(torch),
    }

