#!/usr/bin/env python3
"""`make bench`: how long the layout search takes (in-process, best of 5, and the whole CLI process)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))

from kashu.hardware import get_gpu  # noqa: E402
from kashu.models import get_model  # noqa: E402
from kashu.search import candidates, search  # noqa: E402

CASES = [
    ("gpt3-175b", "A100-80GB", 1024, 1536),
    ("llama3-70b", "H800", 512, 512),
    ("llama3-405b", "H100", 4096, 2048),
    ("deepseek-v3", "H800", 2048, 4096),
]

for name, gpu, n, gb in CASES:
    m, g = get_model(name), get_gpu(gpu)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        res = search(m, g, n, gb, top=5)
        best = min(best, time.perf_counter() - t)
    k = len(candidates(m, g, n, gb)["tp"])
    top = res[0]
    print(f"{name:12s} {n:5d} x {gpu:10s} GB {gb:5d}: {k:6d} layouts in {best * 1e3:7.1f} ms; "
          f"best {top['layout']} step {top['step_time_s']:.2f} s, MFU {top['mfu']:.1%}")

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
t = time.perf_counter()
subprocess.run([os.path.join(root, "kashu"), "layout", "--model", "gpt3-175b", "--gpu", "A100-80GB", "--gpus", "1024",
                "--global-batch", "1536", "--top", "5", "--json"], check=True, capture_output=True)
print(f"whole process `kashu layout ... --json` (GPT-3 175B, 1024 A100, GB 1536): {time.perf_counter() - t:.2f} s")
