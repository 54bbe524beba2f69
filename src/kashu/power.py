"""Power and racks: kW per node from card TDP plus host overhead, racks at a kW budget, energy with PUE.

Pure functions, watts and seconds inside. Defaults and sources in data/power.toml.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from .data import load_toml
from .errors import KashuError


def config() -> dict:
    return load_toml("power.toml")


def node_watts(gpus_per_node: int, tdp_w: float, overhead_fraction: float | None = None) -> float:
    """Node power = cards × TDP × (1 + host overhead); DGX H100: 8 × 700 W × 1.82 ≈ 10.2 kW (datasheet)."""
    f = config()["host"]["overhead_fraction"] if overhead_fraction is None else overhead_fraction
    if tdp_w <= 0 or gpus_per_node < 1 or f < 0:
        raise KashuError("card TDP, cards per node and host overhead must be positive",
                         "卡功耗、每节点卡数与主机开销必须为正", "gpu")
    return gpus_per_node * tdp_w * (1.0 + f)


def _check(value: float, what: str, zh: str, field_name: str, lo: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value <= lo:
        raise KashuError(f"{what} {value!r} must be greater than {lo:g}", f"{zh} {value!r} 必须大于 {lo:g}", field_name)
    return float(value)


@dataclass
class PowerResult:
    nodes: int
    node_kw: float
    compute_kw: float
    network_kw: float
    total_kw: float  # IT load
    pue: float
    facility_kw: float
    kw_per_rack: float
    nodes_per_rack: int
    racks: int
    node_exceeds_rack: bool
    energy_mwh: float | None
    source: str
    explain: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def power_model(*, nodes: int, gpus_per_node: int, tdp_w: float, switches: int = 0, switch_w: float = 0.0,
                kw_per_rack: float | None = None, pue: float | None = None, days: float | None = None) -> PowerResult:
    c = config()
    kw_rack = _check(c["rack"]["kw_per_rack"] if kw_per_rack is None else kw_per_rack, "--kw-per-rack", "--kw-per-rack", "kw_per_rack")
    p = _check(c["pue"]["value"] if pue is None else pue, "--pue", "--pue", "pue")
    if p < 1:
        raise KashuError(f"--pue {p} must be at least 1 (facility power / IT power)", f"--pue {p} 至少为 1（总用电/IT 用电）", "pue")
    nw = node_watts(gpus_per_node, tdp_w)
    compute_w = nodes * nw
    net_w = switches * switch_w
    it_w = compute_w + net_w
    per_rack = int(kw_rack * 1e3 // nw)
    exceeds = per_rack == 0
    racks_compute = nodes if exceeds else math.ceil(nodes / per_rack)
    spare_w = 0.0 if exceeds else racks_compute * kw_rack * 1e3 - compute_w  # switches go in the compute racks' headroom first
    racks_net = math.ceil((net_w - spare_w) / (kw_rack * 1e3)) if net_w > spare_w else 0
    racks = racks_compute + racks_net
    energy = it_w * p * days * 24 / 1e6 if days is not None else None  # W·h → MWh
    ex = [f"node = {gpus_per_node} × {tdp_w:g} W × (1 + {c['host']['overhead_fraction']:g} host) = {nw / 1e3:.2f} kW",
          f"IT load = {nodes} nodes × {nw / 1e3:.2f} kW + {switches} switches × {switch_w / 1e3:.2f} kW = {it_w / 1e3:,.1f} kW",
          (f"racks: one node ({nw / 1e3:.1f} kW) exceeds a {kw_rack:g} kW rack — needs high-density racks; counted one per rack"
           if exceeds else f"racks = ⌈{nodes} / ⌊{kw_rack:g} kW / {nw / 1e3:.2f} kW⌋⌉ + network {racks_net} = {racks}"),
          f"facility = IT × PUE {p:g} = {it_w * p / 1e3:,.1f} kW"
          + (f"; energy = {it_w * p / 1e3:,.0f} kW × {days:.1f} d × 24 h = {energy:,.1f} MWh" if energy is not None else "")]
    return PowerResult(nodes=nodes, node_kw=nw / 1e3, compute_kw=compute_w / 1e3, network_kw=net_w / 1e3, total_kw=it_w / 1e3,
                       pue=p, facility_kw=it_w * p / 1e3, kw_per_rack=kw_rack, nodes_per_rack=per_rack, racks=racks,
                       node_exceeds_rack=exceeds, energy_mwh=energy,
                       source=f"{c['host']['source']}; rack: {c['rack']['source']}; PUE: {c['pue']['source']}", explain=ex)
