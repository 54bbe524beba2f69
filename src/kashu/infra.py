"""The cluster around the cards, for the planner: network scaling, goodput, storage, power at a cluster size.

`InfraModel` binds the workload (parameters, tokens, card, MFU) and the user's infrastructure options,
and answers, for any card count, the cross-node scaling efficiency and the goodput the planner's
fixed-point iteration needs, then the plan's `network`, `storage`, `reliability` and `power` sections.
When the step-time model (perf/search) knows the layout and the step time, pass them in
`InfraOptions.layout` / `step_compute_s` / `batch_tokens`; without them a fallback layout is used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from . import network, power, reliability, storage
from .errors import KashuError
from .hardware import Accelerator


@dataclass
class InfraOptions:
    fabric: str | None = None  # None: the article's tier default, upgraded to reach the 0.8 bar
    fabric_reason: str | None = None  # why the planner fixed `fabric` (None: the user chose it)
    nics_per_node: int | None = None
    oversubscription: float = 1.0
    failure_rate: float | None = None  # per card-day
    checkpoint_async: bool | None = None  # None: sync
    checkpoints_kept: int | None = None
    storage_write_gbps: float | None = None  # the storage you have; None: what is required
    vocab: int | None = None
    kw_per_rack: float | None = None
    pue: float | None = None
    layout: dict | None = None  # {"tp","pp","dp","ep","zero"} from the layout search
    step_compute_s: float | None = None  # compute time of one step, from the step-time model
    batch_tokens: float | None = None
    ep_a2a_bytes: float = 0.0


def check_options(o: InfraOptions) -> None:
    if o.fabric is not None:
        network.get_fabric(o.fabric)
    if o.failure_rate is not None:
        reliability.check_rate(o.failure_rate)
    if o.storage_write_gbps is not None and not (isinstance(o.storage_write_gbps, (int, float)) and o.storage_write_gbps > 0):
        raise KashuError(f"--storage-write-gbps {o.storage_write_gbps!r} must be a positive bandwidth (GB/s); zero bandwidth cannot hold a checkpoint",
                         f"--storage-write-gbps {o.storage_write_gbps!r} 必须为正（GB/s）；零带宽写不了 checkpoint", "storage_write_gbps")
    if o.checkpoints_kept is not None and o.checkpoints_kept < 1:
        raise KashuError(f"--checkpoints-kept {o.checkpoints_kept} must be at least 1", f"--checkpoints-kept {o.checkpoints_kept} 至少为 1", "checkpoints_kept")
    if o.oversubscription is not None and not o.oversubscription >= 1:
        raise KashuError(f"--oversubscription {o.oversubscription!r} must be >= 1", f"--oversubscription {o.oversubscription!r} 应 >= 1", "oversubscription")
    if o.kw_per_rack is not None:
        power._check(o.kw_per_rack, "--kw-per-rack", "--kw-per-rack", "kw_per_rack")
    if o.pue is not None and (not isinstance(o.pue, (int, float)) or math.isnan(o.pue) or o.pue < 1):
        raise KashuError(f"--pue {o.pue!r} must be at least 1", f"--pue {o.pue!r} 至少为 1", "pue")


class InfraModel:
    def __init__(self, *, n_params: float, tokens: float, flops_per_token: float, gpu: Accelerator,
                 flops_per_card: float, trainable_params: float | None = None, options: InfraOptions | None = None):
        self.n = float(n_params)
        self.tokens = float(tokens)
        self.fpt = float(flops_per_token)
        self.gpu = gpu
        self.g = int(gpu.gpus_per_node)
        self.flops_per_card = float(flops_per_card)
        self.trainable = float(trainable_params if trainable_params is not None else n_params)
        self.o = options or InfraOptions()
        check_options(self.o)
        if self.o.nics_per_node is not None:
            network.check_nics(self.o.nics_per_node, self.g, network.get_fabric(self.o.fabric or "ib_ndr"))
        self._net: dict[int, network.NetworkResult | None] = {}
        self._rel: dict[int, reliability.ReliabilityResult] = {}
        self.mode = "async" if self.o.checkpoint_async else "sync"
        self.batch_cfg = network.config()["batch"]

    # --- network ------------------------------------------------------------------------------------
    def layout(self, cards: int) -> dict:
        if self.o.layout:
            return dict(self.o.layout)
        lay = network.fallback_layout(self.n, cards, self.g, self.gpu.memory_bytes)
        lay["source"] = "fallback: ZeRO-1 data parallel + the smallest TP×PP whose weights fit half the memory (until the layout search runs)"
        return lay

    def batch_tokens(self, cards: int, lay: dict) -> float:
        if self.o.batch_tokens:
            return float(self.o.batch_tokens)
        return max(network.batch_tokens_default(self.n), lay["dp"] * self.batch_cfg["seq_len"])

    def network(self, cards: float) -> network.NetworkResult | None:
        c = max(1, int(round(cards)))
        if c in self._net:
            return self._net[c]
        if c <= self.g:
            self._net[c] = None
            return None
        lay = self.layout(c)
        bt = self.batch_tokens(c, lay)
        compute_s = self.o.step_compute_s or network.step_compute_seconds(self.fpt, bt, c, self.flops_per_card)
        kw = dict(grad_bytes=self.trainable * self.batch_cfg["grad_bytes_per_param"], cards=c, gpus_per_node=self.g,
                  intra_link_bytes_per_s=self.gpu.intra_link_bytes_per_s_one_way,
                  compute_s=compute_s, layout=lay, nvlink="nvlink" in self.gpu.intra_link.lower() or "hccs" in self.gpu.intra_link.lower()
                  or "infinity" in self.gpu.intra_link.lower(),
                  ep_a2a_bytes=self.o.ep_a2a_bytes, oversubscription=self.o.oversubscription or 1.0, batch_tokens=bt)
        if self.o.fabric:
            res = network.network_model(fabric=self.o.fabric, nics_per_node=self.o.nics_per_node, **kw)
            res.explain.insert(0, f"fabric {res.fabric_label}: {self.o.fabric_reason or 'chosen by the user (--fabric)'}")
        else:
            name = network.default_fabric_name(c)
            res = network.network_model(fabric=name, nics_per_node=self.o.nics_per_node, **kw)
            res.explain.insert(0, f"fabric {res.fabric_label}: the article's default for {c:,} cards")
            if not res.meets_bar and res.upgrade:
                up = res.upgrade
                first = res
                res = network.network_model(fabric=up["fabric"], nics_per_node=up["nics_per_node"], **kw)
                res.explain.insert(0, f"default {first.fabric_label} × {first.nics_per_node} reaches only "
                                   f"{first.scaling_efficiency:.2f}; upgraded to {res.fabric_label} × {res.nics_per_node}")
                res.upgrade = {**up, "applied": True, "from": first.fabric, "from_efficiency": first.scaling_efficiency}
        self._net[c] = res
        return res

    def scaling(self, cards: float) -> float:
        """Cross-node scaling efficiency: 1 inside one node (NVLink), else the network model's."""
        r = self.network(cards)
        return 1.0 if r is None else r.scaling_efficiency

    # --- reliability --------------------------------------------------------------------------------
    def _write_bw(self, cards: int) -> tuple[float, float]:
        """(required, used) checkpoint write bandwidth, bytes/s."""
        rate = self.o.failure_rate if self.o.failure_rate is not None else reliability.default_failure_rate()[0]
        m = reliability.job_mttf_s(cards, rate)
        ck = storage.checkpoint_bytes(self.trainable)
        req, _ = storage.checkpoint_write_required(ck, m, self.mode, cards=cards)
        if self.o.storage_write_gbps:
            return req, self.o.storage_write_gbps * 1e9
        return req, max(req, storage.floor_gbps(cards)[0] * 1e9)

    def reliability(self, cards: float, days: float | None = None, card_hours: float | None = None,
                    price: float | None = None) -> reliability.ReliabilityResult:
        c = max(1, int(round(cards)))
        if days is None and c in self._rel:
            return self._rel[c]
        _, used = self._write_bw(c)
        res = reliability.reliability_model(cards=c, gpus_per_node=self.g, ckpt_bytes=storage.checkpoint_bytes(self.trainable),
                                            write_bytes_per_s=used, mode=self.mode, rate_per_card_day=self.o.failure_rate,
                                            days=days, card_hours=card_hours, price_cny_per_card_hour=price)
        if days is None:
            self._rel[c] = res
        return res

    def goodput(self, cards: float) -> float:
        return self.reliability(cards).goodput

    # --- the plan's sections ------------------------------------------------------------------------
    def sections(self, *, cluster_cards: int, job_cards: float, days: float, gpu_hours: float,
                 price_cny_per_card_hour: float | None) -> dict[str, dict[str, Any]]:
        jc = max(1, int(round(job_cards)))
        net = self.network(jc)
        nodes = math.ceil(cluster_cards / self.g)
        scaling = 1.0 if net is None else net.scaling_efficiency
        card_hours = gpu_hours / scaling
        rel = self.reliability(jc, days=days, card_hours=card_hours, price=price_cny_per_card_hour)
        tokens_per_s = self.tokens / (days * 86400.0) if days > 0 else 0.0
        st = storage.storage_model(tokens=self.tokens, n_params=self.n, ckpt_params=self.trainable, cards=cluster_cards,
                                   gpus_per_node=self.g, tokens_per_s=tokens_per_s, mttf_s=rel.mttf_hours * 3600.0,
                                   mode=self.mode, vocab=self.o.vocab, keep=self.o.checkpoints_kept)
        # the BOM covers the whole cluster (spares included): size the fabric for all its nodes
        if net is None or nodes <= 1:
            nd = {"scaling_efficiency": 1.0, "switches": 0, "fabric": "none", "fabric_label": "NVLink inside one node",
                  "nics": 0, "nics_per_node": 0, "nodes": nodes, "cards": cluster_cards, "meets_bar": True,
                  "bar": network.config()["bar"]["scaling"], "topology": None, "upgrade": None,
                  "explain": ["one node: no inter-node fabric; collectives stay on the intra-node link"]}
            switch_w = 0.0
        else:
            fab = network.get_fabric(net.fabric)
            topo = network.fat_tree(nodes * net.nics_per_node, fab.switch_radix, self.o.oversubscription or 1.0,
                                    rails=net.nics_per_node, nodes=nodes)
            nd = net.to_dict()
            nd.update(nodes=nodes, cards=cluster_cards, job_cards=jc, nics=nodes * net.nics_per_node,
                      topology=topo.to_dict(), switches=topo.switches, cables=topo.cables, optics=topo.optics,
                      tiers=topo.tiers, leaf=topo.leaf, spine=topo.spine, core=topo.core)
            nd["explain"] = net.explain[: -len(net.topology.explain) or None] + topo.explain
            switch_w = fab.switch_w
            if self.o.fabric is None:
                nd["explain"].append("article: tens of cards on 25G/100G Ethernet; hundreds and up need RoCE/IB; "
                                     f"{'Ethernet is enough here' if net.ethernet_enough else 'RoCE or InfiniBand required here'}")
        pw = power.power_model(nodes=nodes, gpus_per_node=self.g, tdp_w=self.gpu.tdp_w, switches=int(nd["switches"]),
                               switch_w=switch_w, kw_per_rack=self.o.kw_per_rack, pue=self.o.pue, days=days)
        rel_d = rel.to_dict()
        rel_d["hot_spare_cards"] = rel.hot_spare_nodes * self.g
        rel_d["spares_within_redundancy"] = rel.hot_spare_nodes * self.g <= max(0, cluster_cards - jc)
        nd["rules"] = {
            "scaling_efficiency": "compute / (compute + DP/EP communication not hidden behind compute); "
                                  "collective times from nccl-tests busbw definitions, hierarchical in-node/cross-node",
            "switches": "fat-tree of radix-k switches (Al-Fares 2008): 2 tiers ≤ k²/2 endpoints with 3E/k switches, "
                        "3 tiers ≤ k³/4 with 5E/k; rail-optimised when a node has several NICs",
            "bar": "seed article step 3: cross-node scaling ≥ 0.8 is a qualified configuration",
        }
        sd = st.to_dict()
        sd["rules"] = {
            "capacity_tb": "(raw + tokenised + checkpoint × kept) × headroom; beside it the article's 3 × data",
            "write_gbps_required": st.write_rule,
            "bandwidth_gbps_recommended": "max(checkpoint writes, data loading, the article's floor)",
        }
        rel_d["rules"] = {
            "mttf_hours": "1 / (cards × failures per card-day) × 24",
            "interruptions_per_day": "cards × failures per card-day (Llama 3: 419 in 54 days on 16,384 H100)",
            "checkpoint_interval_min": "Daly 2006 eq. 37: √(2δM)·[1 + ⅓√(δ/2M) + (δ/2M)/9] − δ",
            "goodput": "τ/(τ+δ) × (1 − (restart + (τ+δ)/2)/MTTF)",
            "hot_spare_nodes": "95th percentile of Poisson(interruptions/day × repair days)",
        }
        pd = pw.to_dict()
        pd["rules"] = {
            "total_kw": "nodes × cards × TDP × (1 + host overhead) + switches × switch power (IT load)",
            "racks": "⌈nodes / ⌊kW per rack / node kW⌋⌉ + network racks",
            "energy_mwh": "IT kW × PUE × hours",
        }
        return {"network": nd, "storage": sd, "reliability": rel_d, "power": pd}

    def plan_sections(self, p: Any, gpus_rec: int, gpus_training: float, days: float, gpu_hours: float, cost: Any):
        """(network, storage, reliability, power) dicts for a Plan."""
        price = cost.price_cny_per_card_hour if cost is not None else None
        sec = self.sections(cluster_cards=int(gpus_rec), job_cards=gpus_training, days=days, gpu_hours=gpu_hours,
                            price_cny_per_card_hour=price)
        return sec["network"], sec["storage"], sec["reliability"], sec["power"]


def solve_cards(start: int, needed_for, max_iter: int = 12, max_cards: int = 1_000_000) -> int:
    """Smallest n with n ≥ needed_for(n) (scaling and goodput depend on the card count), from the loss-free count.

    A short fixed-point iteration; when it does not settle (past some size failures and communication
    make extra cards useless), scan a geometric grid for the smallest n that meets the need, or else
    the n with the most effective cards n × needed_for's target / needed_for(n) (the deadline is then
    unreachable and the planner warns that the days exceed it)."""
    n = max(1, int(start))
    seen: list[int] = [n]
    for _ in range(max_iter):
        nxt = max(1, math.ceil(needed_for(n) - 1e-9))
        if nxt == n:
            return n
        if nxt in seen:  # a cycle: the largest of it meets the deadline
            return max(seen[seen.index(nxt):])
        if nxt > max_cards:
            break
        seen.append(nxt)
        n = nxt
    grid, c = [], min(max(1, int(start)), max_cards)
    while c <= max_cards:
        grid.append(c)
        c = max(c + 1, int(c * 1.05))
    best, best_ratio = grid[0], 0.0
    for c in grid:
        need = needed_for(c)
        if c >= need:
            return c
        if c / need > best_ratio:
            best, best_ratio = c, c / need
    return best


def defaults_used(req: Any) -> dict[str, str]:
    """The infrastructure defaults a plan used (those the user did not set), with their sources."""
    from .data import load_toml

    out: dict[str, str] = {}
    if getattr(req, "failure_rate", None) is None:
        out["failure_rate"] = reliability.default_failure_rate()[1]
    out["restart"] = reliability.config()["restart"]["source"]
    out["checkpoint"] = reliability.config()["checkpoint"]["source"]
    if getattr(req, "fabric", None) is None:
        out["fabric"] = network.config()["defaults"]["source"]
    out["fabric_efficiency"] = "data/fabrics.toml (per fabric source)"
    out["overlap"] = network.config()["overlap"]["source"] + "; contention: " + load_toml("perf.toml")["overlap"]["source"]
    out["global_batch"] = network.config()["batch"]["source"]
    out["storage"] = storage.config()["data"]["source"]
    if getattr(req, "kw_per_rack", None) is None:
        out["kw_per_rack"] = load_toml("power.toml")["rack"]["source"]
    if getattr(req, "pue", None) is None:
        out["pue"] = load_toml("power.toml")["pue"]["source"]
    out["host_power"] = load_toml("power.toml")["host"]["source"]
    return out


# PlanRequest field → InfraOptions field (the CLI options and the API's JSON use these names)
REQUEST_FIELDS = ("fabric", "fabric_reason", "nics_per_node", "oversubscription", "failure_rate", "checkpoint_async", "checkpoints_kept",
                  "storage_write_gbps", "vocab", "kw_per_rack", "pue", "layout", "step_compute_s", "batch_tokens")


def fabric_choice(model: InfraModel, cards: float) -> tuple[network.Fabric, int] | None:
    """The fabric and rails the network model picks at `cards` cards (None inside one node)."""
    res = model.network(cards)
    if res is None:
        return None
    return network.get_fabric(res.fabric), res.nics_per_node


def perf_fabric(fab: network.Fabric, nics_per_node: int, gpus_per_node: int):
    """A fabric as the step-time model (kashu.perf.Fabric) sees it: per-card injection bandwidth and
    the fabric's achieved efficiency."""
    from .perf import Fabric as PerfFabric

    return PerfFabric(bytes_per_s_per_gpu=network.injection_bandwidth(fab.port_bytes_per_s, nics_per_node, gpus_per_node),
                      efficiency=fab.efficiency, source=f"{nics_per_node} × {fab.label} per node")


def from_request(req: Any, *, n_params: float, tokens: float, flops_per_token: float, gpu: Accelerator,
                 flops_per_card: float) -> InfraModel:
    """Build the model from a PlanRequest (fields it lacks take their defaults)."""
    kw = {k: getattr(req, k) for k in REQUEST_FIELDS if getattr(req, k, None) is not None}
    trainable = None
    if getattr(req, "method", "full") == "lora":
        from .compute import lora_adapter_params

        trainable = lora_adapter_params(n_params, int(getattr(req, "lora_rank", 16)))
    return InfraModel(n_params=n_params, tokens=tokens, flops_per_token=flops_per_token, gpu=gpu,
                      flops_per_card=flops_per_card, trainable_params=trainable, options=InfraOptions(**kw))
