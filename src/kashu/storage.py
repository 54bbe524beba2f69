"""Storage: capacity (data, tokenised data, checkpoints) and bandwidth (data loading, checkpoint writes).

Pure functions, bytes and bytes/s inside. Defaults and their sources in data/storage.toml; the
checkpoint facts (bytes per parameter, stall share) in data/reliability.toml.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from .data import load_toml
from .errors import KashuError
from .reliability import config as rel_config
from .reliability import young_interval


def config() -> dict:
    return load_toml("storage.toml")


def token_bytes(vocab: int) -> int:
    """Bytes per stored token: uint16 when the vocabulary fits (< 65,500), else int32 (Megatron indexed_dataset.py)."""
    c = config()["data"]
    if vocab <= 0:
        raise KashuError(f"vocabulary size {vocab!r} must be positive", f"词表大小 {vocab!r} 必须为正", "vocab")
    return int(c["token_bytes_small_vocab"] if vocab < c["vocab_threshold"] else c["token_bytes_large_vocab"])


def checkpoint_bytes(n_params: float, bytes_per_param: float | None = None) -> float:
    """One checkpoint: parameters × bytes per parameter (≈ 14 for mixed-precision Adam, stas00/ml-engineering)."""
    b = rel_config()["checkpoint"]["bytes_per_param"] if bytes_per_param is None else bytes_per_param
    return n_params * b


@dataclass
class Capacity:
    raw_bytes: float
    tokenised_bytes: float
    checkpoint_bytes: float
    checkpoints_kept: int
    checkpoints_total_bytes: float
    headroom: float
    total_bytes: float
    article_rule_bytes: float
    explain: list[str] = field(default_factory=list)


def capacity(tokens: float, n_params: float, *, vocab: int | None = None, keep: int | None = None,
             bytes_per_param: float | None = None, raw_bytes_per_token: float | None = None,
             headroom: float | None = None) -> Capacity:
    """(raw + tokenised + checkpoints × kept) × headroom, beside the article's 3 × the data."""
    c = config()["data"]
    keep = int(rel_config()["checkpoint"]["keep"] if keep is None else keep)
    if keep < 1:
        raise KashuError(f"checkpoints kept {keep} must be at least 1", f"保留的 checkpoint 数 {keep} 至少为 1", "checkpoints_kept")
    vocab = int(c["default_vocab"] if vocab is None else vocab)
    raw_bpt = c["raw_bytes_per_token"] if raw_bytes_per_token is None else raw_bytes_per_token
    head = c["headroom"] if headroom is None else headroom
    raw = tokens * raw_bpt
    tb = token_bytes(vocab)
    tok = tokens * tb
    ck = checkpoint_bytes(n_params, bytes_per_param)
    total = (raw + tok + ck * keep) * head
    rule = c["article_data_multiple"] * raw
    ex = [f"raw text {tokens:.3g} tokens × {raw_bpt:g} B = {raw / 1e12:,.2f} TB",
          f"tokenised {tokens:.3g} × {tb} B (vocab {vocab:,} {'<' if tb == 2 else '≥'} 65,500; Megatron indexed_dataset) = {tok / 1e12:,.2f} TB",
          f"checkpoints {n_params:.3g} params × {ck / n_params:g} B × {keep} kept = {ck * keep / 1e12:,.2f} TB",
          f"total × headroom {head:g} = {total / 1e12:,.2f} TB (article: 3 × data = {rule / 1e12:,.2f} TB)"]
    return Capacity(raw, tok, ck, keep, ck * keep, head, total, rule, ex)


def checkpoint_write_required(ckpt_bytes: float, mttf_s: float, mode: str, stall_share: float | None = None,
                              cards: int = 1) -> tuple[float, str]:
    """Write bandwidth (bytes/s) that keeps checkpointing cheap.

    sync: at Young's optimum the stall share is δ/τ = √(δ/2M); keeping it ≤ s needs δ ≤ 2·M·s², so
          bandwidth ≥ bytes / (2·M·s²).
    async: training stalls only for the host copy; the write must finish within one interval τ
          (Young's, with the async stall), so bandwidth ≥ bytes / τ.
    """
    from .reliability import checkpoint_stall

    s = rel_config()["checkpoint"]["stall_share"] if stall_share is None else stall_share
    if not 0 < s < 1:
        raise KashuError(f"checkpoint stall share {s!r} must be in (0, 1)", f"checkpoint 停顿占比 {s!r} 应在 (0, 1)", "checkpoint")
    if math.isinf(mttf_s):
        return 0.0, "no failures expected: no checkpoint bandwidth needed for recovery"
    if mode == "sync":
        d = 2.0 * mttf_s * s * s
        return ckpt_bytes / d, f"sync: bytes / (2·M·s²) = {ckpt_bytes / 1e9:,.0f} GB / (2 × {mttf_s / 3600:,.1f} h × {s:g}²) → stall ≤ {s:.0%}"
    d = checkpoint_stall(ckpt_bytes, 1.0, "async", cards)
    tau = young_interval(d, mttf_s)
    return ckpt_bytes / tau, f"async: bytes / τ = {ckpt_bytes / 1e9:,.0f} GB / {tau / 60:,.1f} min (write done before the next snapshot)"


@dataclass
class StorageResult:
    capacity_tb: float
    raw_tb: float
    tokenised_tb: float
    checkpoint_tb: float
    checkpoints_kept: int
    headroom: float
    article_rule_tb: float
    read_gbps_required: float
    write_gbps_required: float
    write_rule: str
    floor_gbps: float
    floor_rule: str
    bandwidth_gbps_recommended: float
    checkpoint_mode: str
    recommendation: str
    recommendation_zh: str
    storage_nodes_3fs: int | None
    explain: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def floor_gbps(cards: int) -> tuple[float, str]:
    """The article's floors: ≥ 5 GB/s for any cluster; ≥ 10 GB/s parallel FS at hundreds of cards."""
    f = config()["floors"]
    if cards >= f["parallel_fs_min_cards"]:
        return float(f["parallel_fs_gbps"]), "seed article: ≥ 10 GB/s parallel file system at hundreds of cards"
    return float(f["any_gbps"]), "seed article: < 5 GB/s visibly slows data loading"


def recommend(cards: int, gpus_per_node: int, gbps: float) -> tuple[str, str, int | None]:
    c = config()["classes"]
    f = config()["floors"]
    if gbps >= c["threefs_min_gbps"] or cards >= 1024:
        n = max(1, math.ceil(gbps / c["threefs_gbps_per_storage_node"]))
        return (f"3FS-class disaggregated NVMe storage (or a large Lustre/GPFS): ≥ {gbps:,.0f} GB/s, ~{n} storage nodes at 37.5 GB/s each",
                f"3FS 级分布式 NVMe 存储（或大规模 Lustre/GPFS）：≥ {gbps:,.0f} GB/s，约 {n} 个存储节点（每节点约 37.5 GB/s）", n)
    if cards >= f["parallel_fs_min_cards"]:
        return (f"parallel file system (Lustre or BeeGFS) at ≥ {gbps:,.0f} GB/s read/write",
                f"并行文件系统（Lustre 或 BeeGFS），读写 ≥ {gbps:,.0f} GB/s", None)
    if cards <= gpus_per_node:
        return (f"local NVMe on the node (≥ {gbps:,.0f} GB/s); copy checkpoints off the node",
                f"节点本地 NVMe（≥ {gbps:,.0f} GB/s）；checkpoint 需另存一份到节点外", None)
    return (f"local NVMe for the data on each node + shared storage (NFS or BeeGFS) at ≥ {gbps:,.0f} GB/s for checkpoints",
            f"每节点本地 NVMe 放数据 + 共享存储（NFS 或 BeeGFS）≥ {gbps:,.0f} GB/s 写 checkpoint", None)


def storage_model(*, tokens: float, n_params: float, ckpt_params: float | None = None, cards: int, gpus_per_node: int,
                  tokens_per_s: float, mttf_s: float, mode: str = "sync", vocab: int | None = None,
                  keep: int | None = None, stall_share: float | None = None) -> StorageResult:
    cap = capacity(tokens, ckpt_params if ckpt_params is not None else n_params, vocab=vocab, keep=keep)
    # the checkpoint size follows the trained parameters; data size follows the tokens
    tb = token_bytes(int(config()["data"]["default_vocab"] if vocab is None else vocab))
    read = tokens_per_s * tb
    write, rule = checkpoint_write_required(cap.checkpoint_bytes, mttf_s, mode, stall_share, cards)
    floor, frule = floor_gbps(cards)
    rec_bw = max(write / 1e9, read / 1e9, floor)
    en, zh, n3 = recommend(cards, gpus_per_node, rec_bw)
    ex = cap.explain + [
        f"data loading: {tokens_per_s:,.0f} tokens/s × {tb} B = {read / 1e9:.3g} GB/s",
        f"checkpoint writes: {rule} = {write / 1e9:,.2f} GB/s",
        f"floor: {frule}; recommended = max = {rec_bw:,.1f} GB/s",
    ]
    return StorageResult(
        capacity_tb=cap.total_bytes / 1e12, raw_tb=cap.raw_bytes / 1e12, tokenised_tb=cap.tokenised_bytes / 1e12,
        checkpoint_tb=cap.checkpoint_bytes / 1e12, checkpoints_kept=cap.checkpoints_kept, headroom=cap.headroom,
        article_rule_tb=cap.article_rule_bytes / 1e12, read_gbps_required=read / 1e9, write_gbps_required=write / 1e9,
        write_rule=rule, floor_gbps=floor, floor_rule=frule, bandwidth_gbps_recommended=rec_bw, checkpoint_mode=mode,
        recommendation=en, recommendation_zh=zh, storage_nodes_3fs=n3, explain=ex,
    )
