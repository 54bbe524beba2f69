"""`kashu plan --from-bench`: measured MFU / scaling / busbw replace the predictions; other cards refused."""

import json
import subprocess
import sys

import pytest

import kashu
from kashu.bench import results
from kashu.errors import KashuError


def _store(db, **kw):
    d = {"kind": "step", "device": "cuda", "gpu": "H800-SXM", "device_name": "NVIDIA H800", "mfu": 0.47,
         "step_time_s": 1.0, "tokens_per_s": 8192.0, "tflops": 465.0, "layers_run": 8, "layers_full": 32, "proxy": True,
         "model": {"name": "llama3-8b", "params_full": 8.03e9}}
    d.update(kw)
    return results.save(d, db)


@pytest.fixture
def db(tmp_path, monkeypatch):
    path = str(tmp_path / "k.db")
    monkeypatch.setenv("KASHU_DB", path)
    return path


def test_measured_mfu_replaces_the_default(db):
    r = _store(db)
    base = kashu.plan(params="8B", tokens="1T", gpu="H800", days=30)
    p = kashu.plan(params="8B", tokens="1T", gpu="H800", days=30, from_bench=str(r["id"]))
    assert p.mfu == 0.47 and p.inputs["mfu_source"] == f"bench:{r['id']}"
    assert "mfu" not in p.defaults_used
    assert abs(p.gpu_hours / base.gpu_hours - base.mfu / 0.47) < 1e-9
    b = p.to_dict()["bench"]
    assert b["mfu"]["measured"] == 0.47 and b["mfu"]["predicted"] == base.mfu
    if base.inputs["mfu_source"].startswith("predicted"):
        # one card replaces the compute only: the predicted layout's communication and bubble stay
        f = b["mfu"]["cluster_factor"]
        assert 0 < f <= 1 and p.scaling_efficiency == f
        assert 0 < b["mfu"]["predicted_compute_one_card"] <= 1
    else:
        assert p.scaling_efficiency == base.scaling_efficiency
    assert kashu.plan(params="8B", tokens="1T", gpu="H800", days=30, from_bench="latest").mfu == 0.47


def test_other_card_or_cpu_refused_unless_forced(db):
    h100 = _store(db, gpu="H100-SXM", device_name="NVIDIA H100 80GB HBM3")
    cpu = _store(db, device="cpu", gpu=None, device_name="x86_64", mfu=0.1)
    for r in (h100, cpu):
        with pytest.raises(KashuError, match="--force"):
            kashu.plan(params="8B", tokens="1T", gpu="H800", days=30, from_bench=str(r["id"]))
    p = kashu.plan(params="8B", tokens="1T", gpu="H800", days=30, from_bench=str(cpu["id"]), force=True)
    assert p.mfu == 0.1 and any("--force" in w for w in p.warnings)
    none = _store(db, mfu=None)
    with pytest.raises(KashuError, match="no MFU"):
        kashu.plan(params="8B", tokens="1T", gpu="H800", days=30, from_bench=str(none["id"]))
    with pytest.raises(KashuError, match="--mfu"):
        kashu.plan(params="8B", tokens="1T", gpu="H800", days=30, mfu=0.4, from_bench=str(h100["id"]), force=True)


def test_scale_and_comm_runs(db):
    step = _store(db)
    scale = results.save({"kind": "scale", "device": "cuda", "gpu": "H800-SXM", "efficiency": 0.83, "max_cards": 16,
                          "nnodes": 2, "wrap": "fsdp2", "meets_bar": True, "bar": 0.8}, db)
    comm = results.save({"kind": "comm", "device": "cuda", "gpu": "H800-SXM", "world_size": 16, "nnodes": 2,
                         "backend": "nccl", "summary": {"all_reduce": {"busbw_gbps_at_largest": 180.0,
                                                                        "largest_size_bytes": 2**30, "peak_busbw_gbps": 181}}},
                        db)
    p = kashu.plan(params="8B", tokens="1T", gpu="H800", days=30, from_bench=f"{step['id']},{scale['id']},{comm['id']}")
    assert p.mfu == 0.47 and p.scaling_efficiency == 0.83
    b = p.to_dict()["bench"]
    assert b["scaling"]["measured"] == 0.83 and b["busbw_gbps"]["measured"] == 180.0
    with pytest.raises(KashuError, match="at most one"):
        kashu.plan(params="8B", tokens="1T", gpu="H800", days=30, from_bench=f"{step['id']},{step['id']}")


@pytest.mark.slow
def test_cli_report_and_refusal(db):
    r = _store(db)
    cpu = _store(db, device="cpu", gpu=None, device_name="x86_64", mfu=0.1)
    base = [sys.executable, "-m", "kashu", "plan", "--params", "8B", "--tokens", "1T", "--gpu", "H800", "--days", "30"]
    out = subprocess.run(base + ["--from-bench", str(r["id"]), "--lang", "en"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "measured / predicted" in out.stdout and f"bench:{r['id']}" in out.stdout
    js = subprocess.run(base + ["--from-bench", "latest", "--json", "--force"], capture_output=True, text=True, timeout=60)
    assert json.loads(js.stdout)["inputs"]["mfu_source"] == f"bench:{cpu['id']}"
    bad = subprocess.run(base + ["--from-bench", str(cpu["id"])], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "CPU" in bad.stderr
    missing = subprocess.run(base + ["--from-bench", "999"], capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "999" in missing.stderr


def test_plan_never_imports_torch():
    code = ("import sys, kashu; from kashu.cli import main\n"
            "try:\n main(['plan','--params','7B','--tokens','1T','--days','30','--json'])\nexcept SystemExit: pass\n"
            "assert 'torch' not in sys.modules, 'plan imported torch'")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr


def test_scale_run_alone_replaces_the_predicted_scaling(db):
    scale = results.save({"kind": "scale", "device": "cuda", "gpu": "H800-SXM", "efficiency": 0.5, "max_cards": 16,
                          "nnodes": 2, "wrap": "fsdp2", "meets_bar": False, "bar": 0.8}, db)
    base = kashu.plan(params="8B", tokens="1T", gpu="H800", days=30)
    p = kashu.plan(params="8B", tokens="1T", gpu="H800", days=30, from_bench=str(scale["id"]))
    assert p.mfu * p.scaling_efficiency < base.mfu * base.scaling_efficiency  # a poor measured scaling costs cards
    assert p.gpus_recommended > base.gpus_recommended
