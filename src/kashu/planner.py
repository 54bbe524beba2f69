"""The planner: from model, data and a deadline (or a card count, or a budget) to a cluster.

The seed article's method, done correctly:
  1. total compute C = 6·N·D                                 (compute)
  2. card-hours = C / (dense peak × MFU)
  3. cards for the deadline = card-hours / deadline hours    (gpus_min)
  4. explicit losses: cross-node scaling, failure goodput    (gpus_needed)
  5. the article's 20 % redundancy, rounded to whole nodes   (gpus_recommended)
  6. tier, advice, rough cost
Inverse modes: a card count gives days; a budget gives the largest affordable cluster.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import asdict, dataclass, field
from typing import Any

from . import compute, infra, predict, renting
from .advice import Advice, advise, infra_advice, tier_for
from .cost import Cost, check_lease_unit, default_lease_unit, lease_cost, reference_price
from .data import default, default_source, load_toml
from .errors import KashuError
from .hardware import Accelerator, get_gpu
from .quantities import format_count, parse_count, parse_days, parse_money


@dataclass
class PlanRequest:
    """Everything a user can ask for; field names are the CLI option names (and the API's JSON)."""

    params: str | float | None = None
    tokens: str | float | None = None
    gpu: str = "H800"
    days: str | float | None = None
    gpus: str | int | None = None
    budget: str | float | None = None
    mfu: float | None = None
    method: str = "full"  # full | lora
    lora_rank: int = 16
    precision: str = "bf16"
    framework: str = "modern"  # training stack for the predicted MFU: modern | megatron-2022 | megatron-2021 | nemo | fsdp | deepspeed-2021
    redundancy: float | None = None
    lease: str | None = None
    lang: str = "en"
    # cluster infrastructure (kashu.infra): None = the sourced default
    fabric: str | None = None
    fabric_reason: str | None = None  # set by the planner when it picks the fabric (None: the user's)
    schedule_margin: float | None = None  # set by the planner: the risk model's median slowdown it sizes for
    nics_per_node: int | None = None
    oversubscription: float | None = None
    failure_rate: float | None = None
    checkpoint_async: bool | None = None
    checkpoints_kept: int | None = None
    storage_write_gbps: float | None = None
    kw_per_rack: float | None = None
    pue: float | None = None
    # renting (issue 5, kashu.renting): quotes from the price book, residency, stage, subsidy
    quotes: list | None = None  # kashu.pricebook.Quote rows; the cheapest valid match prices the plan
    data_must_stay_local: bool = False
    stage: str | None = None  # explore | train | iterate
    subsidy: float | None = None  # share of the lease a subsidy pays (default: data/renting.toml)
    voucher_cap: float | None = None  # CNY per firm per year
    domestic_reserve: float | None = None  # share of nodes on domestic cards for compatibility testing
    today: str | None = None  # ISO date quotes must be valid on (default: today)
    model: str | None = None  # a preset (kashu.models); its parameters and shape replace --params
    from_bench: str | None = None  # stored benchmark run(s): id, `latest` or "12,14" (kashu.bench.use)
    force: bool = False  # use a benchmark from another card type anyway


@dataclass
class Step:
    """One line of the working: what was computed, how, and where the rule comes from."""

    key: str
    en: str
    zh: str
    formula: str
    value: float
    unit: str
    source: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Plan:
    inputs: dict[str, Any]
    total_flops: float
    flops_per_token: float
    gpu_hours: float
    mfu: float
    gpus_min: int
    gpus_needed: int
    gpus_recommended: int
    gpus_training: float
    days: float
    deadline_days: float | None
    tier: str
    tokens_per_param: float
    scaling_efficiency: float
    goodput: float
    redundancy: float
    cost: Cost | None
    advice: list[Advice]
    warnings: list[str]
    warnings_zh: list[str]
    steps: list[Step]
    defaults_used: dict[str, str]
    gpu: Accelerator
    layout: dict | None = None
    network: dict | None = None
    storage: dict | None = None
    reliability: dict | None = None
    power: dict | None = None
    risk: dict | None = None
    extras: dict = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = {
            "total_flops": self.total_flops,
            "flops_per_token": self.flops_per_token,
            "gpu_hours": self.gpu_hours,
            "mfu": self.mfu,
            "gpus_min": self.gpus_min,
            "gpus_needed": self.gpus_needed,
            "gpus_recommended": self.gpus_recommended,
            "gpus_training": self.gpus_training,
            "days": self.days,
            "deadline_days": self.deadline_days,
            "tier": self.tier,
            "tokens_per_param": self.tokens_per_param,
            "scaling_efficiency": self.scaling_efficiency,
            "goodput": self.goodput,
            "redundancy": self.redundancy,
            "cost": self.cost.to_dict() if self.cost else {"total_cny": None, "source": "no reference price"},
            "advice": [a.to_dict() for a in self.advice],
            "warnings": list(self.warnings),
            "warnings_zh": list(self.warnings_zh),
            "steps": [s.to_dict() for s in self.steps],
            "defaults_used": dict(self.defaults_used),
            "gpu": self.gpu.to_dict(),
            "inputs": dict(self.inputs),
            "layout": self.layout,
            "network": self.network,
            "storage": self.storage,
            "reliability": self.reliability,
            "power": self.power,
            "risk": self.risk,
        }
        d.update(self.extras)
        return d


def _round_up(x: float, multiple: int) -> int:
    return int(math.ceil(x / multiple - 1e-9) * multiple)


def _cluster_size(cards: float, node: int) -> int:
    """Whole nodes; below half a node, the next power of two (1, 2, 4 cards rent singly)."""
    if cards <= node / 2:
        return 1 << max(0, math.ceil(math.log2(max(cards, 1.0)) - 1e-9))
    return _round_up(cards, node)


def _check_fraction(value: float | None, name: str, lo: float, hi: float) -> None:
    if value is None:
        return
    if not isinstance(value, (int, float)) or math.isnan(value) or not lo < value <= hi:
        raise KashuError(f"--{name} {value!r} must be a fraction in ({lo}, {hi}]",
                         f"--{name} {value!r} 应为 ({lo}, {hi}] 之间的小数", name)


class _Resolved:
    """Parsed, checked inputs."""

    def __init__(self, req: PlanRequest):
        lim = load_toml("defaults.toml")["limits"]
        if req.lang not in ("en", "zh"):
            raise KashuError(f"--lang {req.lang!r} must be en or zh", f"--lang {req.lang!r} 应为 en 或 zh", "lang")
        self.gpu = get_gpu(req.gpu)
        self.spec = None
        if req.model:
            from .models import get_model

            if req.params is not None:
                raise KashuError("give --model or --params, not both", "--model 与 --params 只能给一个", "params")
            self.spec = get_model(req.model)
        params = float(self.spec.n_params) if self.spec is not None else req.params  # never write into the request
        if params is None:
            raise KashuError("--params is required (e.g. 7B or 70亿)", "需要 --params（例如 7B 或 70亿）", "params")
        self.n = parse_count(params, "parameters", "参数量", "params")
        if not lim["min_params"] <= self.n <= lim["max_params"]:
            raise KashuError(
                f"--params {req.params!r} = {self.n:.3g} is outside {lim['min_params']:.0e}..{lim['max_params']:.0e}; "
                "expected a model size like 7B",
                f"--params {req.params!r} = {self.n:.3g} 超出 {lim['min_params']:.0e}..{lim['max_params']:.0e}", "params")
        self.chinchilla = False
        tpp = default("chinchilla_tokens_per_param")
        if req.tokens is None:
            raise KashuError("--tokens is required (e.g. 1T, 1万亿 or chinchilla)",
                             "需要 --tokens（例如 1T、1万亿 或 chinchilla）", "tokens")
        if isinstance(req.tokens, str) and req.tokens.strip().lower() in ("chinchilla", "optimal", "龙猫"):
            self.chinchilla = True
            self.d = compute.chinchilla_tokens(self.n, tpp)
        else:
            self.d = parse_count(req.tokens, "tokens", "数据量", "tokens")
        if not lim["min_tokens"] <= self.d <= lim["max_tokens"]:
            raise KashuError(f"--tokens {req.tokens!r} = {self.d:.3g} is outside {lim['min_tokens']:.0e}..{lim['max_tokens']:.0e}",
                             f"--tokens {req.tokens!r} = {self.d:.3g} 超出合理范围", "tokens")
        given = [k for k in ("days", "gpus", "budget") if getattr(req, k) not in (None, "")]
        if len(given) != 1:
            if not given:
                raise KashuError("give one of --days (a deadline), --gpus (a card count) or --budget",
                                 "请给出 --days（期限）、--gpus（卡数）或 --budget（预算）之一", "days")
            raise KashuError(f"--{given[0]} and --{given[1]} contradict each other: give only one of --days, --gpus, --budget",
                             f"--{given[0]} 与 --{given[1]} 互相矛盾：--days、--gpus、--budget 只能给一个", given[1])
        self.mode = given[0]
        self.deadline_days = None
        self.gpus = None
        self.budget_cny = None
        if self.mode == "days":
            self.deadline_days = parse_days(req.days, "--days", "--days", "days")
            if self.deadline_days > lim["max_days"]:
                raise KashuError(f"--days {req.days!r} is more than {lim['max_days']} days", f"--days {req.days!r} 超过 {lim['max_days']} 天", "days")
        elif self.mode == "gpus":
            g = parse_count(req.gpus, "--gpus", "--gpus", "gpus")
            if g != int(g) or g > lim["max_gpus"]:
                raise KashuError(f"--gpus {req.gpus!r} must be a whole number of cards up to {lim['max_gpus']:,}",
                                 f"--gpus {req.gpus!r} 应为不超过 {lim['max_gpus']:,} 的整数卡数", "gpus")
            self.gpus = int(g)
        else:
            amount, currency = parse_money(req.budget, "budget")
            self.budget_cny = amount * (default("usd_cny") if currency == "USD" else 1.0)
        _check_fraction(req.mfu, "mfu", 0.0, 1.0)
        if req.mfu is not None and req.mfu > 0.85:
            raise KashuError(f"--mfu {req.mfu} is above any published training run (~0.6); expected e.g. 0.40",
                             f"--mfu {req.mfu} 高于任何公开的训练记录（约0.6）；应为 0.40 这样的值", "mfu")
        if req.redundancy is not None and (math.isnan(req.redundancy) or not 0 <= req.redundancy < 1):
            raise KashuError(f"--redundancy {req.redundancy!r} must be in [0, 1)", f"--redundancy {req.redundancy!r} 应在 [0, 1) 之间", "redundancy")
        if req.method not in ("full", "lora"):
            raise KashuError(f"--method {req.method!r} must be full or lora", f"--method {req.method!r} 应为 full 或 lora", "method")
        from .perf import check_framework

        check_framework(req.framework)
        if req.precision not in ("bf16", "fp8"):
            raise KashuError(f"--precision {req.precision!r} must be bf16 or fp8", f"--precision {req.precision!r} 应为 bf16 或 fp8", "precision")
        if req.method == "lora" and not 1 <= int(req.lora_rank) <= 4096:
            raise KashuError(f"--lora-rank {req.lora_rank!r} must be 1..4096", f"--lora-rank {req.lora_rank!r} 应在 1..4096", "lora_rank")
        self.peak = self.gpu.peak_flops_for(req.precision)
        self.lease = check_lease_unit(req.lease) if req.lease else None


def plan(req: PlanRequest | None = None, **kwargs: Any) -> Plan:
    """Plan a training run. `kashu.plan(params="7B", tokens="1T", gpu="H800", days=30)`."""
    if req is None:
        req = PlanRequest(**kwargs)
    elif kwargs:
        raise TypeError("give a PlanRequest or keyword arguments, not both")
    r = _Resolved(req)
    if r.mode == "budget" and req.mfu is None and req.method == "full" and req.from_bench in (None, ""):
        return _plan_budget_predicted(req)
    gpu = r.gpu
    steps: list[Step] = []
    warnings: list[str] = []
    warnings_zh: list[str] = []
    defaults_used: dict[str, str] = {}

    # 1. compute
    fpt, formula, src = _flops_per_token(r, req)
    total = fpt * r.d
    if r.chinchilla:
        steps.append(Step("tokens", "Tokens (Chinchilla-optimal)", "数据量（Chinchilla 最优）", "D = 20·N", r.d, "tokens",
                          default_source("chinchilla_tokens_per_param")))
        defaults_used["chinchilla_tokens_per_param"] = default_source("chinchilla_tokens_per_param")
    steps.append(Step("total_flops", "Training compute", "训练总算力", formula, total, "FLOPs", src))

    # 2. card-hours at a realistic MFU: measured (--from-bench), given (--mfu), predicted from the best layout, or default
    mfu, mfu_source, mfu_source_zh, pred, bench = _choose_mfu(r, req, gpu, total, fpt, defaults_used)
    if bench is not None:
        bench.combine(pred)  # measured compute inside the predicted layout's communication and bubble
    eff = r.peak * mfu
    gpu_hours = compute.card_seconds(total, r.peak, mfu) / 3600.0
    steps.append(Step("effective_flops", "Effective throughput per card", "单卡有效算力",
                      f"dense {req.precision.upper()} peak {r.peak / 1e12:g} TFLOPS × MFU {mfu:.2f}", eff, "FLOP/s",
                      f"{gpu.name}: {gpu.source}"))
    steps.append(Step("gpu_hours", "Card-hours", "卡时", "C / (peak × MFU) / 3600", gpu_hours, "card-hours",
                      "PaLM (Chowdhery et al. 2022) Appendix B, MFU definition"))

    node = gpu.gpus_per_node
    redundancy = default("redundancy") if req.redundancy is None else float(req.redundancy)
    if req.redundancy is None:
        defaults_used["redundancy"] = default_source("redundancy")
    # cross-node scaling (network model) and goodput (reliability model) depend on the cluster size
    infra_req = req
    if pred is not None and pred.get("fabric_choice") and not getattr(req, "fabric", None):
        f, n, why = pred["fabric_choice"]
        infra_req = dataclasses.replace(req, fabric=f, nics_per_node=n, fabric_reason=why)
    im = infra.from_request(infra_req, n_params=r.n, tokens=r.d, flops_per_token=fpt, gpu=gpu, flops_per_card=eff)
    other = default("other_goodput")  # evaluations, data stalls, slow starts: the share failures don't explain
    defaults_used["other_goodput"] = default_source("other_goodput")

    def goodput_for(cards: float) -> float:
        """Useful share of wall-clock time: failures (kashu.reliability) × other overheads."""
        return im.goodput(cards) * other
    defaults_used.update(infra.defaults_used(req))

    def scaling_for(cards: float) -> float:
        """Cross-node scaling: a predicted MFU already carries the communication of its cluster size;
        otherwise the network model's efficiency (1 inside one node)."""
        if bench is not None and (bench.scaling is not None or bench.mfu is not None):
            return bench.scaling_for(cards, node)  # measured (`kashu bench scale`) or around the measured compute
        if pred is not None:
            return 1.0
        return im.scaling(cards)

    def days_on(cards: float) -> float:
        return gpu_hours / (cards * scaling_for(cards) * goodput_for(cards)) / 24.0

    # 3-5. solve for the cluster
    if r.mode == "days":
        hours = r.deadline_days * 24.0
        gpus_min = max(1, math.ceil(gpu_hours / hours - 1e-9))
        steps.append(Step("gpus_min", "Cards for the deadline (no losses)", "按期限所需卡数（不计损耗）",
                          f"⌈card-hours / ({r.deadline_days:g} d × 24 h)⌉", gpus_min, "cards", "seed article, step 2"))
        max_gpus = int(load_toml("defaults.toml")["limits"]["max_gpus"])
        if gpus_min > max_gpus:
            raise KashuError(
                f"{gpus_min:,} cards would be needed for {r.deadline_days:g} days, more than any cluster ({max_gpus:,}); "
                "expected a longer --days, fewer --tokens or a smaller model",
                f"{r.deadline_days:g} 天内完成需要 {gpus_min:,} 张卡，超过任何集群（{max_gpus:,}）；请放宽 --days、减少 --tokens 或缩小模型",
                "days")
        margin = float(req.schedule_margin or 1.0)
        gpus_needed = infra.solve_cards(gpus_min, lambda c: gpu_hours * margin / hours / (scaling_for(c) * goodput_for(c)))
        scaling, goodput = scaling_for(gpus_needed), goodput_for(gpus_needed)
        steps.append(Step("gpus_needed", "…with scaling loss and failure goodput", "…计入扩展损耗与故障有效率",
                          f"⌈gpus_min / (scaling {scaling:.2f} × goodput {goodput:.2f})⌉ (fixed point in cards)", gpus_needed, "cards",
                          "scaling: kashu.network (DP communication vs compute); goodput: kashu.reliability (MTTF, Daly interval) "
                          f"× {other:g} other overheads ({default_source('other_goodput')})"))
        at_needed = {"scaling_at_needed": scaling, "goodput_at_needed": goodput}
        if margin > 1.0:
            steps[-1].formula += f" × schedule margin {margin:.3f}"
            steps[-1].en += ", sized so the median Monte Carlo run meets the deadline"
            steps[-1].zh += "，按蒙特卡洛中位数满足期限取整"
            steps[-1].source += "; schedule margin: median days / point days of kashu.risk (data/risk.toml ranges)"
        # a job that fits on one or two cards gains nothing from a spare card
        gpus_rec = _cluster_size(gpus_needed * (1 + redundancy) if gpus_needed > 2 else gpus_needed, node)
        steps.append(Step("gpus_recommended", f"…plus {redundancy:.0%} redundancy, whole {node}-card nodes",
                          f"…加 {redundancy:.0%} 冗余，按 {node} 卡整机取整",
                          f"⌈gpus_needed × {1 + redundancy:g} / {node}⌉ × {node}" if gpus_rec >= node else "next power of two below one node", gpus_rec, "cards",
                          default_source("redundancy")))
        gpus_training = gpus_rec / (1 + redundancy) if gpus_needed > 2 else float(gpus_rec)
        days = days_on(gpus_training)
        steps.append(Step("days", "Expected days (training share of the cluster)", "预计天数（集群训练份额）",
                          f"card-hours / ({gpus_training:.1f} cards × scaling × goodput) / 24", days, "days"))
    elif r.mode == "gpus":
        gpus_min = gpus_needed = gpus_rec = r.gpus
        gpus_training = float(r.gpus)
        days = days_on(r.gpus)
        steps.append(Step("days", f"Days on {r.gpus} cards", f"{r.gpus} 张卡所需天数",
                          "card-hours / (cards × scaling × goodput) / 24", days, "days"))
        if r.gpus % node and r.gpus > node:
            warnings.append(f"{r.gpus} cards is not a whole number of {node}-card nodes; rentals come by the node")
            warnings_zh.append(f"{r.gpus} 张卡不是 {node} 卡整机的整数倍；租用按整机计")
        if redundancy > 0:
            spare_days = days_on(r.gpus / (1 + redundancy))
            warnings.append(f"all {r.gpus} cards train: no {redundancy:.0%} reserve for debugging and outages "
                            f"(with one, {spare_days:.1f} days)")
            warnings_zh.append(f"全部 {r.gpus} 张卡都用于训练，未留 {redundancy:.0%} 冗余（留冗余则需 {spare_days:.1f} 天）")
    else:
        gpus_rec, days = _solve_budget(r, gpu, gpu_hours, days_on, req, r.budget_cny, scaling_for, goodput_for)
        gpus_min = gpus_needed = gpus_rec
        gpus_training = float(gpus_rec)
        steps.append(Step("gpus_budget", "Fastest cluster the budget leases", "预算内最快的集群",
                          "n (whole nodes) with the fewest days among lease cost(n) ≤ budget", gpus_rec, "cards"))
        steps.append(Step("days", f"Days on {gpus_rec} cards", f"{gpus_rec} 张卡所需天数",
                          "card-hours / (cards × scaling × goodput) / 24", days, "days"))
    scaling, goodput = scaling_for(gpus_training), goodput_for(gpus_training)
    tier = tier_for(gpus_rec)

    # 6. cost
    used_card_hours = gpu_hours / (scaling * goodput)
    cost = _price(req, r, gpu, gpus_rec, days, used_card_hours)  # the price book wins over the reference
    unit = cost.lease_unit if cost else (r.lease or default_lease_unit(gpus_rec, days, tier))
    if cost is None:
        warnings.append(f"no reference price for {gpu.name}: add a quote to price the plan")
        warnings_zh.append(f"{gpu.name} 没有参考价格：请添加报价")
    else:
        steps.append(Step("cost", f"Lease: {gpus_rec} cards × {cost.lease_units} {unit}(s)",
                          f"租金：{gpus_rec} 张卡 × {cost.lease_units} 个租期（{unit}）",
                          f"cards × {cost.lease_hours:g} h × ¥{cost.price_cny_per_card_hour:.2f}/card-hour",
                          cost.total_cny, "CNY", cost.source))

    tpp = r.d / r.n
    _sanity_warnings(r, req, gpu, gpus_rec, tpp, warnings, warnings_zh)

    inputs = {
        "params": r.n, "tokens": r.d, "tokens_chinchilla": r.chinchilla, "gpu": gpu.name, "mode": r.mode,
        "days": r.deadline_days, "gpus": r.gpus, "budget_cny": r.budget_cny, "mfu": mfu, "mfu_source": mfu_source,
        "mfu_source_zh": mfu_source_zh,
        "method": req.method, "lora_rank": req.lora_rank if req.method == "lora" else None,
        "precision": req.precision, "redundancy": redundancy, "lease": unit, "lang": req.lang,
        "schedule_margin": req.schedule_margin, "framework": req.framework,
    }
    p = Plan(
        inputs=inputs, total_flops=total, flops_per_token=fpt, gpu_hours=gpu_hours, mfu=mfu,
        gpus_min=int(gpus_min), gpus_needed=int(gpus_needed), gpus_recommended=int(gpus_rec),
        gpus_training=gpus_training, days=days, deadline_days=r.deadline_days, tier=tier,
        tokens_per_param=tpp, scaling_efficiency=scaling, goodput=goodput, redundancy=redundancy,
        cost=cost, advice=[], warnings=warnings, warnings_zh=warnings_zh, steps=steps,
        defaults_used=defaults_used, gpu=gpu,
    )
    max_days = load_toml("defaults.toml")["limits"]["max_days"]
    if r.deadline_days is None and days > max_days:
        p.warnings.append(f"the run would take {days / 365:,.0f} years: more cards, fewer tokens or a smaller model")
        p.warnings_zh.append(f"这次训练要 {days / 365:,.0f} 年：请增加卡数、减少数据或缩小模型")
    if r.deadline_days is not None and days > r.deadline_days * 1.0001:
        p.warnings.append(f"expected {days:.1f} days exceeds the {r.deadline_days:g}-day deadline")
        p.warnings_zh.append(f"预计 {days:.1f} 天，超过 {r.deadline_days:g} 天期限")
    p.extras["other_goodput"] = other
    if r.mode == "days":
        p.extras.update(at_needed)
    p.network, p.storage, p.reliability, p.power = im.plan_sections(p, gpus_rec, gpus_training, days, gpu_hours, cost)
    if pred is not None:
        p.layout = pred["layout"]
        p.extras["scaling_curve"] = pred["curve"]
        p.extras["predicted_scaling_efficiency"] = pred["scaling_efficiency"]
        if r.spec is None:
            p.extras["model_shape"] = pred["shape"]
        if p.network is not None:
            if pred.get("fabric_upgrade"):  # applied when the planner chose the fabric, proposed when the user did
                p.network["upgrade"] = {**pred["fabric_upgrade"], "applied": not getattr(req, "fabric", None)}
            p.network["fabric_model_scaling_efficiency"] = p.network.get("scaling_efficiency")
            p.network["scaling_efficiency"] = pred["scaling_efficiency"]
            p.network.setdefault("explain", []).insert(
                0, "scaling efficiency from the step-time model (throughput per card at this size vs one node); "
                   "it is already inside the predicted MFU")
        bar = default("scaling_bar")
        if pred["scaling_efficiency"] < bar:
            p.warnings.append(f"predicted cross-node scaling efficiency {pred['scaling_efficiency']:.2f} is below the "
                              f"article's {bar:.1f} bar")
            p.warnings_zh.append(f"预测的跨节点扩展效率 {pred['scaling_efficiency']:.2f} 低于文章的 {bar:.1f} 合格线")
    p.advice = advise(p) + infra_advice(p)
    renting.enrich(p, req)  # risk, lease options, site, subsidy (kashu.renting)
    if (r.mode == "days" and req.schedule_margin is None and p.risk and p.risk.get("days_p50")
            and p.risk["days_p50"] > r.deadline_days and p.gpus_needed > 2):
        # the point estimate meets the deadline but the median Monte Carlo run does not: size for the median
        return plan(dataclasses.replace(req, schedule_margin=p.risk["days_p50"] / p.days))
    if bench is not None:  # after renting, which sets the report's extra rows
        from .bench.use import annotate

        annotate(p, bench)
    return p


def _flops_per_token(r: _Resolved, req: PlanRequest) -> tuple[float, str, str]:
    """Training FLOPs per token, the formula shown, and its source."""
    if req.method == "lora":
        n_c = r.spec.n_active_params if r.spec is not None else r.n  # an MoE multiplies by its active experts only
        adapters = compute.lora_adapter_params(n_c, int(req.lora_rank))
        fpt = compute.lora_flops_per_token(n_c, adapters)
        formula = f"(4·N + 6·N_adapter)·D, N_adapter ≈ {format_count(adapters)} at rank {req.lora_rank}"
        src = "Hu et al. 2021 (LoRA) §4.2: frozen weights need no weight gradients; Kaplan et al. 2020 §2.1"
    elif r.spec is not None:
        from .perf import model_flops_per_token

        # the same count the predicted MFU divides by; an MoE counts its active parameters only
        fpt = model_flops_per_token(r.spec)
        n_act = r.spec.n_active_params
        formula = (f"(6·N_active + 6·L·s·(d_qk + d_v))·D, N_active={format_count(n_act)}"
                   f"{f' of {format_count(r.n)}' if n_act != r.n else ''}, L={r.spec.layers}, s={r.spec.seq_len}")
        src = ("PaLM (Chowdhery et al. 2022) Appendix B; MoE: active parameters only (Fedus et al. 2022 §2; "
               f"DeepSeek-V3 report §4.2: 37B of 671B activated per token); shape: {r.spec.source}")
    else:
        fpt = 6.0 * r.n
        formula = "6·N·D"
        src = "Kaplan et al. 2020, §2.1"
    return fpt, formula, src


def _choose_mfu(r: _Resolved, req: PlanRequest, gpu: Accelerator, total: float, fpt: float,
                defaults_used: dict[str, str]):
    """(mfu, source, source in Chinese, the step-time model's prediction or None, the benchmark or None)."""
    bench = None
    if req.from_bench not in (None, ""):
        from .bench.use import from_bench  # lazy: plans without a benchmark never open the store

        bench = from_bench(req.from_bench, gpu, req.precision, req.force, req.mfu, r.n)
    pred = None
    if req.mfu is None and req.method == "full" and r.mode in ("days", "gpus"):
        pred = _predict(r, gpu, total, req, fpt, bench)
    mfu_source_zh = None
    if bench is not None and bench.mfu is not None:
        mfu, mfu_source = bench.mfu, bench.mfu_source
    elif req.mfu is not None:
        mfu, mfu_source = float(req.mfu), "user (--mfu)"
    elif pred is not None:
        mfu, mfu_source = pred["mfu"], "predicted: " + pred["why"]
        mfu_source_zh = "预测：" + pred["why_zh"]
    else:
        mfu, mfu_source = default("mfu"), "default: " + default_source("mfu")
        defaults_used["mfu"] = default_source("mfu")
    return mfu, mfu_source, mfu_source_zh, pred, bench


def _sanity_warnings(r: _Resolved, req: PlanRequest, gpu: Accelerator, gpus_rec: int, tpp: float,
                     warnings: list[str], warnings_zh: list[str]) -> None:
    """Feasible but unwise: under-trained models, training state that does not fit the cluster."""
    if tpp < 1:
        warnings.append(f"only {tpp:.2g} tokens per parameter (D/N < 1): the model will be badly under-trained")
        warnings_zh.append(f"每个参数仅 {tpp:.2g} 个 token（D/N < 1）：模型会严重训练不足")
    min_cards_memory = math.ceil(16.0 * r.n / gpu.memory_bytes) if req.method == "full" else math.ceil(2.0 * r.n / gpu.memory_bytes)
    if req.method == "full" and gpus_rec < min_cards_memory:
        warnings.append(
            f"{gpus_rec} × {gpu.name} ({gpu.memory_gb:g} GB) cannot hold the training state of {format_count(r.n)} "
            f"parameters (16 bytes/param with mixed-precision Adam ≈ {16 * r.n / 1e9:,.0f} GB, at least {min_cards_memory} cards even fully sharded)")
        warnings_zh.append(f"{gpus_rec} 张 {gpu.name}（{gpu.memory_gb:g} GB）放不下 {format_count(r.n, 'zh')} 参数的训练状态"
                           f"（混合精度 Adam 每参数 16 字节 ≈ {16 * r.n / 1e9:,.0f} GB，即使全分片也至少要 {min_cards_memory} 张）")
    elif gpu.memory_gb < 40 and r.n > 13e9 and req.method == "full":
        warnings.append(f"{format_count(r.n)} parameters on {gpu.memory_gb:g} GB cards: feasible only with heavy sharding "
                        "and offload; expect low MFU")
        warnings_zh.append(f"{format_count(r.n, 'zh')} 参数放在 {gpu.memory_gb:g} GB 显存的卡上：只能靠重度分片和卸载，MFU 会很低")


def _predict(r: _Resolved, gpu: Accelerator, total: float, req: PlanRequest, fpt: float, bench) -> dict | None:
    """The step-time model's MFU for this plan (kashu.predict), over the measured fabric when a
    `kashu bench comm` run is given, else over the fabric the cluster will have; None when no layout fits."""
    from .models import shape_for_params

    try:
        spec = r.spec or shape_for_params(r.n)
    except KashuError:
        return None
    job = predict.Job(spec=spec, gpu=gpu, precision=req.precision, total_flops=total, cards=r.gpus,
                      deadline_hours=None if r.deadline_days is None else r.deadline_days * 24.0,
                      assumed_shape=r.spec is None, framework=req.framework)
    if bench is not None and bench.fabric is not None:  # a measured multi-node fabric (`kashu bench comm`)
        return predict.predict_mfu(job, lambda c, f=bench.fabric: None if c <= gpu.gpus_per_node else f)
    im0 = infra.from_request(req, n_params=r.n, tokens=r.d, flops_per_token=fpt, gpu=gpu,
                             flops_per_card=r.peak * default("mfu"))
    return predict.predict_on_fabric(job, im0, user_fabric=bool(getattr(req, "fabric", None)))


def _price(req: PlanRequest, r: _Resolved, gpu: Accelerator, cards: int, days: float, used_card_hours: float) -> Cost | None:
    """The plan's price: the cheapest valid quote in the book, else the cheapest reference lease over the
    rental modes offered at this size (kashu.renting); with --lease, the reference price at that unit."""
    cost = renting.price(req, gpu, cards, days, used_card_hours, r.d, r.lease)
    if cost is None and r.lease:
        cost = lease_cost(gpu, cards, days, used_card_hours, r.d, r.lease)
    return cost


def _solve_budget(r: _Resolved, gpu: Accelerator, gpu_hours: float, days_on, req: PlanRequest, budget: float,
                  scaling_for, goodput_for):
    """The fastest cluster whose lease fits the budget, priced exactly as the final plan is. Lease
    rounding makes big clusters cost more, and past some size failures and communication make them
    slower, so the answer is bounded."""
    node = gpu.gpus_per_node
    if reference_price(gpu) is None and not req.quotes:
        raise KashuError(f"no price for {gpu.name}, so a budget cannot be turned into cards; add a quote",
                         f"{gpu.name} 没有价格，无法把预算换算成卡数；请添加报价", "budget")
    lim = int(load_toml("defaults.toml")["limits"]["max_gpus"])
    best = None
    cands = sorted({c for c in (1, 2, 4) if c < node} | {node * k for k in _node_grid(lim // node)})
    first = None

    def consider(n: int) -> None:
        nonlocal best, first
        d = days_on(n)
        c = _price(req, r, gpu, n, d, gpu_hours / (scaling_for(n) * goodput_for(n)))
        if c is None:
            return
        first = first or (n, d, c)
        if c.total_cny <= budget and (best is None or d <= best[1] * (1 + 1e-9)):
            best = (n, d)  # past some size failures and communication make a bigger cluster slower: keep the fastest

    for n in cands:
        consider(n)
    if best is not None and best[0] >= node:  # refine node by node up to the next grid point
        nxt = next((c for c in cands if c > best[0]), best[0])
        for n in range(best[0] + node, nxt, node):
            consider(n)
    if best is None:
        n1, d1, c1 = first
        raise KashuError(
            f"--budget ¥{budget:,.0f} does not cover the run even on {n1} card(s) (¥{c1.total_cny:,.0f} over {d1:,.0f} days)",
            f"--budget ¥{budget:,.0f} 连 {n1} 张卡跑完都不够（需 ¥{c1.total_cny:,.0f}，{d1:,.0f} 天）", "budget")
    return best


def _plan_budget_predicted(req: PlanRequest) -> Plan:
    """Budget mode with a predicted MFU: size with the default MFU, predict the MFU of the best layout
    at that size, then size again with it (the prediction's layout and explanation are kept)."""
    first = plan(dataclasses.replace(req, mfu=default("mfu")))
    at = plan(dataclasses.replace(req, budget=None, gpus=str(first.gpus_recommended)))
    if at.layout is None:  # nothing to predict from: the default MFU stands
        first.inputs["mfu_source"] = "default: " + default_source("mfu")
        first.defaults_used["mfu"] = default_source("mfu")
        return first
    final = plan(dataclasses.replace(req, mfu=at.mfu))
    final.inputs["mfu_source"] = at.inputs["mfu_source"]
    final.inputs["mfu_source_zh"] = at.inputs.get("mfu_source_zh")
    final.layout = at.layout
    for key in ("scaling_curve", "predicted_scaling_efficiency", "model_shape"):
        if key in at.extras:
            final.extras[key] = at.extras[key]
    return final


def _node_grid(max_nodes: int) -> list[int]:
    out, k = [], 1
    while k <= max_nodes:
        out.append(k)
        k = k + 1 if k < 64 else k + max(1, k // 16)
    return out
