"""The rotation of :meth:`Scheme.rotate`: one layer's queries and keys, as the model turns them.

The frequencies of dynamic and LongRoPE scaling depend on the positions: transformers'
``dynamic_rope_update`` reads ``max(position_ids) + 1`` and, on a fresh rotary module, keeps the
trained frequencies while that is at most the trained length. :func:`frequencies` does the same;
eagerly it reads the largest id on the host (any integer or float dtype, refusing ids past
``2**53``), and under ``torch.compile`` / ``torch.export`` it picks the frequencies in the graph
with ``torch.where``, so that no Python number depends on the data.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .._array import as_positions, compiling, is_torch
from ..rope import _check_x, _cos_sin, _rotate, _work_dtype
from ..rope_scaling import MAX_LENGTH, frequencies_at
from .layer import LayerScheme
from .schema import ROTARY_KINDS

__all__ = ["frequencies", "rotate", "scale_queries"]

# rope types whose frequencies depend on max(position_ids) + 1
_BY_LENGTH = ("dynamic", "longrope")


def rotate(spec: LayerScheme, x: Any, position_ids: Any, *, model_type: str) -> Any:
    """The body of :meth:`Scheme.rotate` for the layer ``spec`` of a ``model_type`` model."""
    if spec.kind not in (*ROTARY_KINDS, "nope"):
        raise ValueError(
            f"a {model_type} model does not rotate queries and keys (its positions are "
            f"{spec.kind!r}); see Scheme.explain() for the posenc function that reproduces them"
        )
    arr, torch_x = _check_x(x)
    if arr.ndim != 4:
        raise ValueError(
            f"x must have shape (batch, heads, seq, head_dim), got shape {tuple(arr.shape)}"
        )
    if spec.head_dim is not None and arr.shape[-1] != spec.head_dim:
        raise ValueError(
            f"x's last axis must be the head dim {spec.head_dim} of this {model_type} "
            f"config, got {arr.shape[-1]}"
        )
    axes = len(spec.mrope_section or ()) if spec.kind == "mrope" else 0
    ids = _check_ids(position_ids, arr, axes=axes)
    if spec.kind == "nope":
        return x
    inv_freq, factor = frequencies(spec, ids)
    scale = None
    if not isinstance(factor, float):  # a factor chosen in the graph (Phi-3.5-MoE's mscale)
        scale, factor = factor, 1.0
    work = _work_dtype(arr)
    if spec.mrope_layout == "xd":  # HunYuan-VL: per-feature angles, not per pair
        cos, sin = _xd_cos_sin(ids, inv_freq, factor, spec, work)
    elif spec.kind == "mrope":
        cos, sin = _mrope_cos_sin(ids, inv_freq, factor, spec, work)
    else:
        cos, sin = _cos_sin(ids[:, None, :], inv_freq, factor, dtype=work)
    if scale is not None:
        cos, sin = cos * scale, sin * scale
    if spec.angle_sign == -1:
        sin = -sin
    rot = int(spec.rotary_dim or 0)
    width = arr.shape[-1]
    start = width - rot if spec.slot == "tail" else 0
    part = arr[..., start : start + rot]
    if spec.pairing == "deinterleave":
        part = _deinterleave(part)
    pairing = "interleaved" if spec.pairing == "interleaved" else "half"
    if spec.mrope_layout == "xd":
        out = _rotate_features(part, cos, sin, torch_x)
    else:
        out = _rotate(part, cos, sin, pairing=pairing, rotary_dim=rot)
    if rot != width:
        pieces = (arr[..., :start], out) if spec.slot == "tail" else (out, arr[..., rot:])
        out = _cat(pieces, torch_x, axis=-1)
    if spec.rotated_heads is not None:  # the other heads carry no positions
        out = _cat((out[:, : spec.rotated_heads], arr[:, spec.rotated_heads :]), torch_x, 1)
    return out


def scale_queries(spec: LayerScheme, q: Any, positions: Any, *, model_type: str) -> Any:
    """The body of :meth:`Scheme.scale_queries`: Llama 4's query temperature on a NoPE layer.

    ``Llama4TextAttention`` (transformers 5.24, models/llama4/modeling_llama4.py) computes
    ``log1p(floor((positions.float() + 1.0) / floor_scale)) * attn_scale + 1.0`` in float32
    from the cache positions (``arange(seq) + past_seen_tokens``), multiplies the queries by it
    and casts back to their dtype. The same here: the scale in float32, the product in the
    promoted dtype (float32 for half-precision queries, float64 for float64 ones), cast back.
    """
    try:
        arr, torch_q = _check_x(q)
    except (TypeError, ValueError) as exc:  # the rotation's check, which calls its input x
        raise type(exc)("q" + str(exc)[1:]) from None
    if arr.ndim != 4:
        raise ValueError(
            f"q must have shape (batch, heads, seq, head_dim), got shape {tuple(arr.shape)}"
        )
    if spec.head_dim is not None and arr.shape[-1] != spec.head_dim:
        raise ValueError(
            f"q's last axis must be the head dim {spec.head_dim} of this {model_type} config, "
            f"got {arr.shape[-1]}"
        )
    ids = _check_ids(positions, arr, axes=0, name="positions", x_name="q")
    _refuse_negative(ids, name="positions")
    temperature = spec.query_temperature
    if temperature is None:
        return q
    attn_scale, floor_scale = float(temperature["attn_scale"]), int(temperature["floor_scale"])
    if torch_q:
        torch = sys.modules["torch"]
        p = ids.float()
        scales = torch.log1p(torch.floor((p + 1.0) / floor_scale)) * attn_scale + 1.0
        return (arr * scales[:, None, :, None]).to(arr.dtype)
    p = np.asarray(ids).astype(np.float32)
    one = np.float32(1.0)
    scales = np.log1p(np.floor((p + one) / np.float32(floor_scale))) * np.float32(attn_scale) + one
    return (arr * scales[:, None, :, None]).astype(arr.dtype, copy=False)


def _refuse_negative(ids: Any, *, name: str) -> None:
    """Refuse a negative cache position: the model forms them as ``arange(seq) +
    past_seen_tokens``, never below 0, and below -1 its scale is ``log1p(-1) = -inf`` or NaN.
    Under tracing the check is ``torch._assert_async`` (a RuntimeError); a meta tensor has no
    values to check, nor has a tensor inside a torch.func transform (vmap)."""
    if is_torch(ids):
        from .._rope_torch import functorch_active

        torch = sys.modules["torch"]
        signed = ids.is_floating_point() or ids.dtype.is_signed
        if not signed or not _size(ids) or ids.device.type == "meta" or functorch_active():
            return
        if compiling():
            torch._assert_async(
                ids.min() >= 0, f"{name} must be cache positions >= 0, got a negative one"
            )
            return
        low = ids.min().item()
    else:
        if ids.dtype.kind == "u" or not ids.size:
            return
        low = ids.min().item()
    if low < 0:
        raise ValueError(
            f"{name} must be cache positions >= 0 (arange(seq) + the tokens already cached, as "
            f"Llama4TextAttention forms them), got {low}"
        )


def frequencies(spec: LayerScheme, ids: Any) -> tuple[Any, float]:
    """The inverse frequencies and attention factor that rotate ``ids`` (checked position ids).

    Dynamic and LongRoPE scaling: those of ``L = max(ids) + 1`` where ``L`` exceeds the trained
    length ``L0`` (``scaling['original_max_position_embeddings']``), else the trained ones, as
    transformers' ``dynamic_rope_update`` does on a fresh module (negative ids and short
    sequences included). A float64 NumPy array, or under tracing a float64 tensor chosen in the
    graph. Other rope types: the layer's fixed frequencies.
    """
    inv_freq, factor = spec.inv_freq(None)  # the trained length's; checks the scaling too
    if spec.mscale is not None and _size(ids):
        return inv_freq, _mscale(spec, ids, factor)
    if spec.rope_type not in _BY_LENGTH or not _size(ids):
        return inv_freq, factor
    if spec.rope_type == "dynamic" and spec.rotary_dim == 2:
        return inv_freq, factor  # one pair, frequency base' ** 0 = 1 whatever the length
    trained = int((spec.scaling or {})["original_max_position_embeddings"])
    if is_torch(ids) and compiling():
        return _traced(spec, ids, inv_freq, trained), factor
    if is_torch(ids) and ids.device.type == "meta":
        return inv_freq, factor  # no values: every choice gives the same meta tensor
    top = _largest(ids)
    if not top < MAX_LENGTH:
        raise ValueError(
            f"position_ids must be < 2**53 with {spec.rope_type} scaling, which reads "
            f"max(position_ids) + 1 as the current length (float64 holds no larger length "
            f"exactly), got a largest id of {top}"
        )
    length = top + 1
    if length <= trained:
        return inv_freq, factor
    return frequencies_at(
        spec.rotary_dim, spec.base, spec.scaling, length, name="max(position_ids) + 1"
    )


def _mscale(spec: LayerScheme, ids: Any, short: float) -> Any:
    """Phi-3.5-MoE's factor on cos and sin: ``mscale[1]`` once ``max(ids) + 1`` exceeds the
    trained length, else ``short`` (``mscale[0]``); a float64 0-d tensor chosen in the graph
    under tracing."""
    assert spec.mscale is not None
    trained = (spec.scaling or {}).get("original_max_position_embeddings")
    if trained is None:
        return short
    if is_torch(ids) and compiling():
        torch = sys.modules["torch"]
        longer = ids.to(torch.float64).amax() + 1 > trained
        long = torch.as_tensor(spec.mscale[1], dtype=torch.float64, device=ids.device)
        return torch.where(
            longer, long, torch.as_tensor(short, dtype=torch.float64, device=ids.device)
        )
    if is_torch(ids) and ids.device.type == "meta":
        return short  # no values: the factor does not change a meta tensor
    top = _largest(ids)
    if not top < MAX_LENGTH:
        raise ValueError(
            "position_ids must be < 2**53 with Phi-3.5-MoE's mscale, which reads "
            f"max(position_ids) + 1 as the current length, got a largest id of {top}"
        )
    return spec.inv_freq(int(top) + 1)[1]


def _largest(ids: Any) -> int | float:
    """``max(ids)`` as a Python number, exact for every integer dtype (uint64 has no max in
    torch; past 2**63 it would wrap in int64)."""
    if not is_torch(ids):
        return ids.max().item()
    torch = sys.modules["torch"]
    if ids.is_floating_point():
        return float(ids.detach().max())
    wide = ids.to(torch.float64 if ids.dtype == torch.uint64 else torch.int64)
    top = wide.max().item()
    return int(top) if top < MAX_LENGTH else top


def _traced(spec: LayerScheme, ids: Any, short: Any, trained: int) -> Any:
    """:func:`frequencies` in the graph: ``L = max(ids) + 1`` a float64 tensor, the choice a
    ``torch.where``, the refusals ``torch._assert_async`` (a RuntimeError)."""
    torch = sys.modules["torch"]
    device = ids.device
    top = ids.to(torch.float64).amax()
    torch._assert_async(
        top < MAX_LENGTH,
        f"position_ids must be < 2**53 with {spec.rope_type} scaling (max(position_ids) + 1 is "
        "read as the current length)",
    )
    length = top + 1
    longer = length > trained
    if spec.rope_type == "longrope":
        long, _ = spec.inv_freq(trained + 1)
        grown = torch.as_tensor(long, dtype=torch.float64, device=device)
    else:  # dynamic NTK: the formula of posenc.rope_scaling._dynamic, on a tensor length
        dim, base = int(spec.rotary_dim or 0), float(spec.base or 0.0)
        factor = float((spec.scaling or {})["factor"])
        new_base = base * (factor * length / trained - (factor - 1)) ** (dim / (dim - 2))
        torch._assert_async(
            ~longer | torch.isfinite(new_base),
            f"max(position_ids) + 1 with scaling['factor'] = {factor:g} makes the dynamic NTK "
            "base overflow float64",
        )
        i = torch.arange(0, dim, 2, dtype=torch.float64, device=device) / dim
        grown = new_base**-i
    return torch.where(longer, grown, torch.as_tensor(short, dtype=torch.float64, device=device))


def _cat(pieces: tuple[Any, Any], torch_x: bool, axis: int) -> Any:
    if torch_x:
        return sys.modules["torch"].cat(pieces, dim=axis)
    return np.concatenate(pieces, axis=axis)


def _size(ids: Any) -> int:
    return int(ids.numel()) if is_torch(ids) else int(ids.size)


def _check_ids(
    position_ids: Any, x: Any, *, axes: int, name: str = "position_ids", x_name: str = "x"
) -> Any:
    """``position_ids`` as (batch, seq) (or (axes, batch, seq) for M-RoPE: ``axes`` > 0) in
    ``x``'s library (``name`` and ``x_name``: the arguments' names in errors)."""
    mrope = axes > 0
    ids, torch_ids = as_positions(position_ids, name=name)
    if torch_ids and not is_torch(x):
        raise TypeError(f"{name} is a torch tensor but {x_name} is a NumPy array; pass one library")
    if is_torch(x) and not torch_ids:
        ids = sys.modules["torch"].as_tensor(np.ascontiguousarray(ids), device=x.device)
    elif torch_ids and ids.device != x.device:
        raise ValueError(
            f"{name} is on {ids.device} but {x_name} is on {x.device}; move one of them"
        )
    batch, seq = x.shape[0], x.shape[2]
    shape = tuple(ids.shape)
    if mrope and len(shape) == 2:  # (batch, seq) text ids: t = h = w
        ids = (
            ids[None].expand(axes, *shape)
            if is_torch(ids)
            else np.broadcast_to(ids, (axes, *shape))
        )
        shape = tuple(ids.shape)
    want = (
        f"({axes}, {batch}, {seq}) or ({batch}, {seq})"
        if mrope
        else f"({batch}, {seq}) or ({seq},)"
    )
    if not mrope and len(shape) == 1:
        ids = ids[None]
        shape = tuple(ids.shape)
    ok = len(shape) == (3 if mrope else 2) and shape[-1] == seq and shape[-2] in (1, batch)
    if mrope:
        ok = ok and shape[0] == axes
    if not ok:
        raise ValueError(
            f"{name} must have shape {want} for {x_name} of shape {tuple(x.shape)}, got {shape}"
        )
    return ids


def _mrope_cos_sin(ids: Any, inv_freq: Any, factor: float, spec: LayerScheme, work: Any) -> Any:
    from ..mrope import _pair_axes

    half = len(inv_freq)
    section = list(spec.mrope_section or ())
    n = len(section)
    if n == 2:  # row and column take turns pair by pair (NeoMME)
        axes = np.arange(half) % 2
    elif spec.mrope_layout == "hw_then_t":  # Ernie 4.5 VL: h, w in turn, then t
        hw = section[0] + section[1]
        axes = np.where(np.arange(half) < hw, 1 + np.arange(half) % 2, 0)
    else:
        axes = np.asarray(_pair_axes(half, section, spec.mrope_interleaved))
    parts = [_cos_sin(ids[a][:, None, :], inv_freq, factor, dtype=work) for a in range(n)]
    if is_torch(ids):
        torch = sys.modules["torch"]
        sel = [torch.as_tensor(axes == a, device=ids.device) for a in range(n)]
        cos = sum(torch.where(sel[a], parts[a][0], 0) for a in range(n))
        sin = sum(torch.where(sel[a], parts[a][1], 0) for a in range(n))
        return cos, sin
    cos = sum(np.where(axes == a, parts[a][0], 0) for a in range(n))
    sin = sum(np.where(axes == a, parts[a][1], 0) for a in range(n))
    return cos, sin


def _xd_cos_sin(ids: Any, inv_freq: Any, factor: float, spec: LayerScheme, work: Any) -> Any:
    """cos and sin of width rotary_dim, feature by feature: ``cat(freqs, freqs)`` cut into
    chunks of ``2 * mrope_section[i]`` features, chunk ``i`` at the angles of axis ``i``."""
    section = list(spec.mrope_section or ())
    n = len(section)
    axes = np.repeat(np.arange(n), [2 * s for s in section])
    parts = [_cos_sin(ids[a][:, None, :], inv_freq, factor, dtype=work) for a in range(n)]
    if is_torch(ids):
        torch = sys.modules["torch"]
        sel = [torch.as_tensor(axes == a, device=ids.device) for a in range(n)]
        full = [(torch.cat((c, c), -1), torch.cat((s, s), -1)) for c, s in parts]
        cos = sum(torch.where(sel[a], full[a][0], 0) for a in range(n))
        sin = sum(torch.where(sel[a], full[a][1], 0) for a in range(n))
        return cos, sin
    full_np = [(np.concatenate((c, c), -1), np.concatenate((s, s), -1)) for c, s in parts]
    cos = sum(np.where(axes == a, full_np[a][0], 0) for a in range(n))
    sin = sum(np.where(axes == a, full_np[a][1], 0) for a in range(n))
    return cos, sin


def _rotate_features(x: Any, cos: Any, sin: Any, torch_x: bool) -> Any:
    """``x * cos + rotate_half(x) * sin`` with cos and sin given per feature (width of x)."""
    half = x.shape[-1] // 2
    if torch_x:
        torch = sys.modules["torch"]
        turned = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos.to(x.dtype) + turned * sin.to(x.dtype)
    turned = np.concatenate((-x[..., half:], x[..., :half]), axis=-1)
    return (x * cos + turned * sin).astype(x.dtype, copy=False)


def _deinterleave(part: Any) -> Any:
    """Features (x0, x1, x2, x3, ...) reordered as (x0, x2, ..., x1, x3, ...)."""
    if is_torch(part):
        torch = sys.modules["torch"]
        return torch.cat((part[..., 0::2], part[..., 1::2]), dim=-1)
    return np.concatenate((part[..., 0::2], part[..., 1::2]), axis=-1)
