"""Slow, obvious RoPE, loop by loop: Python floats and the math module only.

``rope`` rotates each pair of one vector at a time, RoFormer eq. 34 (arXiv:2104.09864):
``(x_a, x_b) -> (x_a cos(m t_i) - x_b sin(m t_i), x_a sin(m t_i) + x_b cos(m t_i))``.
``frequencies`` writes out each scaled frequency ladder one pair at a time, from the papers and
the reference code they released.
"""

from __future__ import annotations

import math


def rope(
    vectors, positions, base=10000.0, pairing="interleaved", rotary_dim=None, thetas=None, scale=1.0
):
    """Rotate ``vectors[j]`` (a list of floats) by position ``positions[j]``.

    ``thetas`` (one per pair) defaults to ``base ** (-2 i / rotary_dim)``; ``scale`` multiplies
    cos and sin (HF's attention factor).
    """
    out = []
    for vec, m in zip(vectors, positions, strict=True):
        dim = len(vec)
        r = dim if rotary_dim is None else rotary_dim
        new = list(vec)
        for i in range(r // 2):
            theta = thetas[i] if thetas is not None else 1.0 / base ** (2 * i / r)
            c = scale * math.cos(m * theta)
            s = scale * math.sin(m * theta)
            if pairing == "interleaved":
                a, b = 2 * i, 2 * i + 1
            else:
                a, b = i, i + r // 2
            new[a] = vec[a] * c - vec[b] * s
            new[b] = vec[a] * s + vec[b] * c
        out.append(new)
    return out


def dot(u, v):
    total = 0.0
    for a, b in zip(u, v, strict=True):
        total += a * b
    return total


def frequencies(dim, base=10000.0, scaling=None, seq_len=None):
    """``(thetas, attention_factor)`` for one of the scalings, one pair at a time."""
    kind = "default" if scaling is None else scaling.get("rope_type", scaling.get("type"))
    half = dim // 2
    plain = [1.0 / base ** (2 * i / dim) for i in range(half)]
    if kind == "default":
        return plain, 1.0
    if kind == "linear":  # position interpolation, arXiv:2306.15595: positions / s
        return [t / scaling["factor"] for t in plain], 1.0
    if kind == "dynamic":  # "NTK-aware" base change, grown with the current length
        s, trained = scaling["factor"], scaling["original_max_position_embeddings"]
        length = trained if seq_len is None else max(seq_len, trained)
        if dim == 2:
            return [1.0], 1.0
        new_base = base * (s * length / trained - (s - 1)) ** (dim / (dim - 2))
        return [1.0 / new_base ** (2 * i / dim) for i in range(half)], 1.0
    if kind == "yarn":  # arXiv:2309.00071, "NTK-by-parts" as in the released code
        s, trained = scaling["factor"], scaling["original_max_position_embeddings"]
        alpha = scaling.get("beta_slow") or 1.0
        beta = scaling.get("beta_fast") or 32.0

        def pair_index(rotations):
            return dim * math.log(trained / (rotations * 2 * math.pi)) / (2 * math.log(base))

        low, high = pair_index(beta), pair_index(alpha)
        if scaling.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += 0.001
        thetas = []
        for i in range(half):
            ramp = min(1.0, max(0.0, (i - low) / (high - low)))  # 0: keep, 1: interpolate
            thetas.append(plain[i] * (1 - ramp) + plain[i] / s * ramp)
        factor = scaling.get("attention_factor")
        if factor is None:

            def mscale(scale, m):
                return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

            if scaling.get("mscale") and scaling.get("mscale_all_dim"):
                factor = mscale(s, scaling["mscale"]) / mscale(s, scaling["mscale_all_dim"])
            else:
                factor = mscale(s, 1.0)
        return thetas, factor
    if kind == "llama3":  # Meta's apply_scaling (llama-models), arXiv:2407.21783
        s = scaling["factor"]
        lo, hi = scaling["low_freq_factor"], scaling["high_freq_factor"]
        trained = scaling["original_max_position_embeddings"]
        thetas = []
        for t in plain:
            wavelen = 2 * math.pi / t
            if wavelen < trained / hi:
                thetas.append(t)
            elif wavelen > trained / lo:
                thetas.append(t / s)
            else:
                smooth = (trained / wavelen - lo) / (hi - lo)
                thetas.append((1 - smooth) * t / s + smooth * t)
        return thetas, 1.0
    if kind == "longrope":  # arXiv:2402.13753: one rescale factor per pair
        trained = scaling["original_max_position_embeddings"]
        use_long = seq_len is not None and seq_len > trained
        ext = scaling["long_factor"] if use_long else scaling["short_factor"]
        thetas = [plain[i] / ext[i] for i in range(half)]
        factor = scaling.get("attention_factor")
        if factor is None:
            s = scaling["factor"]
            factor = 1.0 if s <= 1 else math.sqrt(1 + math.log(s) / math.log(trained))
        return thetas, factor
    raise ValueError(kind)
