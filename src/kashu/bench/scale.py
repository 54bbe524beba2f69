"""`kashu bench scale`: the article's third step — multi-card scaling efficiency, measured.

Weak scaling: every card trains the same micro-batch of the same model (the step benchmark's
proxy) at 1, 2, 4, … cards; efficiency(k) = tokens/s per card on k cards ÷ tokens/s on one card,
checked against the seed article's bar (>= 0.8, data/defaults.toml scaling_bar). Parallelism:
DDP for models whose training state fits one card easily, else FSDP2 (`fully_shard`, bf16 params,
fp32 reductions). One launch measures every size: all ranks join the world, and size k trains on
the sub-group of ranks 0..k-1 while the rest wait at a barrier.

One node:   kashu bench scale --nproc 8 ...   or   torchrun --standalone --nproc-per-node 8 -m kashu bench scale ...
Many nodes: torchrun --nnodes 4 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint HOST:29500 \
            --rdzv-id JOB -m kashu bench scale ...   (the same command on every node)
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass

from ..errors import KashuError
from ..hardware import get_gpu
from . import arch as A
from . import figures
from .dist import DistEnv, init_group, run_distributed


@dataclass
class ScaleConfig:
    arch: A.Arch
    seq: int = 2048
    mbs: int = 1
    steps: int = 10
    warmup: int = 3
    device: str = "cuda"
    wrap: str = "auto"  # auto | ddp | fsdp
    sizes: tuple[int, ...] = ()  # default 1, 2, 4, ... up to the world size
    nproc: int | None = None
    compile: bool = False
    checkpoint: bool = False
    gpu: str | None = None
    peak_tflops: float | None = None
    max_layers: int | None = None
    memory_gb: float | None = None
    timeout_s: float = 600.0

    def check(self) -> None:
        if self.wrap not in ("auto", "ddp", "fsdp"):
            raise KashuError(f"--wrap {self.wrap!r} must be auto, ddp or fsdp", f"--wrap {self.wrap!r} 应为 auto、ddp 或 fsdp",
                             "wrap")
        for key in ("seq", "mbs", "steps"):
            if getattr(self, key) < 1:
                raise KashuError(f"--{key} must be at least 1", f"--{key} 至少为 1", key)
        if self.gpu:
            get_gpu(self.gpu)


def default_sizes(world: int) -> list[int]:
    """1, 2, 4, … and the world size itself."""
    out, k = [], 1
    while k < world:
        out.append(k)
        k *= 2
    return [*out, world]


def check_sizes(sizes, world: int) -> list[int]:
    s = sorted(set(int(x) for x in sizes)) if sizes else default_sizes(world)
    if s[0] != 1:
        s = [1, *s]  # efficiency is against one card
    if s[-1] > world or s[0] < 1:
        raise KashuError(f"--sizes {','.join(map(str, s))}: each must be in 1..{world} (the number of processes)",
                         f"--sizes {','.join(map(str, s))}：每个值应在 1..{world}（进程数）之内", "sizes")
    return s


def _fsdp_api():
    try:
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    except ImportError:  # PyTorch < 2.6
        from torch.distributed._composable.fsdp import MixedPrecisionPolicy, fully_shard
    return fully_shard, MixedPrecisionPolicy


def choose_wrap(wrap: str, device: str, params_run: int, memory_bytes: float | None) -> str:
    """DDP when the training state (16 bytes/param) takes under a quarter of the card, else FSDP2."""
    if wrap != "auto":
        return "fsdp2" if wrap == "fsdp" else "ddp"
    if device == "cpu" or memory_bytes is None:
        return "ddp"
    return "ddp" if A.STATE_BYTES_PER_PARAM * params_run < 0.25 * memory_bytes else "fsdp2"


def _ddp(group, local_rank: int, cuda: bool):
    from torch.nn.parallel import DistributedDataParallel as DDP

    def wrap(m):
        return DDP(m, process_group=group, device_ids=[local_rank] if cuda else None)
    return wrap


def _fsdp2(torch, group, device, cuda: bool):
    """FSDP2: shard each block, then the root; bf16 parameters with fp32 gradient reduction on GPUs."""
    from torch.distributed.device_mesh import DeviceMesh

    fully_shard, MixedPrecisionPolicy = _fsdp_api()

    def wrap(m):
        mesh = DeviceMesh.from_group(group, device.type)
        kw = {"mp_policy": MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)} if cuda else {}
        for blk in m.layers:
            fully_shard(blk, mesh=mesh, **kw)
        fully_shard(m, mesh=mesh, **kw)
        return m
    return wrap


def scale_worker(denv: DistEnv, cfg: ScaleConfig) -> dict | None:
    torch, dist, backend = init_group(denv, cfg.device, cfg.timeout_s)
    from .step import Trainer, card_and_peak, memory_budget, software

    cuda = cfg.device == "cuda"
    device = torch.device("cuda", denv.local_rank) if cuda else torch.device("cpu")
    if not cuda:  # fair weak scaling on CPU: each process gets its share of the cores
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // denv.local_world_size))
    else:
        torch.backends.cuda.matmul.allow_tf32 = True
    sizes = check_sizes(cfg.sizes, denv.world_size)
    a = cfg.arch
    budget = memory_budget(torch, cfg.device, cfg.memory_gb, denv.local_rank)
    fit = torch.tensor([A.layers_that_fit(a, cfg.seq, cfg.mbs, budget, cfg.checkpoint)], device=device)
    dist.all_reduce(fit, op=dist.ReduceOp.MIN)  # every rank runs the same proxy
    if int(fit.item()) < 1:
        raise A.no_fit_error(a, cfg.seq, cfg.mbs, budget, cfg.checkpoint)
    layers = min(a.layers, int(fit.item()), cfg.max_layers or a.layers)
    arch = a.with_layers(layers)
    total_mem = torch.cuda.get_device_properties(device).total_memory if cuda else None
    wrap = choose_wrap(cfg.wrap, cfg.device, arch.params(), total_mem)

    points = []
    for k in sizes:
        group = dist.new_group(list(range(k)))  # collective: every rank calls it
        if denv.rank < k:
            wrap_fn = _ddp(group, denv.local_rank, cuda) if wrap == "ddp" else _fsdp2(torch, group, device, cuda)
            autocast = cuda and wrap == "ddp"  # FSDP2 casts the parameters itself (mp_policy)
            trainer = Trainer(torch, arch, cfg.seq, cfg.mbs, device, cfg.compile, cfg.checkpoint, wrap=wrap_fn,
                              seed=denv.rank, autocast=autocast)
            times = trainer.timed(cfg.steps, cfg.warmup)
            t = torch.tensor([statistics.median(times)], dtype=torch.float64, device=device)
            dist.all_reduce(t, op=dist.ReduceOp.MAX, group=group)  # the slowest rank sets the pace
            if denv.rank == 0:
                points.append({"cards": k, "nodes": -(-k // denv.local_world_size), "step_time_s": float(t.item()),
                               "tokens_per_step_per_card": cfg.mbs * cfg.seq, "rank0_step_times_s": times})
            del trainer
            if cuda:
                torch.cuda.empty_cache()
        dist.barrier()
    if denv.rank != 0:
        return None

    card = card_and_peak(torch, cfg.device, cfg.gpu, cfg.peak_tflops, denv.local_rank)
    fpt = arch.flops_per_token(cfg.seq)
    rows = figures.scaling_rows(points)
    for r in rows:
        r["tflops_per_card"] = fpt * r["tokens_per_s_per_card"] / 1e12
        r["mfu"] = r["tflops_per_card"] / card["peak_tflops"] if card["peak_tflops"] else None
    bar, bar_source = figures.scaling_bar()
    last = rows[-1]
    out = {
        "kind": "scale", "device": cfg.device, **card, "backend": backend, "wrap": wrap,
        "world_size": denv.world_size, "nnodes": denv.nnodes, "launcher": denv.launcher,
        "model": {**a.to_dict(), "params_full": a.params(), "params_run": arch.params()},
        "layers_run": layers, "layers_full": a.layers, "proxy": layers < a.layers,
        "config": {"seq": cfg.seq, "mbs": cfg.mbs, "steps": cfg.steps, "warmup": cfg.warmup, "compile": cfg.compile,
                   "checkpoint": cfg.checkpoint, "sizes": sizes, "scaling": "weak (same micro-batch per card)"},
        "flops_per_token": fpt,
        "points": rows,
        "max_cards": last["cards"],
        "efficiency": last["efficiency"],
        "cross_node": last["nodes"] > 1,
        "bar": bar, "bar_source": bar_source, "meets_bar": last["efficiency"] >= bar,
        "software": software(torch),
    }
    if not cuda:
        out["note"] = ("CPU processes share the machine's cores and memory bandwidth: this checks the code path, "
                       "not a fabric")
    return out


def run_scale(cfg: ScaleConfig) -> tuple[dict | None, int]:
    cfg.check()
    nproc = cfg.nproc
    if cfg.device == "cuda":
        from .dist import check_device, torchrun_env

        torch = check_device("cuda")
        if torchrun_env() is None:
            nproc = nproc or torch.cuda.device_count()
            if nproc > torch.cuda.device_count():
                raise KashuError(f"--nproc {nproc} but only {torch.cuda.device_count()} GPU(s) visible",
                                 f"--nproc {nproc}，但只有 {torch.cuda.device_count()} 块 GPU 可见", "nproc")
    return run_distributed(scale_worker, (cfg,), nproc, cfg.timeout_s)
