"""The cluster network: fabric, achieved collective bandwidth, data-parallel communication, topology.

Pure functions on plain values (bytes, seconds, bytes/s). Every collective time comes from
`kashu.collectives` (nccl-tests bus-bandwidth definitions); this module only decides which links a
collective crosses and at what achieved bus bandwidth.

Entry point for the planner and the step-time model: `network_model(...)` returns a
`NetworkResult` with `scaling_efficiency`, communication and overlap times, the topology and the
switch count.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any

from .collectives import collective_time
from .data import load_toml
from .errors import KashuError

OPS = ("all_reduce", "reduce_scatter", "all_gather", "all_to_all")


@dataclass(frozen=True)
class Fabric:
    name: str
    aliases: tuple[str, ...]
    label: str
    kind: str  # ethernet | roce | infiniband
    port_gbps: float  # line rate per port, Gbit/s
    efficiency: float  # achieved inter-node busbw / line rate
    default_nics_per_node: int
    switch_radix: int
    switch_model: str
    switch_w: float
    rank: int
    source: str
    grade: str
    as_of: str

    @property
    def port_bytes_per_s(self) -> float:
        """Line rate of one port, bytes/s (Gbit/s / 8)."""
        return self.port_gbps * 1e9 / 8.0

    @property
    def rdma(self) -> bool:
        return self.kind in ("roce", "infiniband")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["aliases"] = list(self.aliases)
        return d


@cache
def fabrics() -> tuple[Fabric, ...]:
    rows = load_toml("fabrics.toml")["fabric"]
    return tuple(sorted((Fabric(**{**r, "aliases": tuple(r.get("aliases", ()))}) for r in rows), key=lambda f: f.rank))


def _key(s: str) -> str:
    return str(s).strip().lower().replace("_", "").replace("-", "").replace(" ", "")


def get_fabric(name: str | Fabric) -> Fabric:
    if isinstance(name, Fabric):
        return name
    k = _key(name)
    for f in fabrics():
        if k in {_key(f.name), *(_key(a) for a in f.aliases)}:
            return f
    names = ", ".join(f.name for f in fabrics())
    raise KashuError(f"unknown fabric {name!r}; expected one of {names}",
                     f"未知网络 {name!r}；应为 {names} 之一", "fabric")


def config() -> dict[str, Any]:
    return load_toml("fabrics.toml")


def contention() -> float:
    """Share of hidden communication time that still slows compute (SMs held by NCCL kernels): the one
    figure the step-time model uses too (perf.toml [overlap].contention)."""
    return float(load_toml("perf.toml")["overlap"]["contention"])


def default_fabric_name(cards: float) -> str:
    """The article's tier rule: tens of cards on ordinary Ethernet, hundreds and up on RoCE/IB."""
    c = config()
    t = load_toml("defaults.toml")["tiers"]
    if cards <= t["tens_max"]:
        return c["defaults"]["tens"]
    if cards <= t["hundreds_max"]:
        return c["defaults"]["hundreds"]
    return c["defaults"]["thousands"]


def check_nics(nics_per_node: int, gpus_per_node: int, fabric: Fabric) -> int:
    """Rails (NICs per node for the compute fabric): a whole number from 1 to the cards per node."""
    if isinstance(nics_per_node, bool) or not isinstance(nics_per_node, (int, float)) or nics_per_node != int(nics_per_node):
        raise KashuError(f"--nics-per-node {nics_per_node!r} must be a whole number",
                         f"--nics-per-node {nics_per_node!r} 应为整数", "nics_per_node")
    n = int(nics_per_node)
    if n < 1:
        raise KashuError(f"--nics-per-node {n} must be at least 1", f"--nics-per-node {n} 至少为 1", "nics_per_node")
    if n > gpus_per_node:
        raise KashuError(
            f"--nics-per-node {n} exceeds the {gpus_per_node} cards per node: a rail-optimised node has at most one "
            "compute NIC per card",
            f"--nics-per-node {n} 超过每节点 {gpus_per_node} 张卡：轨道优化的节点每张卡最多配一块网卡", "nics_per_node")
    return n


def _positive(value: float, what: str, zh: str, field_name: str) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value) or math.isinf(value) or value <= 0:
        raise KashuError(f"{what} {value!r} must be a positive number", f"{zh} {value!r} 必须为正数", field_name)
    return float(value)


# --- bandwidth -------------------------------------------------------------------------------------

def injection_bandwidth(port_bytes_per_s: float, nics_per_node: int, gpus_per_node: int) -> float:
    """Per-card share of the node's network line rate, bytes/s: nics × port / cards per node."""
    _positive(port_bytes_per_s, "port bandwidth", "端口带宽", "fabric")
    return nics_per_node * port_bytes_per_s / gpus_per_node


def intra_busbw(link_bytes_per_s_one_way: float, nvlink: bool = True) -> float:
    """Achieved intra-node bus bandwidth: one-way link rate × measured efficiency (stas00/ml-engineering)."""
    _positive(link_bytes_per_s_one_way, "intra-node bandwidth", "节点内带宽", "gpu")
    c = config()["intra"]
    return link_bytes_per_s_one_way * (c["nvlink_efficiency"] if nvlink else c["pcie_efficiency"])


def inter_busbw_per_card(port_bytes_per_s: float, nics_per_node: int, gpus_per_node: int, efficiency: float) -> float:
    """Achieved inter-node bus bandwidth per card when every card of the node talks at once:
    injection share × the fabric's achieved fraction (nccl-tests busbw / line rate)."""
    if not 0 < efficiency <= 1:
        raise KashuError(f"fabric efficiency {efficiency!r} must be in (0, 1]", f"网络效率 {efficiency!r} 应在 (0, 1]", "fabric")
    return injection_bandwidth(port_bytes_per_s, nics_per_node, gpus_per_node) * efficiency


def hierarchical_time(op: str, size_bytes: float, ranks_per_node: int, nodes: int,
                      intra_bw: float, inter_bw: float, intra_lat: float = 0.0, inter_lat: float = 0.0) -> float:
    """Seconds for a collective on `ranks_per_node × nodes` ranks, done hierarchically (NCCL's rings/trees
    keep the node-local part on NVLink):

      all-reduce     = reduce-scatter in node (S) + all-reduce across nodes (S/l) + all-gather in node (S)
      reduce-scatter = reduce-scatter in node (S) + reduce-scatter across nodes (S/l)
      all-gather     = all-gather across nodes (S/l) + all-gather in node (S)
      all-to-all     = the slower of the off-node share over the NIC and the on-node share over NVLink
    each term from `collectives.collective_time` (nccl-tests PERFORMANCE.md).
    """
    if op not in OPS:
        raise ValueError(f"unknown collective {op!r}")
    ln, m = max(1, int(ranks_per_node)), max(1, int(nodes))
    s = float(size_bytes)
    if m == 1:
        return collective_time(op, s, ln, intra_bw, intra_lat)
    if op == "all_to_all":
        off = collective_time("all_to_all", s, m, inter_bw, inter_lat)  # S·(m−1)/m leaves the node
        on = s * (ln - 1) / (ln * m) / intra_bw if ln > 1 else 0.0
        return max(off, on)
    in_rs = collective_time("reduce_scatter", s, ln, intra_bw, intra_lat)
    in_ag = collective_time("all_gather", s, ln, intra_bw, intra_lat)
    if op == "all_reduce":
        return in_rs + collective_time("all_reduce", s / ln, m, inter_bw, inter_lat) + in_ag
    if op == "reduce_scatter":
        return in_rs + collective_time("reduce_scatter", s / ln, m, inter_bw, inter_lat)
    return collective_time("all_gather", s / ln, m, inter_bw, inter_lat) + in_ag


def achieved_busbw(op: str, size_bytes: float, ranks_per_node: int, nodes: int, intra_bw: float, inter_bw: float) -> float:
    """The nccl-tests bus bandwidth the whole (hierarchical) collective achieves, bytes/s:
    S × factor(n) / t with n = ranks_per_node × nodes."""
    from .collectives import bus_factor

    n = max(1, ranks_per_node) * max(1, nodes)
    if n == 1:
        return float("inf")
    t = hierarchical_time(op, size_bytes, ranks_per_node, nodes, intra_bw, inter_bw)
    return size_bytes * float(bus_factor(op, n)) / t


# --- layout ----------------------------------------------------------------------------------------

def fallback_layout(n_params: float, cards: int, gpus_per_node: int, memory_bytes: float) -> dict:
    """Until the layout search (issue 3) supplies one: ZeRO-1 data parallel, with the smallest
    power-of-two model-parallel degree whose weights + gradients (4 bytes/param) fit in the card
    memory share; tensor parallel inside the node first, pipeline beyond it."""
    share = config()["fallback_layout"]["memory_share"]
    mp = 1
    while 4.0 * n_params / mp > share * memory_bytes and mp < cards:
        mp *= 2
    mp = min(mp, max(1, cards))
    tp = min(mp, gpus_per_node)
    pp = max(1, mp // tp)
    dp = max(1, cards // (tp * pp))
    return {"tp": tp, "pp": pp, "dp": dp, "ep": 1, "zero": 1}


def batch_tokens_default(n_params: float) -> float:
    """Global batch in tokens by model size (GPT-3 Table 2.1, Llama 2 §2.2, Llama 3 §3.4.1)."""
    pts = config()["batch"]["points"]
    out = pts[0][1]
    for lo, tokens in pts:
        if n_params >= lo:
            out = tokens
    return float(out)


def step_compute_seconds(flops_per_token: float, batch_tokens: float, cards: int, flops_per_card: float) -> float:
    """Compute time of one step: flops_per_token × batch tokens / (cards × peak × MFU)."""
    return flops_per_token * batch_tokens / (cards * flops_per_card)


# --- topology --------------------------------------------------------------------------------------

@dataclass
class Topology:
    endpoints: int
    radix: int
    tiers: int
    leaf: int
    spine: int
    core: int
    switches: int
    cables: int
    optics: int
    rails: int
    rail_optimised: bool
    oversubscription: float
    max_endpoints: int
    explain: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def fat_tree(endpoints: int, radix: int, oversubscription: float = 1.0, rails: int = 1, nodes: int | None = None) -> Topology:
    """Switches, cables and optics of a fat-tree (folded CLOS) of `radix`-port switches (Al-Fares et al. 2008).

    Non-blocking: a leaf uses k/2 ports down and k/2 up; 2 tiers hold k²/2 endpoints with 3E/k
    switches (k = 64: 2,048 endpoints, 64 leaf + 32 spine); 3 tiers hold k³/4 with 5E/k.
    Oversubscription o (down:up = o:1) takes k·o/(o+1) ports down at the leaf (2 tiers) or at the
    aggregation layer's uplinks (3 tiers, as Llama 3's 1:7 above its pods).
    Rail-optimised (rails > 1): NIC i of every node goes to the leaves of rail i (NVIDIA SuperPOD).
    Optics: one transceiver at each end of every link (DAC inside a rack would save some).
    """
    e, k = int(endpoints), int(radix)
    if e < 1:
        raise KashuError("a network needs at least one endpoint", "网络至少需要一个端点", "gpus")
    if k < 4:
        raise KashuError(f"switch radix {k} is too small", f"交换机端口数 {k} 太小", "radix")
    if not oversubscription >= 1:
        raise KashuError(f"oversubscription {oversubscription!r} must be >= 1 (1 = non-blocking)",
                         f"收敛比 {oversubscription!r} 应 >= 1（1 为无阻塞）", "oversubscription")
    o = float(oversubscription)
    rails = max(1, int(rails))
    nodes = nodes if nodes else math.ceil(e / rails)
    ex: list[str] = []
    if e <= k:
        return Topology(e, k, 1, 1, 0, 0, 1, e, 2 * e, rails, False, 1.0, k,
                        [f"{e} endpoints ≤ {k} ports: one switch"])
    half = k // 2
    down2 = max(1, round(k * o / (o + 1))) if o > 1 else half
    up2 = k - down2
    max2 = down2 * k
    rail_opt = rails > 1
    if e <= max2:
        leaf = rails * math.ceil(nodes / down2) if rail_opt else math.ceil(e / down2)
        spine = math.ceil(leaf * up2 / k)
        cables = e + leaf * up2
        ex.append(f"2-tier fat-tree: leaf {down2} down / {up2} up ports; leaf = "
                  + (f"{rails} rails × ⌈{nodes} nodes / {down2}⌉ = {leaf}" if rail_opt else f"⌈{e} / {down2}⌉ = {leaf}")
                  + f"; spine = ⌈{leaf} × {up2} / {k}⌉ = {spine} (Al-Fares 2008: ≤ k²/2 = {k * k // 2} endpoints non-blocking)")
        return Topology(e, k, 2, leaf, spine, 0, leaf + spine, cables, 2 * cables, rails, rail_opt, o, max2, ex)
    # 3 tiers: edge (k/2 down, k/2 up), aggregation (k/2 down, k/2/o up), core
    edge = rails * math.ceil(nodes / half) if rail_opt else math.ceil(e / half)
    agg = edge
    core = math.ceil(agg * half / o / k)
    cables = e + edge * half + core * k
    max3 = k ** 3 // 4 * int(o)
    ex.append(f"3-tier fat-tree: edge = {edge}, aggregation = {agg}, core = ⌈{agg} × {half} / {o:g} / {k}⌉ = {core} "
              f"(Al-Fares 2008: ≤ k³/4 = {k ** 3 // 4:,} endpoints non-blocking, 5E/k switches)")
    if e > max3:
        ex.append(f"{e:,} endpoints exceed a 3-tier fat-tree of {k}-port switches ({max3:,}): needs larger switches or a 4th tier")
    return Topology(e, k, 3, edge, agg, core, edge + agg + core, cables, 2 * cables, rails, rail_opt, o, max3, ex)


# --- the model the planner calls --------------------------------------------------------------------

@dataclass
class NetworkResult:
    fabric: str
    fabric_label: str
    fabric_kind: str
    nics_per_node: int
    nodes: int
    cards: int
    injection_gbps_per_card: float  # line rate share, GB/s
    intra_busbw_gbps: float
    inter_busbw_gbps_per_card: float
    dp_allreduce_busbw_gbps: float  # achieved busbw of the DP collective, whole hierarchy
    layout: dict
    layout_source: str
    grad_bytes: float
    batch_tokens: float | None
    compute_s: float
    dp_comm_s: float
    ep_comm_s: float
    comm_s: float
    overlap_s: float
    exposed_s: float
    step_s: float
    scaling_efficiency: float
    bar: float
    meets_bar: bool
    ethernet_enough: bool
    topology: Topology
    switches: int
    switch_model: str
    nics: int
    upgrade: dict | None
    source: str
    explain: list[str]

    def to_dict(self) -> dict:
        d = asdict(self)
        d["topology"] = self.topology.to_dict()
        return d


def _ranks_in_node(group: int, inner: int, gpus_per_node: int) -> int:
    """Ranks of one parallel group inside a node when `inner` ranks of faster-varying groups come first
    (Megatron order tp → dp → pp)."""
    return max(1, min(group, gpus_per_node // max(1, inner))) if inner < gpus_per_node else 1


def network_model(
    *,
    grad_bytes: float,
    cards: int,
    gpus_per_node: int,
    intra_link_bytes_per_s: float,
    compute_s: float,
    fabric: str | Fabric = "ib_ndr",
    nics_per_node: int | None = None,
    layout: dict | None = None,
    nvlink: bool = True,
    ep_a2a_bytes: float = 0.0,
    oversubscription: float = 1.0,
    batch_tokens: float | None = None,
    propose_upgrade: bool = True,
) -> NetworkResult:
    """Data-parallel (and expert-parallel) communication of one training step and its overlap with compute.

    grad_bytes: gradient bytes of the whole model (N × bytes per gradient); a DP rank holds
      grad_bytes / (tp·pp). layout: {"tp", "pp", "dp", "ep", "zero"}; without it, pure data parallel
      with ZeRO-1 (gradient reduce-scatter + parameter all-gather). compute_s: compute time of one step
      (from the step-time model, or tokens × FLOPs per token / (cards × peak × MFU)).
    ep_a2a_bytes: per-card all-to-all bytes per step of the MoE layers (dispatch + combine, fwd + bwd).
    scaling_efficiency = compute / (compute + communication not hidden behind compute).
    """
    fab = get_fabric(fabric)
    g = int(gpus_per_node)
    if cards < 1 or g < 1:
        raise KashuError("cards and cards per node must be at least 1", "卡数与每节点卡数至少为 1", "gpus")
    nics = check_nics(fab.default_nics_per_node if nics_per_node is None else nics_per_node, g, fab)
    _positive(grad_bytes, "gradient bytes", "梯度字节数", "params")
    _positive(compute_s, "compute time per step", "每步计算时间", "compute_s")
    cfg = config()
    lat = cfg["latency"]
    src = "layout search"
    if layout is None:
        lay = {"tp": 1, "pp": 1, "dp": int(cards), "ep": 1, "zero": 1}
        src = "pure data parallel, ZeRO-1 (no layout given)"
    else:
        lay = {"tp": 1, "pp": 1, "ep": 1, "zero": 1, **{k: v for k, v in layout.items() if v is not None}}
        lay.setdefault("dp", max(1, int(cards) // (int(lay["tp"]) * int(lay["pp"]))))
        src = str(layout.get("source", "given layout"))
    tp, pp, dp, ep = (max(1, int(lay[k])) for k in ("tp", "pp", "dp", "ep"))
    intra = intra_busbw(intra_link_bytes_per_s, nvlink)
    inter = inter_busbw_per_card(fab.port_bytes_per_s, nics, g, fab.efficiency)
    nodes = math.ceil(cards / g)
    ex: list[str] = []

    # data parallel: each DP rank holds grad_bytes/(tp·pp); ZeRO-1 = reduce-scatter grads + all-gather params
    s = grad_bytes / (tp * pp)
    l_dp = _ranks_in_node(dp, tp, g)
    m_dp = math.ceil(dp / l_dp)
    buckets = max(1, math.ceil(s / lat["bucket_bytes"]))
    hops = 2 * math.log2(max(2, m_dp))  # tree depth up and down; continuous so that one more node never jumps
    inter_lat = lat["inter_node_s"] * hops
    if dp > 1:
        if int(lay.get("zero", 1)) >= 1:
            t_dp = (hierarchical_time("reduce_scatter", s, l_dp, m_dp, intra, inter, lat["intra_node_s"], 0.0)
                    + hierarchical_time("all_gather", s, l_dp, m_dp, intra, inter, lat["intra_node_s"], 0.0))
            how = "reduce-scatter(grads) + all-gather(params)"
        else:
            t_dp = hierarchical_time("all_reduce", s, l_dp, m_dp, intra, inter, lat["intra_node_s"], 0.0)
            how = "all-reduce(grads)"
        t_dp += buckets * inter_lat if m_dp > 1 else 0.0
        busbw_dp = achieved_busbw("all_reduce", s, l_dp, m_dp, intra, inter)
    else:
        t_dp, how, busbw_dp = 0.0, "no data parallelism", float("inf")
    ex.append(f"DP: {how} of {s / 1e9:.3g} GB per rank over {dp} ranks = {l_dp} in node × {m_dp} nodes, hierarchical; "
              f"inter-node busbw per card = {nics} × {fab.port_gbps:g} Gb/s × {fab.efficiency:.2f} / {g} = {inter / 1e9:.3g} GB/s "
              f"→ {t_dp:.3g} s (nccl-tests busbw definitions)")
    # expert parallel all-to-all
    t_ep = 0.0
    if ep > 1 and ep_a2a_bytes > 0:
        l_ep = min(ep, g)
        t_ep = hierarchical_time("all_to_all", ep_a2a_bytes, l_ep, math.ceil(ep / l_ep), intra, inter)
        ex.append(f"EP: all-to-all of {ep_a2a_bytes / 1e9:.3g} GB per card over {ep} ranks → {t_ep:.3g} s")
    ov = cfg["overlap"]
    hide_dp = min(t_dp, ov["window"] * compute_s)
    hide_ep = min(t_ep, ov["expert_a2a_window"] * compute_s)
    kappa = contention()
    exposed = (t_dp - hide_dp) + (t_ep - hide_ep) + kappa * (hide_dp + hide_ep)
    step = compute_s + exposed
    eff = compute_s / step
    bar = cfg["bar"]["scaling"]
    ex.append(f"overlap: DP traffic hides behind {ov['window']:.0%} of the {compute_s:.3g} s compute (backward + next forward); "
              f"exposed {exposed:.3g} s (incl. {kappa:.0%} SM contention on the hidden part) → scaling = {compute_s:.3g} / ({compute_s:.3g} + {exposed:.3g}) = {eff:.3f}")
    topo = fat_tree(nodes * nics, fab.switch_radix, oversubscription, rails=nics, nodes=nodes)
    eth_max = cfg["bar"]["ethernet_max_cards"]
    ethernet_enough = cards <= eth_max and (fab.kind != "ethernet" or eff >= bar)
    upgrade = None
    if propose_upgrade and eff < bar:
        upgrade = _upgrade(fab, nics, g, eff, bar, cards > eth_max, lambda f, n: network_model(
            grad_bytes=grad_bytes, cards=cards, gpus_per_node=g, intra_link_bytes_per_s=intra_link_bytes_per_s,
            compute_s=compute_s, fabric=f, nics_per_node=n, layout=lay, nvlink=nvlink, ep_a2a_bytes=ep_a2a_bytes,
            oversubscription=oversubscription, propose_upgrade=False).scaling_efficiency)
    return NetworkResult(
        fabric=fab.name, fabric_label=fab.label, fabric_kind=fab.kind, nics_per_node=nics, nodes=nodes, cards=int(cards),
        injection_gbps_per_card=injection_bandwidth(fab.port_bytes_per_s, nics, g) / 1e9,
        intra_busbw_gbps=intra / 1e9, inter_busbw_gbps_per_card=inter / 1e9,
        dp_allreduce_busbw_gbps=busbw_dp / 1e9 if math.isfinite(busbw_dp) else 0.0,
        layout={**lay, "tp": tp, "pp": pp, "dp": dp, "ep": ep}, layout_source=src, grad_bytes=float(grad_bytes),
        batch_tokens=batch_tokens, compute_s=compute_s, dp_comm_s=t_dp, ep_comm_s=t_ep, comm_s=t_dp + t_ep,
        overlap_s=hide_dp + hide_ep, exposed_s=exposed, step_s=step, scaling_efficiency=eff, bar=bar,
        meets_bar=eff >= bar, ethernet_enough=ethernet_enough, topology=topo, switches=topo.switches,
        switch_model=fab.switch_model, nics=nodes * nics, upgrade=upgrade,
        source=f"{fab.source}; bar: {cfg['bar']['source']}", explain=ex + topo.explain,
    )


def ladder(fab: Fabric, nics: int, g: int, rdma_only: bool) -> list[tuple[Fabric, int]]:
    """The steps up from `fab` × `nics`, cheapest first: more rails, then faster fabrics; past tens of
    cards only RoCE/InfiniBand (the article: the network becomes mandatory at hundreds)."""
    cands: list[tuple[float, int, Fabric, int]] = []
    for f in fabrics():
        if rdma_only and not f.rdma:
            continue
        more = 2 if f.kind == "ethernet" else g  # TCP Ethernet nodes carry one or two NICs; RDMA fabrics go to a NIC per card
        for n in sorted({f.default_nics_per_node, more}):
            if n > g or (f is fab and n <= nics) or f.rank < fab.rank:
                continue
            cands.append((f.rank, n, f, n))
    cands.sort(key=lambda c: (c[0], c[1]))
    return [(f, n) for _, _, f, n in cands]


def _upgrade(fab: Fabric, nics: int, g: int, eff: float, bar: float, rdma_only: bool, eff_of) -> dict | None:
    """The cheapest step up the fabric ladder that reaches the bar."""
    for f, n in ladder(fab, nics, g, rdma_only):
        e = eff_of(f, n)
        if e >= bar:
            return upgrade_note(fab, nics, eff, bar, f, n, e)
    return None


def upgrade_note(fab: Fabric, nics: int, eff: float, bar: float, f: Fabric, n: int, e: float) -> dict:
    return {"fabric": f.name, "label": f.label, "nics_per_node": n, "scaling_efficiency": e,
            "en": f"{fab.label} × {nics} per node reaches only {eff:.2f} < {bar:.2f}: upgrade to {f.label} × {n} per node ({e:.2f})",
            "zh": f"{fab.label} 每节点 {nics} 块网卡只有 {eff:.2f} < {bar:.2f}：建议升级到 {f.label} 每节点 {n} 块（{e:.2f}）"}
