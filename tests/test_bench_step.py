"""The one-card step benchmark, for real on CPU with a tiny model."""

import json
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from kashu import compute  # noqa: E402
from kashu.bench import arch as A  # noqa: E402
from kashu.bench import results  # noqa: E402
from kashu.bench.step import StepConfig, run_step  # noqa: E402
from kashu.errors import KashuError  # noqa: E402

TINY = A.make_arch(2, 64, 4, 2, vocab=256)


def test_model_trains_and_shapes():
    from kashu.bench.model import Decoder, loss_fn, random_batch

    m = Decoder(TINY, 32)
    assert sum(p.numel() for p in m.parameters()) == TINY.params()
    x, y = random_batch(256, 2, 32, "cpu")
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
    losses = []
    for _ in range(5):  # overfit the same batch: the loss falls
        loss = loss_fn(m(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    # causal: changing a later token does not change earlier logits
    x2 = x.clone()
    x2[:, -1] = (x2[:, -1] + 1) % 256
    with torch.no_grad():
        assert torch.allclose(m(x)[:, :-1], m(x2)[:, :-1], atol=1e-5)


def test_step_bench_figures_are_consistent():
    cfg = StepConfig(arch=TINY, seq=64, mbs=2, steps=3, warmup=1, device="cpu", peak_tflops=1.0, progress=False,
                     checkpoint=True)
    r = run_step(cfg)
    tokens = 2 * 64
    assert abs(r["tokens_per_s"] * r["step_time_s"] / tokens - 1) < 1e-9
    assert r["flops_per_token"] == compute.flops_per_token(r["model"]["flop_params_run"], 2, 64, 64)
    assert abs(r["tflops"] - r["flops_per_token"] * r["tokens_per_s"] / 1e12) < 1e-12
    assert abs(r["mfu"] - r["tflops"] / 1.0) < 1e-12
    assert r["layers_run"] == 2 and r["proxy"] is False and r["gpu"] is None
    assert len(r["step_times_s"]) == 3 and r["peak_memory_gb"] > 0
    assert r["software"]["torch"] == torch.__version__


def test_proxy_and_errors():
    r = run_step(StepConfig(arch=TINY.with_layers(6), seq=32, mbs=1, steps=1, warmup=0, device="cpu", max_layers=1,
                            progress=False))
    assert r["layers_run"] == 1 and r["proxy"] is True and r["mfu"] is None
    with pytest.raises(KashuError, match="one layer"):
        run_step(StepConfig(arch=TINY, seq=32, device="cpu", memory_gb=1e-4, progress=False))
    if not torch.cuda.is_available():
        with pytest.raises(KashuError, match="--device cuda"):
            run_step(StepConfig(arch=TINY, seq=32, device="cuda", progress=False))


@pytest.mark.slow
def test_cli_step_list_show_and_nothing_stored_on_failure(tmp_path):
    db = str(tmp_path / "b.db")
    base = [sys.executable, "-m", "kashu", "bench"]
    p = subprocess.run(base + ["step", "--device", "cpu", "--layers", "2", "--hidden", "64", "--heads", "2", "--vocab",
                               "256", "--seq", "64", "--mbs", "2", "--steps", "2", "--warmup", "1", "--gpu", "H800",
                               "--db", db, "--json", "--out", str(tmp_path / "r.json")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    for key in ("id", "device", "step_time_s", "tokens_per_s", "tflops", "mfu", "peak_memory_gb", "layers_run", "proxy"):
        assert key in r
    assert r["gpu"] is None and r["peak_of"] == "H800-SXM" and r["mfu"] > 0  # CPU run: never "on" an H800
    assert json.loads((tmp_path / "r.json").read_text())["id"] == r["id"]
    bad = subprocess.run(base + ["step", "--device", "cpu", "--layers", "2", "--hidden", "64", "--memory-gb", "0.0001",
                                 "--db", db, "--json"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "one layer" in bad.stderr
    assert [x["id"] for x in results.list_runs(db)] == [r["id"]]
    shown = subprocess.run(base + ["show", str(r["id"]), "--db", db, "--json"], capture_output=True, text=True, timeout=60)
    assert json.loads(shown.stdout)["tokens_per_s"] == r["tokens_per_s"]
    human = subprocess.run(base + ["list", "--db", db, "--lang", "zh"], capture_output=True, text=True, timeout=60)
    assert "基准测试记录" in human.stdout
