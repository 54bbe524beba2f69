"""Measure, don't guess: benchmarks of one card (step), the fabric (comm) and multi-card scaling (scale).

The seed article's step 1 ("run one H800 with your model and record the step time") and step 3
("check multi-card scaling efficiency; >= 0.8 is qualified"). PyTorch is an optional extra
(`pip install kashu[bench]`): only the harness modules (model, step, comm, scale) import it, and
only inside functions, so `kashu plan` and the rest never load torch.

  arch     model shape, parameter count and the "how many layers fit" estimate   (pure)
  model    the Llama-style decoder in PyTorch                                     (torch)
  step     one-card step benchmark                                                (torch)
  comm     collective bandwidth sweep, nccl-tests definitions                     (torch)
  scale    weak scaling under DDP / FSDP2                                         (torch)
  dist     torchrun environment checks, process spawning                          (torch in functions)
  results  the JSON result and its table in the kashu store                       (SQLAlchemy)
  use      turning stored results into planner inputs (--from-bench)              (pure + store)
"""

from __future__ import annotations

from ..errors import KashuError

INSTALL_HINT_EN = ("PyTorch is not installed: the benchmarks need it. Install the extra with "
                   "`pip install 'kashu[bench]'` (on a GPU machine, the CUDA build from https://pytorch.org)")
INSTALL_HINT_ZH = ("未安装 PyTorch：基准测试需要它。请安装可选依赖 `pip install 'kashu[bench]'`"
                   "（GPU 机器上请按 https://pytorch.org 安装 CUDA 版）")


def require_torch():
    """Import torch or raise a KashuError that says how to install it."""
    import os

    # c10d prints C++ stack traces for failed rendezvous before Python sees the error; kashu says it in one line
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "FATAL")
    try:
        import torch
    except ImportError:
        raise KashuError(INSTALL_HINT_EN, INSTALL_HINT_ZH, "torch") from None
    return torch
