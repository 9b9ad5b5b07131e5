"""Slow, obvious video / N-D RoPE, loop by loop: Python floats and the math module only.

``axes_rope`` rotates one vector by ``n`` coordinates, block by block, each block with its own
ladder (FLUX's ``EmbedND``). ``videorope_ids`` and ``videorope_pair_axis`` write out VideoRoPE's
diagonal layout and frequency allocation from the paper (Wei et al., arXiv:2502.05173, sec. 3)
one token and one pair at a time.
"""

from __future__ import annotations

import math


def axes_rope(vec, coords, axes_dim, base=10000.0):
    """Adjacent pairs; block ``a`` (width ``axes_dim[a]``) turns by ``coords[a]``."""
    out = list(vec)
    start = 0
    for a, d in enumerate(axes_dim):
        for j in range(d // 2):
            theta = coords[a] / base ** (2 * j / d)
            u, v = vec[start + 2 * j], vec[start + 2 * j + 1]
            out[start + 2 * j] = u * math.cos(theta) - v * math.sin(theta)
            out[start + 2 * j + 1] = u * math.sin(theta) + v * math.cos(theta)
        start += d
    return out


def videorope_ids(layout, merge=2, delta=2.0):
    """One row of (t, h, w) per token: text on the diagonal, frames centred on it."""
    rows, cur = [], 0.0
    for seg in layout:
        if seg[0] == "text":
            for _ in range(seg[1]):
                rows.append((cur, cur, cur))
                cur += 1
        elif seg[0] == "pad":
            rows += [(1.0, 1.0, 1.0)] * seg[1]
        else:
            t, h, w = seg[1][0], seg[1][1] // merge, seg[1][2] // merge
            for k in range(t):
                time = cur + delta * k
                for i in range(h):
                    for j in range(w):
                        rows.append((time, time + i - (h - 1) // 2, time + j - (w - 1) // 2))
            cur = cur + delta * (t - 1) + 1
    return rows


def videorope_pair_axis(half, section):
    """0 = t, 1 = h, 2 = w for each rotate-half pair."""
    s_t, s_h, s_w = section
    axes = []
    for i in range(half):
        if i < s_h + s_w:
            axes.append(1 if i % 2 == 0 else 2)
        else:
            axes.append(0)
    return axes


def videorope_rotate(vec, ids, section, base=10000.0):
    """Rotate-half pairs ``(i, i + d/2)``; pair ``i`` turns by ``ids[axis(i)] * base**(-2i/d)``."""
    d = len(vec)
    axes = videorope_pair_axis(d // 2, section)
    out = list(vec)
    for i in range(d // 2):
        theta = ids[axes[i]] / base ** (2 * i / d)
        a, b = vec[i], vec[i + d // 2]
        out[i] = a * math.cos(theta) - b * math.sin(theta)
        out[i + d // 2] = a * math.sin(theta) + b * math.cos(theta)
    return out
