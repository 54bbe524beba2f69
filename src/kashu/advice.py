"""Tiers and advice: the seed article's rules of thumb, each citing the rule that triggered it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from .data import load_toml
from .quantities import format_count

if TYPE_CHECKING:
    from .planner import Plan

ARTICLE = "seed article (北京大模型训练算力租用集群规模)"


@dataclass
class Advice:
    rule: str  # stable id of the rule
    en: str
    zh: str
    source: str
    level: str = "info"  # info | warn

    def to_dict(self) -> dict:
        return asdict(self)

    def text(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


def tier_for(cards: int) -> str:
    """tens (fine-tuning), hundreds (pre-training), thousands (systems engineering)."""
    t = load_toml("defaults.toml")["tiers"]
    if cards <= t["tens_max"]:
        return "tens"
    if cards <= t["hundreds_max"]:
        return "hundreds"
    return "thousands"


TIER_NAMES = {
    "tens": ("tens of cards: fine-tuning and continued training", "几十卡：微调与增量训练"),
    "hundreds": ("hundreds of cards: pre-training", "百卡：预训练"),
    "thousands": ("a thousand cards and more: systems engineering", "千卡以上：系统工程"),
}


def advise(p: Plan) -> list[Advice]:
    out: list[Advice] = []
    d = load_toml("defaults.toml")
    n, tokens = p.inputs["params"], p.inputs["tokens"]

    def add(rule, en, zh, source=ARTICLE, level="info"):
        out.append(Advice(rule, en, zh, source, level))

    # task first
    if tokens <= d["vertical_domain"]["max_tokens"]:
        add("task.vertical_domain",
            f"{format_count(tokens)} tokens is vertical-domain scale: you need an inference + incremental-training "
            "platform, not a pre-training cluster.",
            f"{format_count(tokens, 'zh')} token 属于垂直领域规模：需要的是推理加增量训练的混合平台，而不是预训练集群。",
            f"{ARTICLE}: 清洗干净的高质量数据能凑出百亿token就已经是天花板")
    if p.total_flops >= d["frontier"]["min_flops"] or n >= d["frontier"]["min_params"]:
        add("task.frontier",
            f"{p.total_flops:.2g} FLOPs is GPT-4 class: a ten-thousand-card cluster for months, beyond a rental budget. "
            "Start from an open base model instead.",
            f"{p.total_flops:.2g} FLOPs 属于 GPT-4 级别：需要万卡集群跑数月，超出租用预算。建议从开源底座出发。",
            d["frontier"]["source"], "warn")

    # compute-optimal ratio
    ratio = p.tokens_per_param
    if ratio < 5 or ratio > 200:
        add("data.chinchilla",
            f"{ratio:.3g} tokens per parameter is far from the compute-optimal ~20 (Chinchilla): "
            + ("more data, or a smaller model, would use the compute better." if ratio < 5 else
               "fine for a small model meant for cheap inference, but a larger model would reach lower loss for the same compute."),
            f"每参数 {ratio:.3g} 个 token，远离 Chinchilla 最优的约 20："
            + ("增加数据或减小模型更划算。" if ratio < 5 else "小模型为了推理便宜可以这样做，但同样算力训练更大的模型损失更低。"),
            d["chinchilla_tokens_per_param"]["source"], "warn" if ratio < 5 else "info")
    else:
        add("data.chinchilla",
            f"{ratio:.3g} tokens per parameter: close to the compute-optimal ~20 (Chinchilla).",
            f"每参数 {ratio:.3g} 个 token：接近 Chinchilla 最优配比（约 20）。",
            d["chinchilla_tokens_per_param"]["source"])

    # tier
    if p.tier == "tens":
        up = (p.network or {}).get("upgrade") or {}
        if up.get("applied"):
            add("tier.tens.network", f"Tens of cards: the article says 25G or 100G Ethernet is enough, but for this model "
                f"the step-time model says it is not: plan on {up['label']} × {up['nics_per_node']} per node (below).",
                f"几十卡规模：文章说普通 25G 或 100G 以太网即可，但按本模型的步时预测不够：按每节点 {up['nics_per_node']} 块"
                f" {up['label']} 规划（见下）。", f"{ARTICLE}: 几十卡级别; kashu.perf", "warn")
        else:
            add("tier.tens.network", "Tens of cards: 25G or 100G Ethernet is enough; no need for InfiniBand or RoCE.",
                "几十卡规模：普通 25G 或 100G 以太网即可，不必纠结 InfiniBand 还是 RoCE。", f"{ARTICLE}: 几十卡级别")
        add("tier.tens.lease", "Rent by the day or week on a ready-to-use platform; good for experiments.",
            "可以按天或按周租，随开随用，适合前期实验验证。", f"{ARTICLE}: 几十卡级别")
        add("tier.tens.dataloader", "At this size the bottleneck is usually the DataLoader and preprocessing, not the card count.",
            "这个规模的瓶颈通常不在卡数，而在 DataLoader 和预处理管线。", f"{ARTICLE}: 几十卡级别")
    elif p.tier == "hundreds":
        add("tier.hundreds.network", "Hundreds of cards: the network is mandatory: RoCE or InfiniBand in a non-blocking 3-tier CLOS.",
            "百卡规模：网络从可选变成必须，RoCE 或 InfiniBand，按标准三级 CLOS 无阻塞架构搭建。", f"{ARTICLE}: 百卡级别")
        add("tier.hundreds.storage", "Checkpoints land often: a parallel file system of at least 10 GB/s (Lustre, BeeGFS); capacity about 3× the data.",
            "checkpoint 频繁落盘：并行文件系统读写不低于 10GB/s（Lustre、BeeGFS）；容量约为数据量的 3 倍。", f"{ARTICLE}: 百卡级别; Q&A 存储")
        add("tier.hundreds.site", "Such compute packages and whole-rack rentals are mature in Shunyi and Huailai.",
            "北京顺义或怀来的机房，这样的算力包和整柜租用服务已经很成熟。", f"{ARTICLE}: 百卡级别")
    else:
        add("tier.thousands.failures", "A thousand cards and more: GPU failures are daily. Without elastic, fault-tolerant "
            "scheduling one node failure rolls the whole job back. Plan it only with a dedicated HPC operations team.",
            "千卡以上：GPU 故障是常态，一天挂几张卡属正常。没有弹性容错调度，一个节点挂了整个任务就要回滚。没有专门的 HPC 运维团队千万别在初期规划这种规模。",
            f"{ARTICLE}: 千卡以上", "warn")

    # stage: prove on 64 first
    if p.gpus_recommended >= 128:
        add("stage.prove_small", "First-time run? Rent 64 cards to prove the whole pipeline, then scale to the full cluster: "
            "a big cluster mostly amplifies the bugs.",
            "如果是首次验证技术可行性，先租 64 卡跑通全流程，有完整结论后再上大集群；盲目上大集群只会放大代码里的 bug。",
            f"{ARTICLE}: Q&A 先租64卡还是256卡")
    # redundancy
    add("lease.redundancy", f"Keep {p.redundancy:.0%} of the cluster spare for parallel debugging and outages; never run it full.",
        f"规划时留出 {p.redundancy:.0%} 冗余算力做并行调试，千万别把资源用满。", f"{ARTICLE}: 第四步")
    if p.days > 80 or (p.cost and p.cost.lease_unit in ("quarter", "year")):
        add("lease.quarter", "Lock a quarter, not a year: spot prices are falling while power-backed racks stay scarce.",
            "先锁定一个季度的租期，而不是一次签长周期：现货价格在回落，但有电力保障的机柜依然紧张。",
            f"{ARTICLE}: Q&A 一卡难求和降价潮")
    # measure first
    add("measure.bench", f"Before signing: run one {p.gpu.name} with your own model and data and record the step time "
        "(`kashu bench step`); your architecture decides your throughput.",
        f"签约前先用一张 {p.gpu.name} 跑通你的模型和数据，记录 step 耗时（`kashu bench step`）：你的模型结构决定了你的吞吐。",
        f"{ARTICLE}: 第一步")
    if p.gpus_recommended > p.gpu.gpus_per_node:
        add("measure.scaling", "Check multi-node scaling efficiency: ≥ 0.8 is a qualified configuration; 512 cards are not "
            "sixteen 32-card machines: check the switches' non-blocking bandwidth.",
            "检查多卡扩展效率：跨节点 0.8 以上才算合格；凑够 512 卡不是简单买 16 台 32 卡机器，还要看交换机无阻塞带宽。",
            f"{ARTICLE}: 第三步")
    if p.gpu.domestic:
        add("site.domestic", "Domestic accelerator: Beijing subsidies favour it, but check the software ecosystem (CANN/MindSpore) on your model first.",
            "国产算力：北京补贴更倾向国产芯片，但先用你的模型验证生态兼容性（CANN/MindSpore）。", f"{ARTICLE}: 补贴政策")
    return out


def infra_advice(p: Plan) -> list[Advice]:
    """Rules from the cluster sizing (network, storage, reliability, power); kept apart from advise()."""
    out: list[Advice] = []
    net, st, rel, pw = p.network or {}, p.storage or {}, p.reliability or {}, p.power or {}
    if net and net.get("nodes", 1) > 1:
        eff, bar = net.get("scaling_efficiency", 1.0), net.get("bar", 0.8)
        up = net.get("upgrade")
        if up and up.get("applied"):
            out.append(Advice("network.upgraded", up["en"] + " — the plan uses the upgrade.", up["zh"] + "——本规划已按升级后的网络计算。",
                              f"{ARTICLE}: 第三步 (≥ 0.8)", "warn"))
        elif eff < bar:
            en = up["en"] if up else (f"Cross-node scaling {eff:.2f} is below the {bar:.2f} bar on {net.get('fabric_label')} and no "
                                       "fabric in the catalog reaches it: use more model parallelism or a larger global batch")
            zh = up["zh"] if up else (f"跨节点扩展效率 {eff:.2f} 低于 {bar:.2f}（{net.get('fabric_label')}），目录中没有网络能达到："
                                       "加大模型并行或全局 batch")
            out.append(Advice("network.below_bar", en + ".", zh + "。",
                              f"{ARTICLE}: 第三步", "warn"))
        topo = net.get("topology") or {}
        if topo.get("tiers") == 2 and p.tier != "tens":
            out.append(Advice("network.two_tier", f"{topo.get('endpoints')} NIC ports fit a non-blocking 2-tier fat-tree of "
                              f"{topo.get('radix')}-port switches ({topo.get('leaf')} leaf + {topo.get('spine')} spine); "
                              "the article's '3-tier CLOS' is only needed past k²/2 endpoints.",
                              f"{topo.get('endpoints')} 个网口用 {topo.get('radix')} 口交换机的两层无阻塞胖树即可"
                              f"（{topo.get('leaf')} 叶 + {topo.get('spine')} 脊）；超过 k²/2 个端点才需要三层 CLOS。",
                              "Al-Fares et al. 2008; NVIDIA DGX SuperPOD RA-11333-001"))
    if rel:
        if rel.get("elastic_required"):
            out.append(Advice("reliability.elastic",
                              f"{rel['interruptions_per_day']:.1f} interruptions a day: elastic fault-tolerant scheduling "
                              f"(auto-detect, evict, restart on {rel['hot_spare_nodes']} hot-spare nodes) keeps goodput at "
                              f"{rel['goodput']:.1%} instead of {rel['goodput_without_elastic']:.1%} with manual restarts.",
                              f"每天约 {rel['interruptions_per_day']:.1f} 次中断：弹性容错调度（自动发现、剔除、用 {rel['hot_spare_nodes']} 台热备节点重启）"
                              f"可使有效训练率保持 {rel['goodput']:.1%}，手工重启只有 {rel['goodput_without_elastic']:.1%}。",
                              f"{ARTICLE}: 千卡以上; Llama 3 report §3.3.4", "warn"))
        elif rel.get("hot_spare_nodes"):
            out.append(Advice("reliability.spares", f"Keep {rel['hot_spare_nodes']} hot-spare node(s) for failed hardware "
                              f"(MTTF {rel['mttf_hours']:,.0f} h, checkpoint every {rel['checkpoint_interval_min']:,.0f} min).",
                              f"预留 {rel['hot_spare_nodes']} 台热备节点应对硬件故障（MTTF {rel['mttf_hours']:,.0f} 小时，"
                              f"每 {rel['checkpoint_interval_min']:,.0f} 分钟存一次 checkpoint）。", "Young 1974; Daly 2006"))
    if st:
        out.append(Advice("storage.size", f"Storage: {st['capacity_tb']:,.1f} TB (article's 3 × data: {st['article_rule_tb']:,.1f} TB), "
                          f"≥ {st['bandwidth_gbps_recommended']:,.0f} GB/s; {st['recommendation']}.",
                          f"存储：{st['capacity_tb']:,.1f} TB（文章的 3 倍数据量：{st['article_rule_tb']:,.1f} TB），"
                          f"≥ {st['bandwidth_gbps_recommended']:,.0f} GB/s；{st['recommendation_zh']}。",
                          f"{ARTICLE}: Q&A 存储; NVIDIA RA-11333-001"))
    if pw and pw.get("node_exceeds_rack"):
        out.append(Advice("power.rack", f"One node draws {pw['node_kw']:.1f} kW, more than a {pw['kw_per_rack']:g} kW rack: "
                          "ask for high-density (liquid-cooled) racks — Beijing racks with power quota are scarce.",
                          f"单节点 {pw['node_kw']:.1f} kW，超过 {pw['kw_per_rack']:g} kW 机柜：需高密度（液冷）机柜——北京有电力指标的机柜稀缺。",
                          f"{ARTICLE}: 机柜资源稀缺", "warn"))
    return out
