"""`kashu gpus`: the accelerator catalog."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from ..hardware import catalog
from ..i18n import detect_lang
from . import LangOpt, app, emit_json


@app.command("gpus")
def gpus(json_out: bool = typer.Option(False, "--json", help="Print JSON."), lang: str = LangOpt) -> None:
    """List the accelerator catalog: dense peaks, memory, links, with a source per row."""
    rows = [a.to_dict() for a in catalog()]
    if json_out:
        emit_json(rows)
        return
    zh = detect_lang(lang) == "zh"
    tab = Table(title="加速卡目录（稠密算力）" if zh else "Accelerator catalog (dense figures)")
    for col in (("Card", "卡型"), ("BF16 TFLOPS", "BF16 TFLOPS"), ("FP8 TFLOPS", "FP8 TFLOPS"), ("Memory GB", "显存 GB"),
                ("HBM TB/s", "显存带宽 TB/s"), ("Intra-node GB/s (bidir)", "节点内互联 GB/s（双向）"),
                ("Per node", "每节点卡数"), ("TDP W", "功耗 W"), ("Conf.", "可信度")):
        tab.add_column(col[1] if zh else col[0], justify="left" if col[0] == "Card" else "right")
    for a in catalog():
        tab.add_row(a.name, f"{a.bf16_tflops:g}", f"{a.fp8_tflops:g}" if a.fp8_tflops else "—", f"{a.memory_gb:g}",
                    f"{a.hbm_tbps:g}", f"{a.intra_link_gbps_bidir:g} {a.intra_link}", str(a.gpus_per_node),
                    f"{a.tdp_w:g}", a.confidence)
    Console().print(tab)
