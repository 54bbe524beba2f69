"""The collective benchmark with 2 gloo processes on CPU."""

import pytest

torch = pytest.importorskip("torch")

from kashu import collectives  # noqa: E402
from kashu.bench.comm import CommConfig, run_comm  # noqa: E402
from kashu.errors import KashuError  # noqa: E402


@pytest.mark.slow
def test_comm_two_gloo_processes():
    r, rank = run_comm(CommConfig(device="cpu", nproc=2, sizes=(4096, 65536), iters=2, warmup=1, timeout_s=120))
    assert rank == 0 and r["backend"] == "gloo" and r["world_size"] == 2
    assert {x["op"] for x in r["results"]} == {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"}
    for x in r["results"]:
        assert x["time_s"] > 0 and x["algbw_gbps"] > 0
        assert abs(x["algbw_gbps"] - x["size_bytes"] / x["time_s"] / 1e9) < 1e-9 * x["algbw_gbps"]
        factor = float(collectives.bus_factor(x["op"], 2))
        assert abs(x["busbw_gbps"] - x["algbw_gbps"] * factor) < 1e-9 * x["busbw_gbps"]
    assert r["summary"]["all_reduce"]["largest_size_bytes"] == 65536


def test_comm_bad_input(monkeypatch):
    with pytest.raises(KashuError, match="unknown"):
        run_comm(CommConfig(device="cpu", ops=("all_sum",)))
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    with pytest.raises(KashuError, match="incomplete"):
        run_comm(CommConfig(device="cpu", sizes=(4096,)))
