"""Language choice and the labels of human output (English / Chinese)."""

from __future__ import annotations

import os

LABELS = {
    "plan_title": ("kashu plan", "kashu 规划"),
    "inputs": ("Inputs", "输入"),
    "working": ("The working", "计算过程"),
    "result": ("Result", "结论"),
    "step": ("Step", "步骤"),
    "formula": ("Formula", "公式"),
    "value": ("Value", "数值"),
    "source": ("Source", "来源"),
    "params": ("Parameters N", "参数量 N"),
    "tokens": ("Tokens D", "数据量 D"),
    "gpu": ("Card", "卡型"),
    "deadline": ("Deadline", "期限"),
    "mfu": ("MFU", "算力利用率 MFU"),
    "gpus_min": ("Minimum cards (no losses)", "最少卡数（不计损耗）"),
    "gpus_needed": ("Cards with losses", "计入损耗的卡数"),
    "gpus_recommended": ("Recommended cluster", "建议集群规模"),
    "days": ("Expected days", "预计天数"),
    "tier": ("Tier", "层级"),
    "cost": ("Lease cost", "租金"),
    "pay_per_hour": ("Pay-per-hour for the exact card-hours", "按实际卡时计费"),
    "idle": ("Idle share of the lease", "租期闲置部分"),
    "per_mtok": ("Cost per million tokens", "每百万 token 成本"),
    "advice": ("Advice", "建议"),
    "warnings": ("Warnings", "警告"),
    "defaults": ("Defaults used", "使用的默认值"),
    "cards": ("cards", "张卡"),
    "nodes": ("nodes", "台"),
    "price_source": ("Price source", "价格来源"),
}


def detect_lang(explicit: str | None = None) -> str:
    """--lang wins; else a zh_* locale (LC_ALL, LC_MESSAGES, LANG) means Chinese."""
    if explicit:
        if explicit not in ("en", "zh"):
            from .errors import KashuError

            raise KashuError(f"--lang {explicit!r} must be en or zh", f"--lang {explicit!r} 应为 en 或 zh", "lang")
        return explicit
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        v = os.environ.get(var, "")
        if v:
            return "zh" if v.lower().startswith("zh") else "en"
    return "en"


def t(key: str, lang: str) -> str:
    en, zh = LABELS[key]
    return zh if lang == "zh" else en
