"""CoPE, contextual position encoding (Golovneva et al., 2024): positions counted by gates on
the queries and keys. Experimental, like the other schemes of the research frontier page
(:mod:`posenc.frontier`); a module of its own because it reads queries and keys, not distances.
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from . import _rope_torch
from ._array import _describe, check_memory, check_scalar, compiling, is_torch
from ._typing import ArrayLike, FloatArray

if TYPE_CHECKING:
    from ._typing import Tensor

__all__ = ["cope_bias"]


@overload
def cope_bias(q: Tensor, k: Tensor, pos_emb: Tensor, *, scale: float | None = ...) -> Tensor: ...
@overload
def cope_bias(
    q: ArrayLike, k: ArrayLike, pos_emb: ArrayLike, *, scale: float | None = ...
) -> FloatArray: ...
def cope_bias(
    q: Tensor | ArrayLike,
    k: Tensor | ArrayLike,
    pos_emb: Tensor | ArrayLike,
    *,
    scale: float | None = None,
) -> Tensor | FloatArray:
    """CoPE: contextual position logits of each query and key (Golovneva et al., 2024).
    Experimental.

    Parameters
    ----------
    q : array of shape (..., q_len, dim)
        Queries of one head (floating). The queries are the last ``q_len`` of the keys.
    k : array of shape (..., k_len, dim)
        Keys, with ``k_len >= q_len``. The leading axes of ``q`` and ``k`` broadcast against
        each other (as NumPy does, in both libraries).
    pos_emb : array of shape (npos, dim)
        The learned embeddings ``e[0] .. e[npos - 1]`` of integer positions (the reference code
        stores the transpose, ``(1, dim, npos)``).
    scale : float, optional
        Gates are ``sigmoid(scale * q_i . k_j)``. Default ``1 / sqrt(dim)``, as the authors'
        code does; the paper's formula writes ``sigmoid(q_i . k_j)`` (``scale=1``).

    Returns
    -------
    array of shape (..., q_len, k_len), the input's library and floating dtype
        ``z[i, j] = q_i . e[p_ij]`` for keys at or before the query, ``-inf`` after it (the
        causal mask CoPE assumes). ``p_ij = min(sum_{t=j..i} g_it, npos - 1)`` and ``e[p]``
        interpolates linearly between ``e[floor p]`` and ``e[ceil p]``. Add it to ``q . k``
        (the authors' code then divides the sum by ``sqrt(dim)``).

    Raises
    ------
    TypeError
        An argument not a floating array, NumPy and tensors mixed, ``scale`` not real.
    ValueError
        Shapes that do not match (leading axes of ``q`` and ``k`` that do not broadcast), a
        result past the memory of the device (refused before allocating), ``k_len < q_len``,
        an empty ``pos_emb``, ``scale`` not finite,
        ``q``, ``k`` or ``pos_emb`` holding inf or nan, products ``q . k`` or ``q . e`` that
        overflow the working dtype into nan (not checked under ``torch.compile``, ``torch.func``
        transforms or on the meta device, which cannot read values).

    References
    ----------
    Golovneva, Wang, Weston and Sukhbaatar, "Contextual Position Encoding: Learning to Count
    What's Important", arXiv:2405.18719 (v2); code: facebookresearch/RAM, projects/cope.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> q = np.zeros((3, 2))
    >>> k = np.zeros((3, 2))
    >>> e = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    >>> q[:, 0] = 1.0   # q . e[p] = p: the bias shows the positions
    >>> np.round(posenc.cope_bias(q, k, e), 3)   # every gate sigmoid(0) = 0.5
    array([[ 0.5, -inf, -inf],
           [ 1. ,  0.5, -inf],
           [ 1.5,  1. ,  0.5]])
    """
    torch_in = is_torch(q)
    arrays = []
    for name, value in (("q", q), ("k", k), ("pos_emb", pos_emb)):
        if is_torch(value) != torch_in:
            raise TypeError(
                f"q, k and pos_emb must all be tensors or all NumPy arrays; {name} is "
                f"{_describe(value)}"
            )
        arrays.append(_floating(value, name, torch_in))
    qa, ka, ea = arrays
    if qa.ndim < 2 or ka.ndim < 2 or ea.ndim != 2:
        raise ValueError(
            "q and k must have shape (..., seq, dim) and pos_emb (npos, dim), got shapes "
            f"q {tuple(qa.shape)}, k {tuple(ka.shape)}, pos_emb {tuple(ea.shape)}"
        )
    dim = qa.shape[-1]
    if ka.shape[-1] != dim or ea.shape[-1] != dim or dim == 0:
        raise ValueError(
            f"q, k and pos_emb must share a last axis dim > 0, got q {tuple(qa.shape)}, "
            f"k {tuple(ka.shape)}, pos_emb {tuple(ea.shape)}"
        )
    if torch_in and not (qa.device == ka.device == ea.device):
        raise ValueError(
            f"q, k and pos_emb must be on one device, got q on {qa.device}, k on {ka.device}, "
            f"pos_emb on {ea.device}"
        )
    q_len, k_len, npos = qa.shape[-2], ka.shape[-2], ea.shape[0]
    if k_len < q_len:
        raise ValueError(
            f"k must hold at least as many keys as q has queries, got {k_len} < {q_len}"
        )
    if npos == 0:
        raise ValueError("pos_emb must hold at least one position embedding, got npos = 0")
    try:  # the leading axes broadcast as NumPy does, in both libraries
        lead = tuple(np.broadcast_shapes(tuple(qa.shape[:-2]), tuple(ka.shape[:-2])))
    except ValueError:
        raise ValueError(
            f"q and k must have leading axes that broadcast together, got q {tuple(qa.shape)} "
            f"and k {tuple(ka.shape)}"
        ) from None
    double = not torch_in or sys.modules["torch"].float64 in (qa.dtype, ka.dtype, ea.dtype)
    check_memory(  # the scores (..., q_len, k_len) and q . e (..., q_len, npos), in the work dtype
        math.prod(lead) * q_len * (k_len + npos) * (8 if double else 4),
        what=f"cope_bias: q {tuple(qa.shape)}, k {tuple(ka.shape)}, pos_emb {tuple(ea.shape)}",
        device=qa.device if torch_in else None,
    )
    s = 1.0 / math.sqrt(dim) if scale is None else check_scalar(scale, name="scale")
    if torch_in:
        return _cope_torch(qa, ka, ea, s, lead, npos)
    work = np.result_type(qa, ka, ea, np.float64)
    qa, ka, ea = (x.astype(work, copy=False) for x in (qa, ka, ea))
    logits = _dot(qa, np.swapaxes(ka, -1, -2))  # (..., q, k); a nan is refused below
    i = np.arange(q_len)[:, None] + (k_len - q_len)
    future = np.arange(k_len)[None, :] > i  # (q, k)
    with np.errstate(over="ignore"):
        gates = np.where(future, 0.0, 1.0 / (1.0 + np.exp(-s * logits)))
    pos = np.minimum(np.flip(np.cumsum(np.flip(gates, -1), -1), -1), npos - 1)
    _check_products(bool(np.isnan(logits).any()), "q . k", work)
    lo = np.floor(pos).astype(np.int64)
    hi = np.ceil(pos).astype(np.int64)
    with np.errstate(over="ignore", invalid="ignore"):  # a nan is refused below
        at_int = _dot(qa, ea.T)  # (..., q, npos): q_i . e[n] for every integer n
        z_lo = np.take_along_axis(at_int, lo, -1)
        z_hi = np.take_along_axis(at_int, hi, -1)
        w = pos - lo
        z = np.where(w == 0, z_lo, z_hi * w + z_lo * (1 - w))
    _check_products(bool(np.isnan(z).any()), "q . pos_emb", work)
    out_dtype = np.result_type(np.asarray(q).dtype, np.asarray(k).dtype, np.asarray(pos_emb).dtype)
    return np.where(future, -np.inf, z).astype(out_dtype, copy=False)


def _dot(a: Any, b: Any) -> Any:
    """``a @ b`` for NumPy arrays (..., m, d) and (..., d, n), where a sum that meets +inf and
    -inf is nan on every machine. A BLAS that fuses multiply and add (FMA) rounds
    ``fma(x, -y, inf)`` to inf, not nan, so one machine gave inf (a wrong value) where another
    gave nan (refused): the entries that are not finite are summed again term by term."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = a @ b
        bad = ~np.isfinite(out)
        if bad.any():
            lead = out.shape[:-2]
            rows = np.broadcast_to(a, lead + a.shape[-2:])
            cols = np.broadcast_to(np.swapaxes(b, -1, -2), lead + (b.shape[-1], b.shape[-2]))
            at = np.nonzero(bad)
            out[bad] = (rows[at[:-1]] * cols[at[:-2] + at[-1:]]).sum(-1)
    return out


def _check_products(nan: bool, what: str, dtype: Any) -> None:
    """Refuse a ``q . k`` or ``q . e`` that overflowed into nan (inf - inf in the sum)."""
    if nan:
        raise ValueError(
            f"q, k and pos_emb are too large: {what} overflows {dtype} (a sum of +inf and -inf "
            "gives nan); scale q, k and pos_emb down"
        )


def _floating(value: Any, name: str, torch_in: bool) -> Any:
    if torch_in:
        if not value.is_floating_point():
            raise TypeError(f"{name} must be a floating tensor, got {_describe(value)}")
        torch = sys.modules["torch"]
        if (
            value.device.type != "meta"
            and not compiling()
            and not _rope_torch.functorch_active()  # vmap reads no values
            and not bool(torch.isfinite(value).all())
        ):
            raise ValueError(f"{name} must be finite, got a tensor holding inf or nan")
        return value
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be a floating array, got {_describe(value)}")
    try:
        arr = np.asarray(value)
    except Exception as exc:
        raise TypeError(f"{name} must be a floating array, got {_describe(value)}") from exc
    if arr.dtype.kind != "f":
        raise TypeError(f"{name} must be a floating array, got {_describe(arr)}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite, got an array holding inf or nan")
    return arr


def _cope_torch(qa: Any, ka: Any, ea: Any, s: float, lead: tuple[int, ...], npos: int) -> Any:
    torch = sys.modules["torch"]
    work = torch.promote_types(torch.promote_types(qa.dtype, ka.dtype), ea.dtype)
    out_dtype = work
    work = torch.promote_types(work, torch.float32)
    qa, ka, ea = qa.to(work), ka.to(work), ea.to(work)
    q_len, k_len = qa.shape[-2], ka.shape[-2]
    logits = qa @ ka.transpose(-1, -2)
    i = torch.arange(q_len, device=qa.device)[:, None] + (k_len - q_len)
    future = torch.arange(k_len, device=qa.device)[None, :] > i
    gates = torch.where(future, 0.0, torch.sigmoid(s * logits))
    pos = gates.flip(-1).cumsum(-1).flip(-1).clamp(max=npos - 1)
    check = qa.device.type != "meta" and not compiling() and not _rope_torch.functorch_active()
    if check:
        _check_products(bool(logits.isnan().any()), "q . k", work)
    lo = pos.floor()
    hi = pos.ceil()
    at_int = (qa @ ea.transpose(-1, -2)).expand(*lead, q_len, npos)  # gather: no broadcasting
    z_lo = at_int.gather(-1, lo.long())
    z_hi = at_int.gather(-1, hi.long())
    w = pos - lo
    z = torch.where(w == 0, z_lo, z_hi * w + z_lo * (1 - w))
    if check:
        _check_products(bool(z.isnan().any()), "q . pos_emb", work)
    return torch.where(future, -math.inf, z).to(out_dtype)
