import kashu


def test_plan_api_smoke():
    p = kashu.plan(params="7B", tokens="1T", gpu="H800", days=30, mfu=0.45)
    assert abs(p.total_flops / 4.2e22 - 1) < 1e-9
    assert 36 <= p.gpus_min <= 40
