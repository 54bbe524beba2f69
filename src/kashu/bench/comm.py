"""`kashu bench comm`: the fabric — collective bandwidth over a sweep of message sizes.

All-reduce, all-gather, reduce-scatter and all-to-all with torch.distributed (NCCL on GPUs, gloo
on CPU), float32 buffers like nccl-tests' default. For each op and size: warm-up calls, then
`iters` timed calls between device synchronisations; the time of a size is the slowest rank's
mean. Bandwidths use the nccl-tests definitions (kashu.collectives, doc/PERFORMANCE.md):
algbw = S / t and busbw = algbw × factor(n), with S the whole tensor for all-reduce, the gathered
output for all-gather, the full input for reduce-scatter and the send buffer for all-to-all.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..errors import KashuError
from . import figures
from .dist import DistEnv, init_group, run_distributed

OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
DEFAULT_SIZES = {"cpu": ["4K", "64K", "1M", "4M"], "cuda": ["1M", "8M", "64M", "256M", "1G"]}


@dataclass
class CommConfig:
    device: str = "cuda"
    nproc: int | None = None
    sizes: tuple[int, ...] = ()
    ops: tuple[str, ...] = OPS
    iters: int = 0  # 0: 20 on CUDA, 5 on CPU
    warmup: int = 0  # 0: 5 on CUDA, 2 on CPU
    timeout_s: float = 300.0

    def resolved(self) -> CommConfig:
        bad = [o for o in self.ops if o not in OPS]
        if bad:
            raise KashuError(f"--ops {', '.join(bad)}: unknown; expected some of {', '.join(OPS)}",
                             f"--ops {', '.join(bad)} 未知；应为 {', '.join(OPS)} 中的若干个", "ops")
        if self.device not in ("cpu", "cuda"):
            raise KashuError(f"--device {self.device!r} must be cuda or cpu", f"--device {self.device!r} 应为 cuda 或 cpu",
                             "device")
        sizes = self.sizes or tuple(figures.parse_size(s) for s in DEFAULT_SIZES[self.device])
        iters = self.iters or (20 if self.device == "cuda" else 5)
        warmup = self.warmup or (5 if self.device == "cuda" else 2)
        if iters < 1 or warmup < 0:
            raise KashuError("--iters must be at least 1", "--iters 至少为 1", "iters")
        return CommConfig(self.device, self.nproc, tuple(sorted(set(sizes))), tuple(self.ops), iters, warmup,
                          self.timeout_s)


def _buffers(torch, op: str, size: int, n: int, device):
    """Buffers for one call moving S = `size` bytes per rank (rounded down to whole float32s divisible by n)."""
    numel = max(n, (size // 4) // n * n)
    big = torch.ones(numel, dtype=torch.float32, device=device)
    if op == "all_reduce":
        return (big,), numel * 4
    small = torch.ones(numel // n, dtype=torch.float32, device=device)
    if op == "all_gather":
        return (big, small), numel * 4  # output (S), input (S/n)
    if op == "reduce_scatter":
        return (small, big), numel * 4  # output (S/n), input (S)
    return (torch.empty_like(big), big), numel * 4  # all_to_all: output, input


def comm_worker(denv: DistEnv, cfg: CommConfig) -> dict | None:
    torch, dist, backend = init_group(denv, cfg.device, cfg.timeout_s)
    device = torch.device("cuda", denv.local_rank) if cfg.device == "cuda" else torch.device("cpu")
    n = denv.world_size
    # newer PyTorch renames the tensor forms *_single; same semantics
    gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
    scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
    call = {
        "all_reduce": lambda b: dist.all_reduce(b[0]),
        "all_gather": lambda b: gather(b[0], b[1]),
        "reduce_scatter": lambda b: scatter(b[0], b[1]),
        "all_to_all": lambda b: dist.all_to_all_single(b[0], b[1]),
    }

    def sync():
        if cfg.device == "cuda":
            torch.cuda.synchronize(device)

    rows = []
    for op in cfg.ops:
        for size in cfg.sizes:
            bufs, s_bytes = _buffers(torch, op, size, n, device)
            for _ in range(cfg.warmup):
                call[op](bufs)
            sync()
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(cfg.iters):
                call[op](bufs)
            sync()
            dt = torch.tensor([(time.perf_counter() - t0) / cfg.iters], dtype=torch.float64, device=device)
            dist.all_reduce(dt, op=dist.ReduceOp.MAX)
            rows.append(figures.comm_figures(op, s_bytes, float(dt.item()), n))
            del bufs
    if denv.rank != 0:
        return None
    from .step import software

    name = torch.cuda.get_device_name(denv.local_rank) if cfg.device == "cuda" else "cpu"
    acc = figures.match_card(name) if cfg.device == "cuda" else None
    return {
        "kind": "comm", "device": cfg.device, "device_name": name, "gpu": acc.name if acc else None,
        "backend": backend, "world_size": n, "nnodes": denv.nnodes, "launcher": denv.launcher,
        "config": {"ops": list(cfg.ops), "sizes_bytes": list(cfg.sizes), "iters": cfg.iters, "warmup": cfg.warmup,
                   "dtype": "float32"},
        "definitions": "nccl-tests doc/PERFORMANCE.md: algbw = S/t, busbw = algbw × factor(n); "
                       "all_reduce 2(n-1)/n, all_gather/reduce_scatter/all_to_all (n-1)/n; GB/s = 1e9 B/s",
        "results": rows,
        "summary": figures.comm_summary(rows),
        "software": software(torch),
    }


def run_comm(cfg: CommConfig) -> tuple[dict | None, int]:
    """(result on rank 0 else None, rank). Spawns `--nproc` processes unless under torchrun."""
    cfg = cfg.resolved()
    if cfg.device == "cuda":
        from .dist import check_device, torchrun_env

        torch = check_device("cuda")
        if torchrun_env() is None and (cfg.nproc or 2) > torch.cuda.device_count():
            raise KashuError(f"--nproc {cfg.nproc or 2} but only {torch.cuda.device_count()} GPU(s) visible",
                             f"--nproc {cfg.nproc or 2}，但只有 {torch.cuda.device_count()} 块 GPU 可见", "nproc")
    return run_distributed(comm_worker, (cfg,), cfg.nproc, cfg.timeout_s)
