"""Timing helpers: alternate the contenders, take medians, synchronise CUDA."""

from __future__ import annotations

import statistics
import time


def _sync(device: str):
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def measure_rounds(
    contenders: dict, *, repeat: int, warmup: int = 1, device: str = "cpu"
) -> dict[str, list[float]]:
    """Seconds of every call of each contender, calls interleaved round by round.

    Interleaving spreads slow phases of the machine (page-fault storms, other processes) over all
    contenders alike, so their ratios stay meaningful even when absolute times drift; the rounds
    are kept so that the spread of the per-round ratios (:func:`ratio_spread`) can be reported.
    """
    for fn in contenders.values():
        for _ in range(warmup):
            fn()
    _sync(device)
    samples: dict[str, list[float]] = {name: [] for name in contenders}
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
    return samples


def measure(contenders: dict, *, repeat: int, warmup: int = 1, device: str = "cpu") -> dict:
    """Median seconds per call for each contender (see :func:`measure_rounds`)."""
    rounds = measure_rounds(contenders, repeat=repeat, warmup=warmup, device=device)
    return {name: statistics.median(s) for name, s in rounds.items()}


def ratio_spread(num: list[float], den: list[float]) -> float:
    """The noise of ``median(num) / median(den)`` in one run: half the interquartile range of
    the per-round ratios ``num[i] / den[i]`` (the two calls of a round ran back to back)."""
    ratios = sorted(a / b for a, b in zip(num, den, strict=True))
    if len(ratios) < 2:
        return 0.0
    q1, _, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
    return (q3 - q1) / 2
