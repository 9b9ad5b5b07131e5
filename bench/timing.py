"""Timing helpers: alternate the contenders, take medians, synchronise CUDA."""

from __future__ import annotations

import statistics
import time


def _sync(device: str):
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def measure(contenders: dict, *, repeat: int, warmup: int = 1, device: str = "cpu") -> dict:
    """Median seconds per call for each contender, calls interleaved round by round.

    Interleaving spreads slow phases of the machine (page-fault storms, other processes) over all
    contenders alike, so their ratios stay meaningful even when absolute times drift.
    """
    for fn in contenders.values():
        for _ in range(warmup):
            fn()
    _sync(device)
    samples = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, fn in contenders.items():
            _sync(device)
            if device == "cuda":
                import torch

                start, end = (
                    torch.cuda.Event(enable_timing=True),
                    torch.cuda.Event(enable_timing=True),
                )
                start.record()
                fn()
                end.record()
                torch.cuda.synchronize()
                samples[name].append(start.elapsed_time(end) / 1e3)
            else:
                t0 = time.perf_counter()
                fn()
                samples[name].append(time.perf_counter() - t0)
    return {name: statistics.median(s) for name, s in samples.items()}
