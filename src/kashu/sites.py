"""Sites and data residency (pure): the site catalog (data/sites.toml) and the seed article's
local-dedicated vs remote-cloud decision table.

| 规划维度 | 本地专有集群 local dedicated | 异地云上算力 remote cloud |
| 数据合规 compliance | strong: finance, government | ordinary: sign an NDA |
| 网络延迟 latency | very low | depends on the inter-region link |
| 成本结构 cost | yearly whole racks, higher unit price | spot market, cheap |
| 适合阶段 stage | formal training and stable iteration | early bring-up and debugging |
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from functools import cache

from .advice import ARTICLE
from .data import load_toml
from .errors import KashuError

STAGES = ("explore", "train", "iterate")
STAGE_ZH = {"explore": "前期跑通与调试", "train": "正式训练", "iterate": "稳定迭代"}


@dataclass(frozen=True)
class Site:
    key: str
    name: str
    name_zh: str
    aliases: tuple[str, ...]
    region: str
    in_beijing: bool
    distance_km: float
    rtt_ms: float
    availability: str
    kinds: tuple[str, ...]
    notes: str
    notes_zh: str
    estimate: bool

    def to_dict(self) -> dict:
        d = asdict(self)
        d["aliases"] = list(self.aliases)
        d["kinds"] = list(self.kinds)
        return d

    def label(self, lang: str = "en") -> str:
        return self.name_zh if lang == "zh" else self.name


def _k(s: str) -> str:
    return re.sub(r"[\s_\-'()（）]+", "", s.strip().lower())


@cache
def catalog() -> tuple[Site, ...]:
    out = []
    for r in load_toml("sites.toml")["site"]:
        r = dict(r)
        r["aliases"] = tuple(r.get("aliases", ()))
        r["kinds"] = tuple(r.get("kinds", ()))
        out.append(Site(**r))
    return tuple(out)


@cache
def _index() -> dict[str, Site]:
    idx = {}
    for s in catalog():
        for n in (s.key, s.name, s.name_zh, *s.aliases):
            idx[_k(n)] = s
    return idx


def find(name: str | None) -> Site | None:
    """A site by key, name or alias (None if unknown or empty)."""
    if not name:
        return None
    return _index().get(_k(name))


def get(name: str) -> Site:
    s = find(name)
    if s is None:
        raise KashuError(f"unknown site {name!r}; known: {', '.join(x.name for x in catalog())}",
                         f"未知地点 {name!r}；已知：{', '.join(x.name_zh for x in catalog())}", "site")
    return s


def check_stage(stage: str | None) -> str | None:
    if stage in (None, ""):
        return None
    s = str(stage).strip().lower()
    aliases = {"explore": "explore", "exploration": "explore", "debug": "explore", "前期": "explore", "调试": "explore",
               "train": "train", "training": "train", "正式训练": "train", "iterate": "iterate", "iteration": "iterate",
               "迭代": "iterate"}
    if s not in aliases:
        raise KashuError(f"--stage {stage!r} must be explore, train or iterate",
                         f"--stage {stage!r} 应为 explore（前期跑通）、train（正式训练）或 iterate（稳定迭代）", "stage")
    return aliases[s]


def residency_ok(site_name: str, deployment: str) -> bool:
    """May data that must not leave Beijing (数据不出域) go to this quote's site and deployment?"""
    s = find(site_name)
    return bool(s and s.in_beijing and deployment in ("local-dedicated", "bare-metal"))


TABLE = [
    # dimension, local dedicated (en, zh), remote cloud (en, zh)
    ("compliance", "数据合规", ("strong: suits finance and government", "强，适合金融、政务"),
     ("ordinary: sign a confidentiality agreement", "一般，需签署保密协议")),
    ("latency", "网络延迟", ("very low", "极低"), ("depends on the inter-region link", "受跨地域链路影响")),
    ("cost", "成本结构", ("yearly whole racks, unit price a little higher", "包年整柜，单价略高"),
     ("spot market, cheap", "抢单模式，现货便宜")),
    ("stage", "适合阶段", ("formal training and stable iteration", "正式训练和稳定迭代"),
     ("early bring-up and code debugging", "前期跑通和代码调试")),
]


def decide(data_must_stay_local: bool, stage: str | None, tier: str = "hundreds", lang: str = "en",
           prefer_site: str | None = None) -> dict:
    """The article's decision: deployment kind, candidate sites, the table, and the site-pair advice.

    `prefer_site`: the site of the quote that priced the plan; it becomes the training site when known."""
    stage = check_stage(stage)
    reasons: list[tuple[str, str]] = []
    if data_must_stay_local:
        deployment = "local-dedicated"
        reasons.append(("data must stay in Beijing (数据不出域): a dedicated or private cluster in Beijing",
                        "数据不出域：倾向租专有云或私有化部署的集群，机房在北京境内"))
        if stage == "explore":
            reasons.append(("exploring: code debugging on de-identified or synthetic data may still use cheap remote cloud",
                            "前期调试：用脱敏或合成数据跑通代码仍可用外地云上算力"))
    elif stage == "explore":
        deployment = "remote-cloud"
        reasons.append(("exploring and debugging without residency rules: remote cloud spot capacity is much cheaper",
                        "前期跑通和代码调试、无数据合规要求：调用外地 IDC 的现货算力，成本低不少"))
    elif stage in ("train", "iterate"):
        deployment = "local-dedicated" if tier != "tens" else "bare-metal"
        reasons.append((f"{stage}: formal training and stable iteration suit a dedicated cluster (monthly bare metal or whole racks)",
                        f"{STAGE_ZH[stage]}：正式训练和稳定迭代适合本地专有集群（包月裸金属或整柜）"))
    else:
        if tier != "tens":
            deployment = "bare-metal"
            reasons.append(("no stage or residency given: monthly bare metal near Beijing; say --stage and --data-must-stay-local to refine",
                            "未给出阶段与合规要求：建议北京周边包月裸金属；可用 --stage 与 --data-must-stay-local 细化"))
        else:
            deployment = "remote-cloud"
            reasons.append(("no stage or residency given: tens of cards rent by the day or week on a cloud platform; "
                            "say --stage and --data-must-stay-local to refine",
                            "未给出阶段与合规要求：几十卡规模可在云平台按天或按周租用；可用 --stage 与 --data-must-stay-local 细化"))
    cands = [s for s in catalog() if (s.in_beijing if data_must_stay_local else True)
             and (deployment in s.kinds or (deployment == "local-dedicated" and "bare-metal" in s.kinds))]
    avail_rank = {"good": 0, "limited": 1, "scarce": 2}
    if deployment == "remote-cloud":  # 异地: outside Beijing, nearest first (data transfer)
        cands = [s for s in cands if not s.in_beijing] or cands
    cands.sort(key=lambda s: (avail_rank.get(s.availability, 3), s.distance_km))
    if tier != "tens":
        cands = [s for s in cands if s.availability != "scarce"] or cands
    training = cands[0] if cands else None
    preferred = find(prefer_site)
    if preferred is not None and (preferred.in_beijing or not data_must_stay_local):
        training = preferred
        cands = [preferred] + [s for s in cands if s.key != preferred.key]
    # inference / DR partner: a different site in the same metro (same-city dual-active), in Beijing if required
    partner = None
    if training:
        near = [s for s in catalog() if s.key != training.key and (s.in_beijing or not data_must_stay_local)
                and s.rtt_ms <= 5]
        near.sort(key=lambda s: (s.key != "beijing-city", s.distance_km))
        partner = near[0] if near else None
    pair_en = pair_zh = ""
    if training and partner:
        pair_en = (f"Pair the training site ({training.name}) with an inference site ({partner.name}, ~{partner.rtt_ms:g} ms) "
                   "as same-city dual-active or disaster recovery: don't put all the eggs in one basket.")
        pair_zh = (f"训练机房（{training.name_zh}）与推理节点（{partner.name_zh}，约 {partner.rtt_ms:g} ms）做同城双活或灾备设计，"
                   "别把鸡蛋全放一个篮子里。")
    col = 0 if deployment in ("local-dedicated", "bare-metal") else 1
    table = [{"dimension": dim, "dimension_zh": dzh, "local_dedicated": loc[0], "local_dedicated_zh": loc[1],
              "remote_cloud": rem[0], "remote_cloud_zh": rem[1], "chosen": "local_dedicated" if col == 0 else "remote_cloud"}
             for dim, dzh, loc, rem in TABLE]
    return {
        "data_must_stay_local": bool(data_must_stay_local),
        "stage": stage,
        "deployment": deployment,
        "reasons": [r[0] for r in reasons],
        "reasons_zh": [r[1] for r in reasons],
        "training_site": training.to_dict() if training else None,
        "inference_site": partner.to_dict() if partner else None,
        "candidates": [s.name for s in cands],
        "candidates_zh": [s.name_zh for s in cands],
        "pair_advice": pair_en,
        "pair_advice_zh": pair_zh,
        "table": table,
        "source": f"{ARTICLE}: 本地专有集群 vs 异地云上算力; 同城双活或灾备; site data: data/sites.toml (estimates marked)",
    }
