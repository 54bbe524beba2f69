"""Weak scaling with 2 gloo processes on CPU, and the distributed bad-input paths."""

import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from kashu.bench import arch as A  # noqa: E402
from kashu.bench import results  # noqa: E402
from kashu.bench.dist import free_port  # noqa: E402
from kashu.bench.scale import ScaleConfig, check_sizes, choose_wrap, run_scale  # noqa: E402
from kashu.errors import KashuError  # noqa: E402

TINY = A.make_arch(2, 64, 4, 2, vocab=256)


def test_sizes_and_wrap():
    assert check_sizes((), 8) == [1, 2, 4, 8] and check_sizes((), 6) == [1, 2, 4, 6] and check_sizes((4,), 4) == [1, 4]
    with pytest.raises(KashuError):
        check_sizes((16,), 8)
    assert choose_wrap("auto", "cuda", 1_000_000, 80e9) == "ddp"
    assert choose_wrap("auto", "cuda", 8_000_000_000, 80e9) == "fsdp2"
    assert choose_wrap("fsdp", "cpu", 1, None) == "fsdp2"


@pytest.mark.slow
@pytest.mark.parametrize("wrap", ["ddp", "fsdp"])
def test_scale_two_processes(wrap):
    r, rank = run_scale(ScaleConfig(arch=TINY, seq=32, mbs=2, steps=2, warmup=1, device="cpu", wrap=wrap, nproc=2,
                                    peak_tflops=1.0, timeout_s=120))
    assert rank == 0 and r["world_size"] == 2 and [p["cards"] for p in r["points"]] == [1, 2]
    assert r["wrap"] == ("ddp" if wrap == "ddp" else "fsdp2")
    one, two = r["points"]
    assert one["efficiency"] == 1.0
    assert abs(two["efficiency"] - (two["tokens_per_s"] / 2) / one["tokens_per_s"]) < 1e-9
    assert r["efficiency"] == two["efficiency"] and r["meets_bar"] == (r["efficiency"] >= 0.8) and r["bar"] == 0.8
    assert two["mfu"] is not None


def _cli(args, env_extra, tmp_path, timeout=120):
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
                                                             "MASTER_ADDR", "MASTER_PORT")}
    env.update(env_extra, KASHU_DB=str(tmp_path / "b.db"))
    return subprocess.run([sys.executable, "-m", "kashu", "bench", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


@pytest.mark.slow
def test_cli_scale_and_unreachable_rendezvous(tmp_path):
    p = _cli(["scale", "--device", "cpu", "--nproc", "2", "--layers", "2", "--hidden", "64", "--vocab", "256", "--seq",
              "32", "--steps", "1", "--warmup", "0", "--json"], {}, tmp_path)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["kind"] == "scale" and results.get(r["id"], str(tmp_path / "b.db"))["efficiency"] == r["efficiency"]
    port = str(free_port())  # nobody listens there
    bad = _cli(["comm", "--device", "cpu", "--timeout", "2", "--json"],
               {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1",
                "MASTER_PORT": port}, tmp_path)
    assert bad.returncode == 2 and "cannot join the process group" in bad.stderr and "Traceback" not in bad.stderr
    inconsistent = _cli(["scale", "--device", "cpu", "--layers", "2", "--hidden", "64"],
                        {"RANK": "3", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port},
                        tmp_path)
    assert inconsistent.returncode == 2 and "inconsistent" in inconsistent.stderr
    assert [x["id"] for x in results.list_runs(str(tmp_path / "b.db"))] == [r["id"]]  # nothing half-written
