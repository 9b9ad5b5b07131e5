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


# --- naive absolute codes (posenc.naive) ------------------------------------------------------


def integer(positions):
    """PE(p) = [p]."""
    return [[float(p)] for p in positions]


def normalized(positions, length):
    """PE(p) = [p / (n - 1)], and [0] when n == 1."""
    rows = []
    for p in positions:
        rows.append([p / (length - 1) if length > 1 else 0.0])
    return rows


def binary(positions, bits):
    """Base-2 digits of a whole number p, most significant first: 1 -> [0, ..., 0, 1]."""
    rows = []
    for p in positions:
        p = int(p)
        row = []
        for j in range(bits):
            weight = 2 ** (bits - 1 - j)
            row.append(float((p // weight) % 2))
        rows.append(row)
    return rows


def periodic(positions, dim):
    """PE(p)_i = sin(p * w_i) with w_i = (pi / 2) / 2**i."""
    rows = []
    for p in positions:
        row = []
        for i in range(dim):
            w = (math.pi / 2) / 2**i
            row.append(math.sin(p * w))
        rows.append(row)
    return rows


# --- scaled dot-product attention (posenc.attention) ------------------------------------------


def attention(q, k, v, bias=None, mask=None, scale=None):
    """Vaswani et al. (2017), eq. 1, one query row at a time, for 2-D lists q (Lq, d), k (Lk, d),
    v (Lk, dv); bias (Lq, Lk) added to the scaled scores; mask (Lq, Lk), True = may attend.

    Returns (out, weights) as lists of lists.
    """
    d = len(q[0])
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    out, weights = [], []
    for i in range(len(q)):
        scores = []
        for j in range(len(k)):
            dot = 0.0
            for c in range(d):
                dot += q[i][c] * k[j][c]
            s = dot * scale
            if bias is not None:
                s += bias[i][j]
            if mask is not None and not mask[i][j]:
                s = -math.inf
            scores.append(s)
        top = max(scores)
        exps = [math.exp(s - top) if s != -math.inf else 0.0 for s in scores]
        total = sum(exps)
        row = [e / total for e in exps]
        weights.append(row)
        out.append([sum(row[j] * v[j][c] for j in range(len(k))) for c in range(len(v[0]))])
    return out, weights


# --- position ids from a padding mask (posenc.position_ids) -------------------------------------


def position_ids(mask_rows, pad_value=1):
    """For each row: the k-th real token (mask 1) gets position k, counted from 0; pads get pad_value."""
    out = []
    for row in mask_rows:
        seen = 0
        ids = []
        for m in row:
            if m:
                ids.append(seen)
                seen += 1
            else:
                ids.append(pad_value)
        out.append(ids)
    return out


# --- relative positions (posenc.relative_positions) --------------------------------------------


def relative_positions(q_len, k_len, offset=0, max_distance=None):
    """Shaw et al. (2018), section 3.2: clip(j - i, -k, k), with query i at position i + offset."""
    rows = []
    for i in range(q_len):
        row = []
        for j in range(k_len):
            r = j - (i + offset)
            if max_distance is not None:
                r = max(-max_distance, min(max_distance, r))
            row.append(r)
        rows.append(row)
    return rows


# --- learned absolute embeddings (posenc.torch.LearnedPositionalEmbedding) ---------------------


def learned_add(x, table, positions, first_row=0):
    """x (seq, dim) plus the table row of each position: out[t][c] = x[t][c] + W[first_row + p_t][c]."""
    out = []
    for t, p in enumerate(positions):
        row = table[first_row + p]
        out.append([x[t][c] + row[c] for c in range(len(row))])
    return out
