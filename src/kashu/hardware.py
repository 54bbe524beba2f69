"""The accelerator catalog (data/gpus.toml): dense peaks, memory, links, with a source per row."""

from __future__ import annotations

import difflib
import re
from dataclasses import asdict, dataclass
from functools import cache

from .data import load_toml
from .errors import KashuError


@dataclass(frozen=True)
class Accelerator:
    name: str
    aliases: tuple[str, ...]
    vendor: str
    bf16_tflops: float  # dense
    fp8_tflops: float  # dense; 0 = no FP8
    fp32_tflops: float
    memory_gb: float
    hbm_tbps: float
    intra_link: str
    intra_link_gbps_bidir: float
    gpus_per_node: int
    tdp_w: float
    notes: str
    source: str
    as_of: str
    confidence: str
    domestic: bool = False

    # SI views used by the core
    @property
    def peak_flops(self) -> float:
        """Dense BF16/FP16 peak, FLOP/s."""
        return self.bf16_tflops * 1e12

    def peak_flops_for(self, precision: str = "bf16") -> float:
        if precision == "fp8":
            if not self.fp8_tflops:
                raise KashuError(f"{self.name} has no FP8 tensor cores; use --precision bf16",
                                 f"{self.name} 不支持 FP8；请用 --precision bf16", "precision")
            return self.fp8_tflops * 1e12
        return self.peak_flops

    @property
    def memory_bytes(self) -> float:
        """The catalog's "80 GB" is binary: HBM and GDDR come in 2^30-byte stacks (A100/H100 80 GB = 5 × 16 GiB;
        nvidia-smi shows 81,559-81,920 MiB = 85.5-85.9e9 bytes). What CUDA and NCCL take is the framework overhead."""
        return self.memory_gb * 2.0**30

    @property
    def hbm_bytes_per_s(self) -> float:
        return self.hbm_tbps * 1e12

    @property
    def intra_link_bytes_per_s_one_way(self) -> float:
        """Per-GPU one-way intra-node bandwidth (half of the bidirectional figure vendors print)."""
        return self.intra_link_gbps_bidir * 1e9 / 2

    def to_dict(self) -> dict:
        d = asdict(self)
        d["aliases"] = list(self.aliases)
        d["intra_link_gbps_one_way"] = self.intra_link_gbps_bidir / 2
        return d


def _key(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name.strip().lower())


@cache
def catalog() -> tuple[Accelerator, ...]:
    rows = load_toml("gpus.toml")["gpu"]
    out = []
    for r in rows:
        r = dict(r)
        r["aliases"] = tuple(r.get("aliases", ()))
        r.setdefault("domestic", False)
        out.append(Accelerator(**r))
    return tuple(out)


@cache
def _index() -> dict[str, Accelerator]:
    idx: dict[str, Accelerator] = {}
    for acc in catalog():
        for n in (acc.name, *acc.aliases):
            idx[_key(n)] = acc
    return idx


def get_gpu(name: str) -> Accelerator:
    """Resolve a card name or alias (case and separators ignored); unknown names list close matches."""
    if isinstance(name, Accelerator):
        return name
    if not str(name).strip():
        raise KashuError("no GPU given; expected a name such as H800", "未指定 GPU；应为 H800 这样的型号", "gpu")
    acc = _index().get(_key(str(name)))
    if acc:
        return acc
    names = [a.name for a in catalog()]
    keys = list(_index())
    close = difflib.get_close_matches(_key(str(name)), keys, n=4, cutoff=0.5)
    suggestions = sorted({_index()[k].name for k in close}) or names
    raise KashuError(
        f"unknown GPU {name!r}; close matches: {', '.join(suggestions)} (see `kashu gpus`)",
        f"未知 GPU {name!r}；相近的型号：{', '.join(suggestions)}（见 `kashu gpus`）",
        "gpu",
    )
