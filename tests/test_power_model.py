"""Power and racks."""

import pytest

from kashu import power
from kashu.errors import KashuError


def test_dgx_h100_node_power():
    # NVIDIA DGX H100 datasheet: 10.2 kW max for 8 × 700 W GPUs
    assert power.node_watts(8, 700) == pytest.approx(10192)


def test_racks_and_energy_hand_computed():
    r = power.power_model(nodes=64, gpus_per_node=8, tdp_w=700, switches=24, switch_w=1700, kw_per_rack=40, pue=1.3, days=10)
    assert r.nodes_per_rack == 3  # ⌊40 / 10.192⌋
    assert r.total_kw == pytest.approx(64 * 10.192 + 24 * 1.7)
    racks_compute = 22  # ⌈64 / 3⌉
    spare_kw = racks_compute * 40 - 64 * 10.192
    assert r.racks == racks_compute + max(0, -(-(24 * 1.7 - spare_kw) // 40))
    assert r.energy_mwh == pytest.approx(r.total_kw * 1.3 * 240 / 1e3)


def test_node_bigger_than_rack_is_flagged():
    r = power.power_model(nodes=4, gpus_per_node=8, tdp_w=700, kw_per_rack=8)
    assert r.node_exceeds_rack and r.racks == 4


def test_bad_inputs():
    with pytest.raises(KashuError, match="at least 1"):
        power.power_model(nodes=4, gpus_per_node=8, tdp_w=700, pue=0.9)
    with pytest.raises(KashuError):
        power.power_model(nodes=4, gpus_per_node=8, tdp_w=700, kw_per_rack=0)
