"""Distributed plumbing for comm and scale: torchrun's environment, process groups, local spawning.

Under torchrun (one node: `torchrun --standalone --nproc-per-node 8 -m kashu bench comm`; many nodes:
`torchrun --nnodes 4 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint HOST:29500
--rdzv-id JOB -m kashu bench scale ...` on every node) the ranks come from the environment.
Without torchrun, `--nproc N` spawns N local processes itself. Either way rank 0 gathers the
figures and is the only one that prints or stores anything.
"""

from __future__ import annotations

import os
import socket
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from ..errors import KashuError

TORCHRUN_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


@dataclass(frozen=True)
class DistEnv:
    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    master_addr: str
    master_port: int
    launcher: str  # torchrun | spawn

    @property
    def nnodes(self) -> int:
        return max(1, self.world_size // max(1, self.local_world_size))


def torchrun_env(env: Mapping[str, str] | None = None) -> DistEnv | None:
    """The torchrun environment if this process runs under torchrun, None if not; errors if inconsistent."""
    env = os.environ if env is None else env
    present = [k for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK") if env.get(k, "") != ""]
    if not present:
        return None
    missing = [k for k in TORCHRUN_VARS if env.get(k, "") == ""]
    if missing:
        raise KashuError(
            f"torchrun environment incomplete: {', '.join(present)} set but {', '.join(missing)} missing; launch with "
            "`torchrun --nproc-per-node N -m kashu bench ...`, or unset them and use --nproc N",
            f"torchrun 环境变量不完整：已设置 {', '.join(present)}，缺少 {', '.join(missing)}；请用 "
            "`torchrun --nproc-per-node N -m kashu bench ...` 启动，或清除这些变量改用 --nproc N", "torchrun")
    vals = {}
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_PORT"):
        v = env.get(k, "")
        if v == "" and k == "LOCAL_WORLD_SIZE":
            continue
        try:
            vals[k] = int(v)
        except ValueError:
            raise KashuError(f"torchrun environment: {k}={v!r} is not a whole number",
                             f"torchrun 环境变量 {k}={v!r} 不是整数", "torchrun") from None
    world, rank, local = vals["WORLD_SIZE"], vals["RANK"], vals["LOCAL_RANK"]
    local_world = vals.get("LOCAL_WORLD_SIZE", world)
    problems = []
    if world < 1:
        problems.append(f"WORLD_SIZE={world} < 1")
    if not 0 <= rank < world:
        problems.append(f"RANK={rank} is not in 0..WORLD_SIZE-1={world - 1}")
    if not 1 <= local_world <= world:
        problems.append(f"LOCAL_WORLD_SIZE={local_world} is not in 1..WORLD_SIZE={world}")
    elif world % local_world:
        problems.append(f"WORLD_SIZE={world} is not a multiple of LOCAL_WORLD_SIZE={local_world}")
    if not 0 <= local < local_world:
        problems.append(f"LOCAL_RANK={local} is not in 0..LOCAL_WORLD_SIZE-1={local_world - 1}")
    if not 0 < vals["MASTER_PORT"] < 65536:
        problems.append(f"MASTER_PORT={vals['MASTER_PORT']} is not a TCP port")
    if problems:
        raise KashuError("torchrun environment inconsistent: " + "; ".join(problems),
                         "torchrun 环境变量不一致：" + "；".join(problems), "torchrun")
    return DistEnv(rank, world, local, local_world, env["MASTER_ADDR"], vals["MASTER_PORT"], "torchrun")


def check_device(device: str):
    """torch, after checking that the device asked for exists."""
    from . import require_torch

    torch = require_torch()
    if device not in ("cpu", "cuda"):
        raise KashuError(f"--device {device!r} must be cuda or cpu", f"--device {device!r} 应为 cuda 或 cpu", "device")
    if device == "cuda" and not torch.cuda.is_available():
        why = "this PyTorch build has no CUDA" if not torch.version.cuda else "no GPU is visible (check nvidia-smi and CUDA_VISIBLE_DEVICES)"
        why_zh = "此 PyTorch 版本不含 CUDA" if not torch.version.cuda else "看不到 GPU（检查 nvidia-smi 和 CUDA_VISIBLE_DEVICES）"
        raise KashuError(f"--device cuda asked, but {why}; use --device cpu for a tiny functional run",
                         f"指定了 --device cuda，但{why_zh}；可用 --device cpu 做小模型功能测试", "device")
    return torch


def init_group(denv: DistEnv, device: str, timeout_s: float):
    """Join the process group (NCCL on GPUs, gloo on CPU); a failed rendezvous is a KashuError."""
    torch = check_device(device)
    import torch.distributed as dist

    backend = "nccl" if device == "cuda" else "gloo"
    if device == "cuda":
        if denv.local_rank >= torch.cuda.device_count():
            raise KashuError(f"LOCAL_RANK {denv.local_rank} but only {torch.cuda.device_count()} GPU(s) visible",
                             f"LOCAL_RANK {denv.local_rank}，但只有 {torch.cuda.device_count()} 块 GPU 可见", "nproc")
        torch.cuda.set_device(denv.local_rank)
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = denv.master_addr, str(denv.master_port)
    try:
        kw = {"device_id": torch.device("cuda", denv.local_rank)} if device == "cuda" else {}
        dist.init_process_group(backend, rank=denv.rank, world_size=denv.world_size, init_method="env://",
                                timeout=timedelta(seconds=timeout_s), **kw)
    except KashuError:
        raise
    except Exception as e:  # DistNetworkError, DistStoreError, TimeoutError, RuntimeError from the store
        raise KashuError(
            f"cannot join the process group at {denv.master_addr}:{denv.master_port} ({backend}, rank {denv.rank} of "
            f"{denv.world_size}): {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}; check that "
            "every node runs the same command, the rendezvous host and port are reachable, and the firewall allows them",
            f"无法加入进程组 {denv.master_addr}:{denv.master_port}（{backend}，rank {denv.rank}/{denv.world_size}）："
            f"{type(e).__name__}；请检查每个节点运行相同命令、汇合地址和端口可达、防火墙放行", "rdzv") from None
    return torch, dist, backend


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _entry(rank: int, nproc: int, port: int, fn, args, queue) -> None:
    """One spawned process: run fn(denv, *args); rank 0 sends its result, any rank its error."""
    denv = DistEnv(rank, nproc, rank, nproc, "127.0.0.1", port, "spawn")
    try:
        res = fn(denv, *args)
        if rank == 0:
            queue.put(("ok", res))
    except KashuError as e:
        queue.put(("kashu", e.message, e.zh, e.field, rank))
    except BaseException as e:  # report, do not hang the parent
        queue.put(("error", f"rank {rank}: {type(e).__name__}: {e}", traceback.format_exc(), None, rank))
    finally:
        try:
            import torch.distributed as dist

            if dist.is_initialized():
                dist.destroy_process_group()
        except Exception:
            pass


def spawn(fn, nproc: int, args: tuple, timeout_s: float):
    """Run fn(denv, *args) on `nproc` local processes; return rank 0's result or raise the first error."""
    from . import require_torch

    require_torch()
    import torch.multiprocessing as mp

    if nproc < 1:
        raise KashuError(f"--nproc {nproc} must be at least 1", f"--nproc {nproc} 至少为 1", "nproc")
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    port = free_port()
    pc = mp.start_processes(_entry, args=(nproc, port, fn, args, queue), nprocs=nproc, join=False,
                            start_method="spawn")
    import time

    deadline = time.monotonic() + timeout_s
    msgs = []
    try:
        while not pc.join(timeout=0.5):
            while not queue.empty():  # drain as we go so that no child blocks on a full pipe
                msgs.append(queue.get())
            if time.monotonic() > deadline:
                raise KashuError(f"the {nproc} benchmark processes did not finish within {timeout_s:.0f} s",
                                 f"{nproc} 个基准测试进程在 {timeout_s:.0f} 秒内未完成", "timeout")
    except mp.ProcessRaisedException:
        pass  # reported through the queue below
    except mp.ProcessExitedException as e:
        if queue.empty() and not msgs:
            raise KashuError(f"a benchmark process died ({e}); out of memory?",
                             f"一个基准测试进程异常退出（{e}）；内存不足？", "nproc") from None
    finally:
        for p in pc.processes:
            if p.is_alive():
                p.terminate()
    while not queue.empty():
        msgs.append(queue.get())
    errs = [m for m in msgs if m[0] != "ok"]
    kashu_errs = [m for m in errs if m[0] == "kashu"]
    if kashu_errs:
        _, en, zh, field, _ = kashu_errs[0]
        raise KashuError(en, zh, field)
    if errs:
        raise RuntimeError(f"benchmark process failed: {errs[0][1]}\n{errs[0][2]}")
    ok = [m for m in msgs if m[0] == "ok"]
    if not ok:
        raise RuntimeError("benchmark processes finished without a result")
    return ok[0][1]


def run_distributed(fn, args: tuple, nproc: int | None, timeout_s: float):
    """Under torchrun: run fn here (None on ranks > 0). Else spawn `nproc` local processes (default 2)."""
    denv = torchrun_env()
    if denv is None:
        return spawn(fn, nproc or 2, args, timeout_s), 0
    if nproc and nproc != denv.world_size:
        raise KashuError(f"--nproc {nproc} contradicts torchrun's WORLD_SIZE={denv.world_size}; drop --nproc under torchrun",
                         f"--nproc {nproc} 与 torchrun 的 WORLD_SIZE={denv.world_size} 矛盾；在 torchrun 下请去掉 --nproc",
                         "nproc")
    try:
        return fn(denv, *args), denv.rank
    finally:
        import torch.distributed as dist

        if dist.is_initialized():
            dist.destroy_process_group()
