"""Plan from measurements (`kashu plan --from-bench ID|latest`): stored runs → planner inputs.

A one-card step run replaces the compute efficiency (MFU) only; communication, pipeline bubble
and scaling at the planned size still come from the model, unless a `bench comm` run (measured
bus bandwidth) or a `bench scale` run (measured scaling efficiency) is given too:
`--from-bench 12,14`. A run on another card type than the plan's (a CPU run included) is refused
unless `force`. Everything here is pure except `load`, which reads the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..data import default, default_source
from ..errors import KashuError
from ..hardware import Accelerator


def load(ref: Any, db: str | None = None) -> list[dict]:
    """Stored runs for a reference: an id, `latest` (the newest step run), a comma list, or docs already loaded."""
    if isinstance(ref, dict):
        return [ref]
    if isinstance(ref, (list, tuple)):
        return [d for r in ref for d in load(r, db)]
    from . import results

    parts = [s.strip() for s in str(ref).split(",") if s.strip()]
    if not parts:
        raise KashuError("--from-bench needs a run id or `latest`", "--from-bench 需要基准测试编号或 latest", "from_bench")
    return [results.get(p, db, kind="step" if p.lower() == "latest" else None) for p in parts]


@dataclass
class BenchUse:
    ids: list[int]
    mfu: float | None = None
    mfu_source: str | None = None
    predicted_mfu: float | None = None
    predicted_mfu_source: str | None = None
    scaling: float | None = None
    scaling_cards: int | None = None
    scaling_source: str | None = None
    busbw_gbps: float | None = None
    busbw_source: str | None = None
    notes: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    step_doc: dict | None = None
    fabric: Any = None  # kashu.perf.Fabric from a multi-node `bench comm`, for the layout prediction
    predicted_compute_mfu: float | None = None  # the perf model's one-card compute efficiency, to compare
    cluster_factor: float | None = None  # measured compute / (measured compute + predicted comm and bubble)
    predicted_scaling: float | None = None  # scaling already inside a predicted MFU (scale run without a step run)

    def combine(self, pred: dict | None) -> None:
        """Keep the predicted layout's communication, bubble and overheads; replace its compute by the measurement.

        Predicted step T = C + O with C the compute parts of the breakdown (GEMMs, attention, memory-bound
        kernels) and O the rest. The model's compute efficiency is mfu_pred·T/C; at the measured efficiency
        the compute takes C' = mfu_pred·T/mfu_meas, so the cluster keeps C'/(C' + O) of the measured MFU.
        """
        if pred is None:
            return
        if self.mfu is None:  # scale run only: the predicted MFU carries predicted scaling; swap in the measured
            self.predicted_scaling = float(pred.get("scaling_efficiency") or 1.0)
            return
        self.predicted_mfu, self.predicted_mfu_source = pred["mfu"], "predicted: " + pred["why"]
        lay = pred.get("layout") or {}
        bd = lay.get("breakdown") or {}
        t = float(lay.get("step_time_s") or 0.0)
        c = sum(float(bd.get(k, 0.0)) for k in ("gemm", "attention", "memory_bound"))
        if t <= 0 or c <= 0:
            return
        self.predicted_compute_mfu = pred["mfu"] * t / min(c, t)
        c_meas = pred["mfu"] * t / self.mfu
        self.cluster_factor = c_meas / (c_meas + max(t - c, 0.0))
        self.notes.append((
            f"communication, pipeline bubble and overheads of the predicted layout ({pred['why']}) keep "
            f"{self.cluster_factor:.2f} of the measured MFU at the planned size",
            f"通信、流水线气泡等开销按预测布局（{pred['why']}）计，保留实测 MFU 的 {self.cluster_factor:.2f}"))

    def scaling_for(self, cards: float, node: int) -> float:
        if self.scaling is not None:
            if cards <= 1:
                return 1.0
            return self.scaling / self.predicted_scaling if self.predicted_scaling else self.scaling
        if self.cluster_factor is not None:
            return self.cluster_factor
        return 1.0 if cards <= node else default("cross_node_scaling")

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"ids": self.ids}
        if self.mfu is not None:
            out["mfu"] = {"measured": self.mfu, "source": self.mfu_source, "predicted": self.predicted_mfu,
                          "predicted_source": self.predicted_mfu_source,
                          "measured_over_predicted": self.mfu / self.predicted_mfu if self.predicted_mfu else None}
            d = self.step_doc or {}
            out["mfu"]["run"] = {k: d.get(k) for k in ("gpu", "device_name", "step_time_s", "tokens_per_s", "tflops",
                                                       "layers_run", "layers_full", "proxy", "created_at")}
        if self.predicted_compute_mfu is not None:
            out["mfu"]["predicted_compute_one_card"] = self.predicted_compute_mfu
            out["mfu"]["cluster_factor"] = self.cluster_factor
        if self.scaling is not None:
            out["scaling"] = {"measured": self.scaling, "cards": self.scaling_cards, "source": self.scaling_source,
                              "predicted": default("cross_node_scaling"),
                              "predicted_source": default_source("cross_node_scaling")}
        if self.busbw_gbps is not None:
            out["busbw_gbps"] = {"measured": self.busbw_gbps, "source": self.busbw_source}
        out["notes"] = [en for en, _ in self.notes]
        out["notes_zh"] = [zh for _, zh in self.notes]
        return out


def _card_check(doc: dict, gpu: Accelerator, force: bool, use: BenchUse) -> None:
    ran = doc.get("gpu") if doc.get("device") == "cuda" else None
    if ran == gpu.name:
        return
    where = (f"on {ran}" if ran else ("on a CPU" if doc.get("device") == "cpu" else
                                      f"on an unrecognised card ({doc.get('device_name') or '?'})"))
    where_zh = (f"在 {ran} 上" if ran else ("在 CPU 上" if doc.get("device") == "cpu" else
                                           f"在未识别的卡（{doc.get('device_name') or '?'}）上"))
    if not force:
        raise KashuError(
            f"benchmark {doc['id']} ran {where}, but the plan is for {gpu.name}: its figures do not transfer; run "
            f"`kashu bench {doc.get('kind', 'step')}` on a {gpu.name}, plan with --gpu {ran or 'THAT-CARD'}, or add --force",
            f"基准测试 {doc['id']} 是{where_zh}跑的，而规划的卡型是 {gpu.name}：数据不能直接套用；请在 {gpu.name} 上运行 "
            f"`kashu bench {doc.get('kind', 'step')}`，或用 --gpu {ran or '该卡型'} 规划，或加 --force", "from_bench")
    use.warnings.append((f"--force: benchmark {doc['id']} ran {where}, not on {gpu.name}; its figures are used anyway",
                         f"--force：基准测试 {doc['id']} 是{where_zh}跑的，不是 {gpu.name}；仍然使用其数据"))


def from_bench(ref: Any, gpu: Accelerator, precision: str = "bf16", force: bool = False, user_mfu: float | None = None,
               params: float | None = None, db: str | None = None) -> BenchUse:
    """Load the runs and turn them into planner inputs (see the module doc)."""
    return resolve(load(ref, db), gpu, precision, force, user_mfu, params)


def resolve(docs: list[dict], gpu: Accelerator, precision: str = "bf16", force: bool = False,
            user_mfu: float | None = None, params: float | None = None) -> BenchUse:
    use = BenchUse(ids=[int(d["id"]) for d in docs])
    kinds = [d.get("kind") for d in docs]
    for k in ("step", "comm", "scale"):
        if kinds.count(k) > 1:
            raise KashuError(f"--from-bench names {kinds.count(k)} {k} runs; give at most one of each kind",
                             f"--from-bench 给了 {kinds.count(k)} 个 {k} 结果；每种最多一个", "from_bench")
    for d in docs:
        _card_check(d, gpu, force, use)
        if d["kind"] == "step":
            _use_step(d, gpu, precision, user_mfu, params, use)
        elif d["kind"] == "scale":
            use.scaling, use.scaling_cards = float(d["efficiency"]), int(d["max_cards"])
            use.scaling_source = f"bench:{d['id']}"
            use.notes.append((
                f"scaling efficiency {use.scaling:.2f} measured by bench {d['id']} ({d.get('wrap')}, 1 → {d['max_cards']} cards, "
                f"{d.get('nnodes', 1)} node(s)); applied to every multi-card size of the plan",
                f"扩展效率 {use.scaling:.2f} 来自基准测试 {d['id']}（{d.get('wrap')}，1 → {d['max_cards']} 卡，"
                f"{d.get('nnodes', 1)} 个节点）；用于规划中所有多卡规模"))
            if d.get("nnodes", 1) <= 1:
                use.warnings.append((f"bench {d['id']} measured scaling inside one node only; cross-node scaling may be lower",
                                     f"基准测试 {d['id']} 只测了单节点内的扩展；跨节点效率可能更低"))
        elif d["kind"] == "comm":
            ar = d.get("summary", {}).get("all_reduce")
            if not ar:
                raise KashuError(f"bench {d['id']} has no all-reduce figure", f"基准测试 {d['id']} 没有 all-reduce 数据",
                                 "from_bench")
            use.busbw_gbps, use.busbw_source = float(ar["busbw_gbps_at_largest"]), f"bench:{d['id']}"
            if d.get("nnodes", 1) > 1:  # crossed the fabric: the layout prediction uses it for inter-node traffic
                try:
                    from ..perf import Fabric, default_fabric

                    use.fabric = Fabric(use.busbw_gbps * 1e9, 1.0, default_fabric().latency_s, f"bench:{d['id']}")
                except ImportError:
                    pass
            else:
                use.warnings.append((f"bench {d['id']} measured one node only: its bus bandwidth is the intra-node "
                                     "one, recorded but not used for cross-node traffic",
                                     f"基准测试 {d['id']} 只测了单节点：其总线带宽是节点内带宽，仅记录，不用于跨节点通信"))
            use.notes.append((
                f"all-reduce bus bandwidth {use.busbw_gbps:.3g} GB/s measured by bench {d['id']} on {d['world_size']} ranks "
                f"({d.get('nnodes', 1)} node(s)) at {ar['largest_size_bytes'] / 2**20:g} MiB",
                f"all-reduce 总线带宽 {use.busbw_gbps:.3g} GB/s 来自基准测试 {d['id']}（{d['world_size']} 进程，"
                f"{d.get('nnodes', 1)} 个节点，{ar['largest_size_bytes'] / 2**20:g} MiB）"))
        else:
            raise KashuError(f"bench {d.get('id')} is of unknown kind {d.get('kind')!r}", "未知的基准测试类型", "from_bench")
    return use


def _use_step(d: dict, gpu: Accelerator, precision: str, user_mfu: float | None, params: float | None,
              use: BenchUse) -> None:
    if d.get("mfu") is None:
        raise KashuError(f"bench {d['id']} has no MFU (the card's peak was unknown); rerun it with --gpu NAME or --peak-tflops",
                         f"基准测试 {d['id']} 没有 MFU（峰值算力未知）；请加 --gpu 或 --peak-tflops 重新运行", "from_bench")
    if user_mfu is not None:
        raise KashuError("--mfu and a step benchmark in --from-bench both give the MFU; give one",
                         "--mfu 与 --from-bench 的单卡测试都给出了 MFU；只能给一个", "mfu")
    mfu = float(d["mfu"])
    if precision == "fp8" and gpu.fp8_tflops:
        # measured in BF16: the same achieved FLOP/s against the FP8 peak (no FP8 speed-up assumed)
        mfu = mfu * gpu.bf16_tflops / gpu.fp8_tflops
        use.warnings.append((f"bench {d['id']} measured BF16; against the FP8 peak its MFU is {mfu:.1%} "
                             "(no FP8 speed-up assumed; benchmark FP8 to know it)",
                             f"基准测试 {d['id']} 是 BF16 测得；按 FP8 峰值折算 MFU 为 {mfu:.1%}（未计 FP8 加速）"))
    if not 0 < mfu <= 1:
        raise KashuError(f"bench {d['id']} reports MFU {mfu:.3g}, outside (0, 1]: check the peak it was measured against",
                         f"基准测试 {d['id']} 的 MFU {mfu:.3g} 不在 (0, 1] 内：请检查所用峰值", "from_bench")
    use.mfu, use.mfu_source, use.step_doc = mfu, f"bench:{d['id']}", d
    use.predicted_mfu, use.predicted_mfu_source = default("mfu"), "default: " + default_source("mfu")
    m = d.get("model", {})
    proxy = (f", a {d['layers_run']}-of-{d['layers_full']}-layer proxy" if d.get("proxy") else "")
    proxy_zh = (f"，{d['layers_full']} 层中的 {d['layers_run']} 层代理模型" if d.get("proxy") else "")
    use.notes.append((
        f"MFU {mfu:.1%} measured by bench {d['id']} ({m.get('name', '?')}{proxy}, {d.get('tflops', 0):.3g} TFLOPS on "
        f"{d.get('gpu') or d.get('device_name')}); replaces the compute efficiency only: communication and scaling "
        "at the planned size still come from the model",
        f"MFU {mfu:.1%} 来自基准测试 {d['id']}（{m.get('name', '?')}{proxy_zh}，{d.get('tflops', 0):.3g} TFLOPS，"
        f"{d.get('gpu') or d.get('device_name')}）；只替换计算效率，通信与规模扩展仍按模型估计"))
    full = m.get("params_full")
    if params and full and not 0.5 <= params / full <= 2:
        use.warnings.append((f"bench {d['id']} measured a {full / 1e9:.3g}B-parameter model, the plan is for "
                             f"{params / 1e9:.3g}B: MFU depends on the shape; benchmark your own model",
                             f"基准测试 {d['id']} 测的是 {full / 1e9:.3g}B 参数的模型，规划的是 {params / 1e9:.3g}B："
                             "MFU 取决于模型结构，请测你自己的模型"))


def annotate(p, use: BenchUse) -> None:
    """Put the measurements into the plan: JSON `bench`, warnings, and predicted-vs-measured report lines."""
    lang = p.inputs.get("lang", "en")
    zh = lang == "zh"
    p.extras["bench"] = use.to_dict()
    p.inputs["from_bench"] = use.ids
    for en, zh_text in use.warnings:
        p.warnings.append(en)
        p.warnings_zh.append(zh_text)
    if use.busbw_gbps is not None and isinstance(p.network, dict):
        p.network["busbw_gbps_measured"] = use.busbw_gbps
    rows = getattr(p, "_render_extra", None) or []
    if use.mfu is not None and use.predicted_compute_mfu is not None:
        rows.append(("单卡 MFU：实测 / 预估" if zh else "One-card MFU: measured / predicted",
                     f"[green]{use.mfu:.1%}[/green] ({use.mfu_source}) / {use.predicted_compute_mfu:.1%} "
                     f"[dim]({'kashu.perf 计算部分' if zh else 'kashu.perf, compute only'})[/dim]"))
        rows.append(("集群 MFU：实测算力 / 预估" if zh else "Cluster MFU: measured compute / predicted",
                     f"[green]{use.mfu * use.cluster_factor:.1%}[/green] / {use.predicted_mfu:.1%} "
                     f"[dim](× {use.cluster_factor:.2f} {'通信与气泡' if zh else 'communication and bubble'})[/dim]"))
    elif use.mfu is not None:
        rows.append(("MFU：实测 / 预估" if zh else "MFU: measured / predicted",
                     f"[green]{use.mfu:.1%}[/green] ({use.mfu_source}) / {use.predicted_mfu:.0%} "
                     f"[dim]({'默认值' if zh else 'default'})[/dim]"))
    if use.scaling is not None:
        rows.append(("扩展效率：实测 / 预估" if zh else "Scaling: measured / predicted",
                     f"[green]{use.scaling:.2f}[/green] ({use.scaling_source}, {use.scaling_cards} "
                     f"{'卡' if zh else 'cards'}) / {default('cross_node_scaling'):.2f}"))
    if use.busbw_gbps is not None:
        rows.append(("实测 all-reduce 总线带宽" if zh else "Measured all-reduce busbw",
                     f"{use.busbw_gbps:.3g} GB/s ({use.busbw_source})"))
    p._render_extra = rows
