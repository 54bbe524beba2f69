"""Collective communication time, with the nccl-tests bus-bandwidth definitions.

NVIDIA nccl-tests doc/PERFORMANCE.md: for a collective on n ranks moving S bytes per rank,
algbw = S / t, and busbw = algbw × factor, with factor
  all-reduce:               2(n-1)/n
  reduce-scatter, all-gather, all-to-all: (n-1)/n
busbw is the figure comparable with the hardware link speed, so
  t = S × factor / busbw + latency.
S is the per-rank buffer: the whole tensor for all-reduce, the full (gathered) output for
all-gather and the full input for reduce-scatter, the per-rank send buffer for all-to-all.
"""

from __future__ import annotations

import numpy as np

BUS_FACTOR = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "all_to_all": lambda n: (n - 1) / n,
}


def bus_factor(op: str, n):
    """The nccl-tests busbw/algbw ratio of `op` on n ranks (n may be a NumPy array)."""
    if op not in BUS_FACTOR:
        raise ValueError(f"unknown collective {op!r}")
    n = np.asarray(n, dtype=float)
    return np.where(n > 1, BUS_FACTOR[op](np.maximum(n, 1.0)), 0.0)


def collective_time(op: str, size_bytes, n, busbw_bytes_per_s, latency_s=0.0):
    """Seconds for one collective: S·factor(n)/busbw + latency (0 when n == 1). Vectorised."""
    n = np.asarray(n, dtype=float)
    f = bus_factor(op, n)
    t = np.asarray(size_bytes, dtype=float) * f / np.asarray(busbw_bytes_per_s, dtype=float)
    t = t + np.where(n > 1, latency_s, 0.0)
    return t if t.ndim else float(t)


def algbw(op: str, size_bytes: float, seconds: float) -> float:
    """Algorithm bandwidth, bytes/s (nccl-tests): S / t."""
    return size_bytes / seconds


def busbw(op: str, size_bytes: float, seconds: float, n: int) -> float:
    """Bus bandwidth, bytes/s (nccl-tests): algbw × factor(n)."""
    return algbw(op, size_bytes, seconds) * float(bus_factor(op, n))
