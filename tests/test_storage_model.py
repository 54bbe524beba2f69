"""Storage: capacity (data, tokens, checkpoints) and bandwidth (checkpoint writes, article floors)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kashu import storage
from kashu.errors import KashuError


def test_token_bytes_by_vocab():
    # Megatron-LM indexed_dataset.py: uint16 below 65,500 tokens of vocabulary, else int32
    assert storage.token_bytes(32000) == 2
    assert storage.token_bytes(128256) == 4


def test_capacity_7b_1t_hand_computed():
    c = storage.capacity(1e12, 7e9, vocab=128000, keep=3)
    assert c.raw_bytes == 4e12 and c.tokenised_bytes == 4e12
    assert c.checkpoint_bytes == 14 * 7e9  # 14 bytes/param, mixed-precision Adam on disk
    assert c.total_bytes == pytest.approx((4e12 + 4e12 + 3 * 98e9) * 1.25)
    assert c.article_rule_bytes == 12e12  # the article: 3 × the data


def test_sync_write_bandwidth_keeps_stall_share():
    # δ ≤ 2·M·s²: M = 10 h, s = 0.02 → δ = 28.8 s; 1 TB / 28.8 s
    bw, rule = storage.checkpoint_write_required(1e12, 36000, "sync", 0.02)
    assert bw == pytest.approx(1e12 / 28.8)
    assert "sync" in rule
    bw_a, _ = storage.checkpoint_write_required(1e12, 36000, "async", 0.02, cards=64)
    assert bw_a < bw


def test_floors_and_recommendation():
    assert storage.floor_gbps(64)[0] == 5 and storage.floor_gbps(512)[0] == 10
    r = storage.storage_model(tokens=1e12, n_params=7e9, cards=512, gpus_per_node=8, tokens_per_s=1e6, mttf_s=1e6)
    assert r.bandwidth_gbps_recommended >= 10 and "Lustre" in r.recommendation
    big = storage.storage_model(tokens=15.6e12, n_params=405e9, cards=16384, gpus_per_node=8, tokens_per_s=2e6, mttf_s=11134)
    assert "3FS" in big.recommendation and big.storage_nodes_3fs >= 1
    assert big.read_gbps_required == pytest.approx(2e6 * 4 / 1e9)


def test_bad_inputs():
    with pytest.raises(KashuError):
        storage.capacity(1e12, 7e9, keep=0)
    with pytest.raises(KashuError):
        storage.token_bytes(0)
    with pytest.raises(KashuError):
        storage.checkpoint_write_required(1e12, 3600, "sync", 0)


@given(st.integers(1, 50), st.integers(1, 50), st.floats(1e9, 1e13), st.floats(1e8, 1e12))
def test_more_checkpoints_never_shrink_storage(a, b, tokens, params):
    lo, hi = min(a, b), max(a, b)
    assert storage.capacity(tokens, params, keep=hi).total_bytes >= storage.capacity(tokens, params, keep=lo).total_bytes
