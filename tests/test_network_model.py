"""Network: fat-tree counts (Al-Fares 2008, NVIDIA SuperPOD), hierarchical collectives, scaling efficiency."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kashu import network
from kashu.collectives import collective_time
from kashu.errors import KashuError


def test_two_tier_fat_tree_k64_holds_2048_with_64_leaf_32_spine():
    # Al-Fares et al. 2008: 2 tiers of k-port switches hold k²/2 endpoints with 3E/k switches
    t = network.fat_tree(2048, 64)
    assert (t.tiers, t.leaf, t.spine, t.switches, t.max_endpoints) == (2, 64, 32, 96, 2048)
    assert t.cables == 2048 + 64 * 32 and t.optics == 2 * t.cables


def test_three_tier_fat_tree_k64_full_is_5k2_over_4():
    # Al-Fares: 3 tiers hold k³/4 = 65,536 endpoints with 5k²/4 = 5,120 switches
    t = network.fat_tree(65536, 64)
    assert (t.tiers, t.leaf, t.spine, t.core, t.switches) == (3, 2048, 2048, 1024, 5120)
    assert network.fat_tree(2049, 64).tiers == 3


def test_superpod_scalable_unit_rail_optimised():
    # NVIDIA DGX SuperPOD H100 (RA-11333-001): 1 SU = 32 nodes × 8 rails of 400G → 8 leaf + 4 spine
    t = network.fat_tree(256, 64, rails=8, nodes=32)
    assert (t.leaf, t.spine, t.rail_optimised) == (8, 4, True)


def test_512_cards_ndr_is_16_leaf_8_spine():
    t = network.fat_tree(512, 64, rails=8, nodes=64)
    assert (t.tiers, t.leaf, t.spine, t.switches) == (2, 16, 8, 24)


def test_single_switch_and_oversubscription():
    assert network.fat_tree(40, 64).switches == 1
    # 3:1 oversubscribed leaf of 64 ports: 48 down / 16 up → 2048 endpoints need 43 leaves, ⌈43·16/64⌉ = 11 spines
    t = network.fat_tree(2048, 64, oversubscription=3)
    assert (t.leaf, t.spine) == (43, 11)
    assert t.switches < network.fat_tree(2048, 64).switches


def test_injection_and_inter_busbw_hand_computed():
    ndr = network.get_fabric("ib_ndr")
    assert ndr.port_bytes_per_s == 50e9  # 400 Gb/s
    assert network.injection_bandwidth(ndr.port_bytes_per_s, 8, 8) == 50e9
    assert network.inter_busbw_per_card(ndr.port_bytes_per_s, 8, 8, 0.74) == pytest.approx(37e9)
    eth = network.get_fabric("100g")
    assert network.inter_busbw_per_card(eth.port_bytes_per_s, 1, 8, 0.5) == pytest.approx(12.5e9 / 8 * 0.5)


def test_hierarchical_all_reduce_is_rs_ar_ag():
    s, k, m, intra, inter = 8e9, 8, 4, 160e9, 10e9
    # reduce-scatter in node: 7/8·S/160 GB/s; all-reduce across 4 nodes of S/8: 2·3/4·1e9/10 GB/s; all-gather in node
    want = 7 / 8 * 8e9 / 160e9 + 2 * 3 / 4 * 1e9 / 10e9 + 7 / 8 * 8e9 / 160e9
    assert network.hierarchical_time("all_reduce", s, k, m, intra, inter) == pytest.approx(want)
    assert network.hierarchical_time("all_reduce", s, k, 1, intra, inter) == pytest.approx(collective_time("all_reduce", s, k, intra))
    # achieved busbw of the whole all-reduce over 32 ranks
    bw = network.achieved_busbw("all_reduce", s, k, m, intra, inter)
    assert bw == pytest.approx(s * 2 * 31 / 32 / want)
    rs = network.hierarchical_time("reduce_scatter", s, k, m, intra, inter)
    ag = network.hierarchical_time("all_gather", s, k, m, intra, inter)
    assert rs + ag == pytest.approx(want)
    a2a = network.hierarchical_time("all_to_all", s, k, m, intra, inter)
    assert a2a == pytest.approx(max(s * 3 / 4 / inter, s * 7 / 32 / intra))


def _model(fabric="ib_ndr", nics=None, cards=512, compute_s=5.0, grad=14e9, layout=None):
    return network.network_model(grad_bytes=grad, cards=cards, gpus_per_node=8, intra_link_bytes_per_s=200e9,
                                 compute_s=compute_s, fabric=fabric, nics_per_node=nics, layout=layout)


def test_scaling_efficiency_hand_computed_pure_dp():
    r = _model("ib_ndr", 8, cards=64, compute_s=10.0, grad=16e9)
    # ZeRO-1: RS + AG of 16 GB per rank = one hierarchical all-reduce; no model parallel so 8 DP ranks per node
    intra, inter = 200e9 * 0.8, 50e9 * 0.74
    t = 2 * 7 / 8 * 16e9 / intra + 2 * 7 / 8 * 2e9 / inter + 2 * 1e-5  # + in-node latency of the two in-node phases
    buckets = math.ceil(16e9 / 25e6)
    t += buckets * 1e-5 * 2 * 3  # latency per bucket: 2·log2(8) hops of 10 µs across 8 nodes
    assert r.dp_comm_s == pytest.approx(t, rel=1e-6)
    exposed = 0.15 * t  # all hidden behind 66% of 10 s; 15% contention remains
    assert r.scaling_efficiency == pytest.approx(10 / (10 + exposed))
    assert r.meets_bar and r.switches == 1  # 8 nodes × 8 rails = 64 ports: one 64-port switch


def test_slow_fabric_fails_bar_and_names_upgrade():
    r = _model("eth25", 1, cards=256, compute_s=2.0)
    assert r.scaling_efficiency < 0.8 and not r.meets_bar
    assert r.upgrade and r.upgrade["scaling_efficiency"] >= 0.8
    assert network.get_fabric(r.upgrade["fabric"]).rdma  # hundreds of cards: RoCE/IB, per the article


def test_layout_reduces_dp_traffic():
    pure = _model(cards=512, grad=140e9)
    tp8 = _model(cards=512, grad=140e9, layout={"tp": 8, "pp": 1, "dp": 64})
    assert tp8.dp_comm_s < pure.dp_comm_s


def test_default_fabric_by_tier():
    assert network.get_fabric(network.default_fabric_name(64)).kind == "ethernet"
    assert network.get_fabric(network.default_fabric_name(512)).rdma


def test_bad_inputs():
    with pytest.raises(KashuError, match="exceeds the 8 cards per node"):
        _model("ib_ndr", 9)
    with pytest.raises(KashuError, match="at least 1"):
        _model("ib_ndr", 0)
    with pytest.raises(KashuError, match="positive"):
        network.injection_bandwidth(0.0, 1, 8)
    with pytest.raises(KashuError, match="positive"):
        network.network_model(grad_bytes=1e9, cards=64, gpus_per_node=8, intra_link_bytes_per_s=0.0, compute_s=1.0)
    with pytest.raises(KashuError, match="unknown fabric"):
        network.get_fabric("token-ring")


FABRICS = [f.name for f in network.fabrics()]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(FABRICS), st.sampled_from(FABRICS), st.integers(2, 4096), st.floats(0.05, 100),
       st.floats(1e8, 2e12), st.integers(1, 8))
def test_faster_fabric_never_lowers_scaling(a, b, cards, compute_s, grad, nics):
    fa, fb = network.get_fabric(a), network.get_fabric(b)
    bw = lambda f: f.port_bytes_per_s * f.efficiency  # noqa: E731
    if bw(fa) > bw(fb):
        fa, fb = fb, fa
    ea = _model(fa.name, nics, cards=cards, compute_s=compute_s, grad=grad).scaling_efficiency
    eb = _model(fb.name, nics, cards=cards, compute_s=compute_s, grad=grad).scaling_efficiency
    assert eb >= ea - 1e-12
    # more rails of the same fabric never hurt either
    if nics < 8:
        assert _model(fa.name, nics + 1, cards=cards, compute_s=compute_s, grad=grad).scaling_efficiency >= ea - 1e-12
