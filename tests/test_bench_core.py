"""Bench pieces that need no torch: shapes, FLOPs, memory fit, figures, torchrun env, the store."""

import json

import pytest
from sqlalchemy import create_engine, inspect, text

from kashu import compute
from kashu.bench import arch as A
from kashu.bench import figures, results
from kashu.bench.dist import torchrun_env
from kashu.errors import KashuError

LLAMA3_8B = A.make_arch(32, 4096, 32, 8, 14336, 128256, "llama3-8b")


def test_llama3_8b_parameter_count():
    # Llama 3 8B: 8.03e9 parameters (Meta model card)
    assert abs(LLAMA3_8B.params() / 8.03e9 - 1) < 0.005


def test_flops_use_the_planners_function(monkeypatch):
    a = A.make_arch(2, 256, 4, vocab=1024)
    expect = compute.flops_per_token(a.flop_params(), 2, 256, 128)
    assert a.flops_per_token(128) == expect == 6 * a.flop_params() + 12 * 2 * 256 * 128
    # one function: the bench goes through kashu.compute.flops_per_token itself
    monkeypatch.setattr(compute, "flops_per_token", lambda *a, **k: 42.0)
    assert a.flops_per_token(128) == 42.0


def test_planner_and_bench_agree_without_shape():
    import kashu

    p = kashu.plan(params="7B", tokens="1T", gpu="H800", days=30)
    assert p.flops_per_token == compute.flops_per_token(7e9)


def test_defaults_and_bad_arch():
    a = A.make_arch(layers=2, hidden=256)
    assert (a.heads, a.kv_heads, a.ffn, a.vocab) == (2, 2, 768, 32000)
    with pytest.raises(KashuError):
        A.make_arch(hidden=256)
    with pytest.raises(KashuError, match="divisible"):
        A.make_arch(2, 250, 4)
    with pytest.raises(KashuError, match="multiple"):
        A.make_arch(2, 256, 4, 3)


def test_layers_that_fit():
    # 8B on an 80 GB card at seq 8192: only a few of 32 layers fit -> proxy
    n = A.layers_that_fit(LLAMA3_8B, 8192, 1, 0.9 * 80e9)
    assert 3 <= n < 32
    assert A.layers_that_fit(LLAMA3_8B, 8192, 1, 0.9 * 80e9, checkpoint=True) > n
    assert A.layers_that_fit(LLAMA3_8B, 8192, 1, 1e9) == 0
    assert A.layers_that_fit(A.make_arch(2, 64), 64, 1, 1e12) == 2
    assert "one layer" in str(A.no_fit_error(LLAMA3_8B, 8192, 1, 1e9, False))


def test_preset_without_models_module_is_a_clear_error():
    try:
        import kashu.models  # noqa: F401
    except ImportError:
        with pytest.raises(KashuError, match="--layers"):
            A.arch_from_preset("llama3-8b")
    else:
        a, _seq = A.arch_from_preset("llama3-8b")
        assert a.hidden == 4096


@pytest.mark.parametrize("name,expect", [
    ("NVIDIA H100 80GB HBM3", "H100-SXM"), ("NVIDIA H800", "H800-SXM"), ("NVIDIA H200", "H200"),
    ("NVIDIA A100-SXM4-80GB", "A100-80GB"), ("NVIDIA GeForce RTX 4090", "RTX 4090"), ("NVIDIA H100 PCIe", "H100-PCIe"),
    ("NVIDIA H20", "H20"), ("Some Unknown Card", None),
])
def test_match_card(name, expect):
    acc = figures.match_card(name)
    assert (acc.name if acc else None) == expect


def test_figures():
    s = figures.summarize_times([0.2, 0.1, 0.3, 0.1, 0.1])
    assert s["median"] == 0.1 and s["min"] == 0.1 and s["max"] == 0.3
    f = figures.step_figures(0.5, 1000, 6e9, 1e12)
    assert f["tokens_per_s"] == 2000 and abs(f["tflops"] - 12.0) < 1e-9 and abs(f["mfu"] - 12.0) < 1e-9
    assert figures.step_figures(0.5, 1000, 6e9, None)["mfu"] is None
    r = figures.comm_figures("all_reduce", 1e9, 0.01, 8)
    assert abs(r["algbw_gbps"] - 100) < 1e-9 and abs(r["busbw_gbps"] - 175) < 1e-9
    rows = figures.scaling_rows([{"cards": 1, "step_time_s": 1.0, "tokens_per_step_per_card": 100},
                                 {"cards": 2, "step_time_s": 1.25, "tokens_per_step_per_card": 100}])
    assert rows[1]["efficiency"] == 0.8 and rows[1]["tokens_per_s"] == 160
    assert figures.parse_size("4K") == 4096 and figures.parse_size("1G") == 2**30
    with pytest.raises(KashuError):
        figures.parse_size("lots")


def test_torchrun_env():
    assert torchrun_env({}) is None
    ok = {"RANK": "1", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "29500"}
    e = torchrun_env(ok)
    assert (e.rank, e.world_size, e.nnodes) == (1, 4, 2)
    with pytest.raises(KashuError, match="MASTER_ADDR"):
        torchrun_env({k: v for k, v in ok.items() if k != "MASTER_ADDR"})
    with pytest.raises(KashuError, match="RANK=4"):
        torchrun_env({**ok, "RANK": "4"})
    with pytest.raises(KashuError, match="LOCAL_RANK"):
        torchrun_env({**ok, "LOCAL_RANK": "2"})
    with pytest.raises(KashuError, match="whole number"):
        torchrun_env({**ok, "WORLD_SIZE": "four"})


def _step_doc(**kw):
    d = {"kind": "step", "device": "cuda", "gpu": "H800-SXM", "device_name": "NVIDIA H800", "mfu": 0.47,
         "step_time_s": 1.0, "tokens_per_s": 8192.0, "tflops": 465.0, "layers_run": 8, "layers_full": 32,
         "model": {"name": "llama3-8b"}}
    d.update(kw)
    return d


def test_store_round_trip_tolerates_other_tables(tmp_path):
    db = str(tmp_path / "k.db")
    eng = create_engine(f"sqlite:///{db}")
    with eng.begin() as c:  # another part of kashu's table, already there
        c.execute(text("CREATE TABLE quotes (id INTEGER PRIMARY KEY, vendor TEXT)"))
        c.execute(text("INSERT INTO quotes (vendor) VALUES ('x')"))
    a = results.save(_step_doc(), db)
    b = results.save(_step_doc(mfu=0.5), db)
    assert b["id"] > a["id"]
    assert results.get(a["id"], db)["mfu"] == 0.47
    assert results.get("latest", db)["id"] == b["id"]
    assert [r["id"] for r in results.list_runs(db)] == [b["id"], a["id"]]
    assert set(inspect(eng).get_table_names()) == {"quotes", "bench_runs"}
    with eng.connect() as c:
        assert c.execute(text("SELECT count(*) FROM quotes")).scalar() == 1
        stored = json.loads(c.execute(text("SELECT result_json FROM bench_runs WHERE id = :i"), {"i": a["id"]}).scalar())
    assert stored["id"] == a["id"] and stored["created_at"]
    with pytest.raises(KashuError, match="no benchmark with id"):
        results.get(999, db)
    with pytest.raises(KashuError):
        results.get("latest", str(tmp_path / "empty.db"))


def test_without_torch_bench_says_how_to_install():
    import subprocess
    import sys

    code = ("import sys; sys.modules['torch'] = None\nfrom kashu.cli import main\n"
            "main(['bench', 'step', '--device', 'cpu', '--layers', '2', '--hidden', '64'])")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "kashu[bench]" in p.stderr and "Traceback" not in p.stderr
