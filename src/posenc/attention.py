"""Scaled dot-product attention (Vaswani et al., 2017), with an additive bias and a boolean mask.

The place where every position encoding ends up: absolute codes are added to ``q`` and ``k``
before the dot product, relative schemes (T5, ALiBi) add a ``bias`` to the scores, RoPE rotates
``q`` and ``k``. One small, exact reference in NumPy and torch, so that the pages can show each
scheme's effect on the attention weights themselves.
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from ._array import check_scalar, compiling, is_torch

if TYPE_CHECKING:
    from ._typing import ArrayLike, FloatArray, Tensor

__all__ = ["attention"]


@overload
def attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *,
    bias: Tensor | None = ...,
    mask: Tensor | None = ...,
    scale: float | None = ...,
    return_weights: Literal[False] = ...,
) -> Tensor: ...
@overload
def attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *,
    bias: Tensor | None = ...,
    mask: Tensor | None = ...,
    scale: float | None = ...,
    return_weights: Literal[True],
) -> tuple[Tensor, Tensor]: ...
@overload
def attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    *,
    bias: ArrayLike | None = ...,
    mask: ArrayLike | None = ...,
    scale: float | None = ...,
    return_weights: Literal[False] = ...,
) -> FloatArray: ...
@overload
def attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    *,
    bias: ArrayLike | None = ...,
    mask: ArrayLike | None = ...,
    scale: float | None = ...,
    return_weights: Literal[True],
) -> tuple[FloatArray, FloatArray]: ...
def attention(
    q: Any,
    k: Any,
    v: Any,
    *,
    bias: Any = None,
    mask: Any = None,
    scale: float | None = None,
    return_weights: bool = False,
) -> Any:
    """Scaled dot-product attention (Vaswani et al., 2017), ``softmax(q k^T / sqrt(d) + bias) v``.

    Parameters
    ----------
    q : array of shape (..., Lq, d)
        Queries.
    k : array of shape (..., Lk, d)
        Keys.
    v : array of shape (..., Lk, dv)
        Values. The batch dimensions ``...`` of ``q``, ``k`` and ``v`` broadcast together.
    bias : array broadcastable to (..., Lq, Lk), optional
        Added to the scaled scores before the softmax (relative position biases, ALiBi).
        ``-inf`` entries remove a key, like ``mask``; ``+inf`` and NaN entries are refused
        (they would make the row NaN).
    mask : boolean array broadcastable to (..., Lq, Lk), optional
        True where query ``i`` may attend to key ``j`` (the convention of
        ``torch.nn.functional.scaled_dot_product_attention``); False scores become ``-inf``
        before the softmax. Every query must keep at least one key.
    scale : float, optional
        Multiplies ``q k^T``; default ``1 / sqrt(d)``. Applied to ``q`` before the product, as
        ``torch.nn.functional.scaled_dot_product_attention`` does, so float16 scores do not
        overflow where the scaled ones fit.
    return_weights : bool, default False
        Also return the attention weights.

    Returns
    -------
    out : array of shape (..., Lq, dv)
        In the inputs' library, on their device. Floating inputs keep their (promoted) dtype;
        integer inputs give float64 (NumPy) or ``torch.get_default_dtype()`` (torch). float16
        and bfloat16 are computed in float32 and rounded once at the end (as SDPA's kernels
        accumulate in float32).
    weights : array of shape (..., Lq, Lk)
        Only with ``return_weights=True``: each row sums to 1 and is 0 where masked.

    Raises
    ------
    TypeError
        Inputs from different libraries (NumPy and torch mixed), non-real values, a mask that
        is not boolean, ``scale`` not a real number.
    ValueError
        Shapes that do not fit (naming the arguments and their shapes), tensors on different
        devices, ``d == 0``, no keys (``Lk == 0``), a ``bias`` holding ``+inf`` or NaN, or a
        query row left without any key by ``mask`` or by an all ``-inf`` ``bias`` (it would
        give 0/0 = NaN). These value checks read the values, so they are skipped for torch
        ``meta`` tensors and while ``torch.compile`` / ``torch.export`` trace the call (a
        data-dependent branch would break the graph).

    See Also
    --------
    posenc.relative_positions : the ``j - i`` matrix that relative biases are built from.

    Notes
    -----
    ``A = softmax((q / sqrt(d)) k^T + bias)`` row by row over the keys, ``out = A v``. The
    softmax subtracts each row's maximum before ``exp``, so large scores do not overflow.

    References
    ----------
    Vaswani et al., "Attention Is All You Need", arXiv:1706.03762.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> q = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> k = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> v = np.array([[1.0], [2.0], [3.0]])
    >>> out, w = posenc.attention(q, k, v, return_weights=True)
    >>> out.shape, w.shape
    ((2, 1), (2, 3))
    >>> np.round(w, 4)
    array([[0.4011, 0.1978, 0.4011],
           [0.1978, 0.4011, 0.4011]])
    >>> causal = np.tril(np.ones((2, 3), dtype=bool))
    >>> np.round(posenc.attention(q, k, v, mask=causal, return_weights=True)[1], 4)
    array([[1.    , 0.    , 0.    ],
           [0.3302, 0.6698, 0.    ]])
    """
    torch_in = _library(q=q, k=k, v=v, bias=bias, mask=mask)
    if not isinstance(return_weights, bool):
        raise TypeError(f"return_weights must be True or False, got {return_weights!r}")
    ops = _TorchOps() if torch_in else _NumpyOps()
    q, k, v = (ops.real(x, name) for x, name in ((q, "q"), (k, "k"), (v, "v")))
    if bias is not None:
        bias = ops.real(bias, "bias")
    if mask is not None:
        mask = ops.boolean(mask)
    if torch_in:
        _same_device(q=q, k=k, v=v, bias=bias, mask=mask)

    batch, lq, lk, d = _check_shapes(q, k, v)
    score_shape = batch + (lq, lk)
    for name, extra in (("bias", bias), ("mask", mask)):
        if extra is not None:
            score_shape = _broadcast_onto(name, tuple(extra.shape), score_shape)
    scale = 1.0 / math.sqrt(d) if scale is None else check_scalar(scale, name="scale")

    # value checks read the data: not on meta tensors, and not while torch.compile traces
    has_values = not (torch_in and (q.device.type == "meta" or compiling()))
    rows_exist = math.prod(score_shape[:-1]) > 0
    if lk == 0 and rows_exist:
        raise ValueError(
            f"k and v have no keys (Lk = 0, k shape {tuple(k.shape)}): "
            "every query needs at least one key"
        )
    if mask is not None and has_values and rows_exist:
        allowed = ops.any_last(ops.broadcast(mask, score_shape))
        if not ops.all(allowed):
            row = ops.first_false(allowed)
            raise ValueError(
                f"mask leaves query row {row} (index into the broadcast scores of shape "
                f"{score_shape[:-1]}) with no key to attend to: every row of mask needs at "
                "least one True (a fully masked softmax is 0/0)"
            )

    if bias is not None and has_values and ops.any_posinf_or_nan(bias):
        raise ValueError(
            "bias must not hold +inf or nan (the softmax of that row would be nan); use -inf "
            "or mask to remove a key"
        )

    out_dtype = ops.compute_dtype(q, k, v, bias)
    dtype = ops.work_dtype(out_dtype)  # float16 / bfloat16 are computed in float32, as SDPA does
    q, k, v = ops.cast(q, dtype), ops.cast(k, dtype), ops.cast(v, dtype)
    # scale q first (as torch's SDPA does): q k^T may overflow where the scaled scores fit
    scores = ops.matmul(q * scale, ops.swap_last(k))  # (..., Lq, Lk)
    if lk == 0:  # no rows either (checked above): nothing to normalise
        weights = ops.broadcast(scores, score_shape)
        out = ops.matmul(weights, v)
        return _result(ops, out, weights, out_dtype, return_weights)
    if bias is not None:
        scores = scores + ops.cast(bias, dtype)
    scores = ops.broadcast(scores, score_shape)
    if mask is not None:
        scores = ops.where(mask, scores, -math.inf)
    row_max = ops.max_last(scores)  # (..., Lq, 1)
    if has_values and rows_exist and ops.any_neginf(row_max):
        raise ValueError(
            "every score of some query row is -inf (an all -inf row of bias, or bias -inf on "
            "every key that mask allows): the softmax of that row is 0/0"
        )
    e = ops.exp(scores - row_max)
    weights = e / ops.sum_last(e)
    out = ops.matmul(weights, v)  # (..., Lq, dv)
    return _result(ops, out, weights, out_dtype, return_weights)


def _result(ops: Any, out: Any, weights: Any, dtype: Any, return_weights: bool) -> Any:
    out = ops.cast(out, dtype)
    return (out, ops.cast(weights, dtype)) if return_weights else out


# --- argument checks ----------------------------------------------------------------------------


def _library(**arrays: Any) -> bool:
    """True when the array inputs are torch tensors, False when NumPy; TypeError when mixed."""
    given = {name: x for name, x in arrays.items() if x is not None}
    tensors = [name for name, x in given.items() if is_torch(x)]
    if tensors and len(tensors) != len(given):
        others = [name for name in given if name not in tensors]
        raise TypeError(
            "q, k, v, bias and mask must all come from one library: "
            f"{', '.join(tensors)} {'is a' if len(tensors) == 1 else 'are'} torch tensor"
            f"{'' if len(tensors) == 1 else 's'} but {', '.join(others)} "
            f"{'is' if len(others) == 1 else 'are'} not "
            f"({', '.join(f'{n}: {type(given[n]).__name__}' for n in others)})"
        )
    return bool(tensors)


def _same_device(**tensors: Any) -> Any:
    devices = {name: x.device for name, x in tensors.items() if x is not None}
    if len(set(devices.values())) > 1:
        listed = ", ".join(f"{name} on {dev}" for name, dev in devices.items())
        raise ValueError(f"q, k, v, bias and mask must be on one device, got {listed}")


def _check_shapes(q: Any, k: Any, v: Any) -> Any:
    shapes = {"q": tuple(q.shape), "k": tuple(k.shape), "v": tuple(v.shape)}
    for name, shape in shapes.items():
        if len(shape) < 2:
            want = "(..., Lk, dv)" if name == "v" else f"(..., L{name}, d)"
            raise ValueError(
                f"{name} must have shape {want} with at least 2 dimensions, got shape {shape}"
            )
    qs, ks, vs = shapes["q"], shapes["k"], shapes["v"]
    if qs[-1] != ks[-1]:
        raise ValueError(
            f"q and k must have the same last dimension d, got q shape {qs} and k shape {ks}"
        )
    if qs[-1] == 0:
        raise ValueError(
            f"q and k must have a feature dimension d >= 1, got q shape {qs} and k shape {ks}"
        )
    if ks[-2] != vs[-2]:
        raise ValueError(
            "k and v must have the same number of keys Lk (dimension -2), "
            f"got k shape {ks} and v shape {vs}"
        )
    try:
        batch = tuple(np.broadcast_shapes(qs[:-2], ks[:-2], vs[:-2]))
    except ValueError:
        raise ValueError(
            f"the batch dimensions of q, k and v must broadcast together, got q shape {qs}, "
            f"k shape {ks} and v shape {vs}"
        ) from None
    return batch, qs[-2], ks[-2], qs[-1]


def _broadcast_onto(name: Any, shape: Any, score_shape: Any) -> Any:
    """The scores' shape after adding ``name``; its last two dims must fit (Lq, Lk)."""
    lq, lk = score_shape[-2:]
    message = (
        f"{name} must be broadcastable to (..., Lq, Lk) = (..., {lq}, {lk}), "
        f"got {name} shape {shape} for scores of shape {score_shape}"
    )
    try:
        out = tuple(np.broadcast_shapes(shape, score_shape))
    except ValueError:
        raise ValueError(message) from None
    if out[-2:] != (lq, lk):
        raise ValueError(message)
    return out


# --- backends -------------------------------------------------------------------------------------


class _NumpyOps:
    def real(self, x: Any, name: Any) -> Any:
        try:
            arr = np.asarray(x)
        except Exception as exc:
            kind = type(x).__name__
            raise TypeError(f"{name} must be an array of real numbers, got {kind}") from exc
        if arr.dtype == np.bool_ or arr.dtype.kind not in "iuf":
            kind = type(x).__name__
            raise TypeError(f"{name} must hold real numbers, got {kind} of dtype {arr.dtype}")
        return arr

    def boolean(self, mask: Any) -> Any:
        try:
            arr = np.asarray(mask)
        except Exception as exc:  # ragged lists and the like
            kind = type(mask).__name__
            raise TypeError(
                f"mask must be a boolean array (True = may attend), got {kind}"
            ) from exc
        if arr.dtype != np.bool_:
            raise TypeError(
                f"mask must be a boolean array (True = may attend), got dtype {arr.dtype}; "
                "for a 0/1 mask pass mask == 1, for an additive mask pass it as bias"
            )
        return arr

    def compute_dtype(self, *arrays: Any) -> Any:
        dt = np.result_type(*(a for a in arrays if a is not None))
        return dt if dt.kind == "f" else np.dtype(np.float64)

    def cast(self, x: Any, dtype: Any) -> Any:
        return x.astype(dtype, copy=False)

    def work_dtype(self, dtype: Any) -> Any:
        return np.dtype(np.float32) if dtype.itemsize < 4 else dtype

    def matmul(self, a: Any, b: Any) -> Any:
        return np.matmul(a, b)

    def swap_last(self, x: Any) -> Any:
        return np.swapaxes(x, -1, -2)

    def broadcast(self, x: Any, shape: Any) -> Any:
        return np.broadcast_to(x, shape)

    def where(self, mask: Any, x: Any, fill: Any) -> Any:
        return np.where(mask, x, np.array(fill, dtype=x.dtype))

    def max_last(self, x: Any) -> Any:
        return np.max(x, axis=-1, keepdims=True)

    def sum_last(self, x: Any) -> Any:
        return np.sum(x, axis=-1, keepdims=True)

    def exp(self, x: Any) -> Any:
        return np.exp(x)

    def any_last(self, x: Any) -> Any:
        return np.any(x, axis=-1)

    def all(self, x: Any) -> Any:
        return bool(np.all(x))

    def first_false(self, x: Any) -> Any:
        return tuple(int(i) for i in np.argwhere(~x)[0])

    def any_neginf(self, x: Any) -> Any:
        return bool(np.any(np.isneginf(x)))

    def any_posinf_or_nan(self, x: Any) -> Any:
        return bool(np.any(np.isposinf(x) | np.isnan(x)))


class _TorchOps:
    def __init__(self) -> None:
        self.torch = sys.modules["torch"]

    def real(self, x: Any, name: Any) -> Any:
        if not isinstance(x, self.torch.Tensor):
            raise TypeError(
                f"{name} must be a torch tensor like the other inputs (mixing NumPy and torch "
                f"is refused), got {type(x).__name__}"
            )
        if x.dtype == self.torch.bool or x.is_complex():
            raise TypeError(f"{name} must hold real numbers, got Tensor of dtype {x.dtype}")
        return x

    def boolean(self, mask: Any) -> Any:
        if mask.dtype != self.torch.bool:
            raise TypeError(
                f"mask must be a boolean tensor (True = may attend), got dtype {mask.dtype}; "
                "for a 0/1 mask pass mask == 1, for an additive mask pass it as bias"
            )
        return mask

    def compute_dtype(self, *tensors: Any) -> Any:
        t = self.torch
        dt: Any = None
        for x in tensors:
            if x is not None:
                dt = x.dtype if dt is None else t.promote_types(dt, x.dtype)
        return dt if dt.is_floating_point else t.get_default_dtype()

    def cast(self, x: Any, dtype: Any) -> Any:
        return x.to(dtype)

    def work_dtype(self, dtype: Any) -> Any:
        return self.torch.float32 if dtype.itemsize < 4 else dtype

    def matmul(self, a: Any, b: Any) -> Any:
        return self.torch.matmul(a, b)

    def swap_last(self, x: Any) -> Any:
        return x.transpose(-1, -2)

    def broadcast(self, x: Any, shape: Any) -> Any:
        return x.expand(shape)

    def where(self, mask: Any, x: Any, fill: Any) -> Any:
        return x.masked_fill(~mask, fill)

    def max_last(self, x: Any) -> Any:
        return x.amax(dim=-1, keepdim=True)

    def sum_last(self, x: Any) -> Any:
        return x.sum(dim=-1, keepdim=True)

    def exp(self, x: Any) -> Any:
        return self.torch.exp(x)

    def any_last(self, x: Any) -> Any:
        return x.any(dim=-1)

    def all(self, x: Any) -> Any:
        return bool(x.all())

    def first_false(self, x: Any) -> Any:
        return tuple(int(i) for i in self.torch.nonzero(~x)[0].tolist())

    def any_neginf(self, x: Any) -> Any:
        return bool(self.torch.isneginf(x).any())

    def any_posinf_or_nan(self, x: Any) -> Any:
        t = self.torch
        return bool((t.isposinf(x) | t.isnan(x)).any())
