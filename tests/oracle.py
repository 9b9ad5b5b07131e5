"""Slow, obvious versions of each formula, written loop by loop from the papers.

Every fast function in posenc is held equal to its oracle here on random inputs. Python floats
(float64) and the math module only: no vectorisation, nothing clever.
"""

from __future__ import annotations

import math


def sinusoidal(positions, dim, base=10000.0, layout="interleaved"):
    """Vaswani et al. (2017), section 3.5: PE(pos, 2i) = sin(pos / base^(2i/d)), PE(pos, 2i+1) = cos(...)."""
    rows = []
    for pos in positions:
        row = [0.0] * dim
        for i in range(dim // 2):
            angle = pos / base ** (2 * i / dim)
            if layout == "interleaved":
                row[2 * i] = math.sin(angle)
                row[2 * i + 1] = math.cos(angle)
            else:
                row[i] = math.sin(angle)
                row[dim // 2 + i] = math.cos(angle)
        rows.append(row)
    return rows


def shift_matrix(offset, dim, base=10000.0):
    """The block-diagonal rotation T_k: PE(p + k) = T_k PE(p) (column vectors)."""
    t = [[0.0] * dim for _ in range(dim)]
    for i in range(dim // 2):
        phi = offset / base ** (2 * i / dim)
        t[2 * i][2 * i] = math.cos(phi)
        t[2 * i][2 * i + 1] = math.sin(phi)
        t[2 * i + 1][2 * i] = -math.sin(phi)
        t[2 * i + 1][2 * i + 1] = math.cos(phi)
    return t
