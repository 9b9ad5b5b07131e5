"""Position without a position encoding: hybrids and data-dependent attention.

The attention layers of many hybrid models carry no position encoding at all (Jamba,
Nemotron-H, Granite 4.0-H, Kimi Linear); their recurrent layers (Mamba-2, DeltaNet) know order
because every step multiplies the state by a transition that depends on the token. Three
attention variants put such a transition into attention itself, and are position schemes of
their own:

* the **Forgetting Transformer** (FoX, Lin et al. 2025): a forget gate ``f_t`` per token adds
  ``D_ij = sum_{l=j+1}^{i} log f_l`` to the score of query ``i`` and key ``j``
  (:func:`forgetting_bias`); a constant gate is ALiBi, and the same matrix is the decay mask of
  Mamba-2's state-space duality;
* **stick-breaking attention** (Tan et al. 2025): weights ``A_ij = s_ij prod_{j<k<i} (1 - s_ik)``
  with ``s = sigmoid(logits)``, no softmax: the nearest key with a high logit takes the stick
  (:func:`stick_breaking_weights`);
* **PaTH** (Yang et al. 2025): ``score_ij = q_i^T H_i H_{i-1} ... H_{j+1} k_j`` with
  Householder-like ``H_t = I - beta_t w_t w_t^T`` (:func:`path_scores`); RoPE is the case of a
  fixed rotation per step.

:func:`hybrid_attention` tells, for a transformers model type, whether its attention layers
rotate (read from transformers 5.23's code and checked by running small models).
All three functions compute in float64 and return float64 (NumPy) or the input's float dtype
(torch); each is checked against a loop-by-loop oracle of its paper's formula
(tests/test_hybrid.py).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from . import _rope_torch
from ._array import _describe, check_memory, compiling, is_torch

if TYPE_CHECKING:
    from ._typing import ArrayLike, FloatArray, Tensor

__all__ = ["forgetting_bias", "stick_breaking_weights", "path_scores", "hybrid_attention"]


def _real(x: Any, name: str, *, min_ndim: int) -> tuple[Any, bool]:
    """A finite real array or tensor with at least ``min_ndim`` axes, as float64."""
    if is_torch(x):
        torch = sys.modules["torch"]
        if x.dtype == torch.bool or x.is_complex():
            raise TypeError(f"{name} must hold real numbers, got {_describe(x)}")
        _check_copy(tuple(x.shape), name, x.device)  # an expanded view copied whole
        out = x.to(torch.float64)
        if (
            out.device.type != "meta"
            and not compiling()  # reading the values would be a data-dependent branch
            and not _rope_torch.functorch_active()  # nor can vmap read them
            and not bool(torch.isfinite(out).all())
        ):
            raise ValueError(f"{name} must be finite, got a tensor holding inf or nan")
        torch_in = True
    else:
        if isinstance(x, (str, bytes)) or x is None or np.isscalar(x):
            raise TypeError(f"{name} must be an array of real numbers, got {_describe(x)}")
        try:
            arr = np.asarray(x)
        except Exception as exc:  # ragged lists
            raise TypeError(f"{name} must be an array of real numbers, got {_describe(x)}") from exc
        if arr.dtype == np.bool_ or arr.dtype.kind not in "iuf":
            raise TypeError(f"{name} must hold real numbers, got {_describe(arr)}")
        _check_copy(arr.shape, name, None)  # a broadcast view copied whole
        out = arr.astype(np.float64)
        if not np.isfinite(out).all():
            raise ValueError(f"{name} must be finite, got an array holding inf or nan")
        torch_in = False
    if out.ndim < min_ndim:
        shape = "(..., seq)" if min_ndim == 1 else "(..., seq, seq)"
        raise ValueError(f"{name} must have shape {shape}, got shape {tuple(out.shape)}")
    return out, torch_in


def _check_copy(shape: tuple[int, ...], name: str, device: Any) -> None:
    check_memory(math.prod(shape) * 8, what=f"{name} of shape {shape} (as float64)", device=device)


def _check_square(lead: tuple[int, ...], n: int, x: Any, torch_in: bool, what: str) -> None:
    """Refuse, before allocating, a float64 result of shape ``lead + (n, n)`` past the memory of
    ``x``'s device, naming ``what`` (the argument and its shape)."""
    check_memory(math.prod(lead) * n * n * 8, what=what, device=x.device if torch_in else None)


def _out_dtype(x: Any, torch_in: bool) -> Any:
    if torch_in:
        torch = sys.modules["torch"]
        return x.dtype if x.is_floating_point() else torch.get_default_dtype()
    return np.float64


def _causal(n: int, like: Any, torch_in: bool, *, strict: bool = False) -> Any:
    """``mask[i, j] = j <= i`` (``j < i`` with ``strict``), on ``like``'s device."""
    if torch_in:
        torch = sys.modules["torch"]
        return torch.ones(n, n, dtype=torch.bool, device=like.device).tril(-1 if strict else 0)
    return np.tri(n, n, -1 if strict else 0, dtype=bool)


# --- Forgetting Transformer --------------------------------------------------------------------


@overload
def forgetting_bias(log_forget: Tensor) -> Tensor: ...
@overload
def forgetting_bias(log_forget: ArrayLike) -> FloatArray: ...
def forgetting_bias(log_forget: Tensor | ArrayLike) -> Tensor | FloatArray:
    """The Forgetting Transformer's bias ``D_ij = sum_{l=j+1}^{i} log f_l`` (Lin et al., 2025).

    Experimental. Added to the attention logits before the softmax: a key ``j`` loses the log
    of every forget gate between it and the query ``i`` (the query's own gate included, the
    key's not). ``D_ii = 0``; keys after the query get ``-inf`` (the causal mask). With a
    constant gate ``log f = -m`` it is ALiBi's ``-m (i - j)``; with ``log f_l = dt_l A`` it is
    the decay mask of a Mamba-2 (SSD) layer.

    Parameters
    ----------
    log_forget : array or tensor of shape (..., seq)
        ``log f_t``, usually ``logsigmoid`` of a projection of token ``t`` (any real values are
        accepted; the paper's gates are <= 0). One row per head and batch element.

    Returns
    -------
    array or tensor of shape (..., seq, seq)
        ``D[..., i, j]``; float64 for NumPy input, the input's float dtype for a tensor (the
        default dtype for an integer tensor), on its device.

    Raises
    ------
    TypeError
        ``log_forget`` not real numbers.
    ValueError
        ``log_forget`` not finite (not checked under ``torch.compile`` or ``torch.func``
        transforms, which cannot read values) or 0-d; a result past the memory of its
        device (refused before allocating).

    Notes
    -----
    Computed as ``c_i - c_j`` with ``c = cumsum(log f)`` in float64 (the papers' kernels do the
    same in float32): for ``seq * max|log f| < 2**20`` the error is below ``2**-32``.

    References
    ----------
    Lin, Nikishin, He and Courville, "Forgetting Transformer: Softmax Attention with a Forget
    Gate", ICLR 2025, arXiv:2503.02130.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> posenc.forgetting_bias(np.log([0.5, 0.5, 0.25]))
    array([[ 0.        ,        -inf,        -inf],
           [-0.69314718,  0.        ,        -inf],
           [-2.07944154, -1.38629436,  0.        ]])
    """
    g, torch_in = _real(log_forget, "log_forget", min_ndim=1)
    n = int(g.shape[-1])
    shape = tuple(g.shape)
    _check_square(shape[:-1], n, g, torch_in, f"forgetting_bias: log_forget of shape {shape}")
    if torch_in:
        torch = sys.modules["torch"]
        c = torch.cumsum(g, dim=-1)
        d = c[..., :, None] - c[..., None, :]
        d = d.masked_fill(~_causal(n, g, True), float("-inf"))
        return d.to(_out_dtype(log_forget, True))
    c = np.cumsum(g, axis=-1)
    d = c[..., :, None] - c[..., None, :]
    out: FloatArray = np.where(_causal(n, g, False), d, -np.inf)
    return out


# --- stick-breaking attention ------------------------------------------------------------------


def _logsigmoid(z: Any, torch_in: bool) -> Any:
    if torch_in:
        return sys.modules["torch"].nn.functional.logsigmoid(z)
    return -np.logaddexp(0.0, -z)


@overload
def stick_breaking_weights(logits: Tensor, *, attend_current: bool = ...) -> Tensor: ...
@overload
def stick_breaking_weights(logits: ArrayLike, *, attend_current: bool = ...) -> FloatArray: ...
def stick_breaking_weights(
    logits: Tensor | ArrayLike, *, attend_current: bool = False
) -> Tensor | FloatArray:
    """Stick-breaking attention weights (Tan et al., 2025): the nearest strong key wins.

    Experimental. With ``s_ij = sigmoid(z_ij)``, query ``i`` walks back from the nearest key and
    breaks off a share of what is left of a unit stick at each one:
    ``A_ij = s_ij prod_{j<k<i} (1 - s_ik)`` for ``j < i`` (``k <= i`` and ``j <= i`` with
    ``attend_current``). No softmax and no position encoding: the order of the keys is in the
    product. The weights of a row sum to at most 1; ``1 - A.sum(-1)`` is what no key took.

    Parameters
    ----------
    logits : array or tensor of shape (..., seq, seq)
        ``z_ij`` (usually ``q_i . k_j / sqrt(d)``); entries with ``j > i`` (and ``j = i``
        unless ``attend_current``) are ignored.
    attend_current : bool, default False
        Let the query attend to its own key (the paper: keys before the query only).

    Returns
    -------
    array or tensor of shape (..., seq, seq)
        ``A``, zero where the query may not look; float64 for NumPy input, the input's float
        dtype for a tensor.

    Raises
    ------
    TypeError
        ``logits`` not real numbers, ``attend_current`` not a bool.
    ValueError
        ``logits`` not finite (not checked under ``torch.compile`` / ``torch.func``) or not
        of shape ``(..., seq, seq)``; a result past the memory of its device (refused before
        allocating).

    Notes
    -----
    Computed in log space, ``log A_ij = logsigmoid(z_ij) + sum_k logsigmoid(-z_ik)``, in
    float64, so long rows neither underflow early nor lose the small weights.

    References
    ----------
    Tan, Yang, Courville, Panda and Shen, "Scaling Stick-Breaking Attention: An Efficient
    Implementation and In-depth Study", ICLR 2025, arXiv:2410.17980.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> z = np.zeros((3, 3))                      # every s = 1/2
    >>> posenc.stick_breaking_weights(z)
    array([[0.  , 0.  , 0.  ],
           [0.5 , 0.  , 0.  ],
           [0.25, 0.5 , 0.  ]])
    """
    if not isinstance(attend_current, (bool, np.bool_)):
        raise TypeError(
            f"attend_current must be a bool, got {attend_current!r} "
            f"({type(attend_current).__name__})"
        )
    z, torch_in = _real(logits, "logits", min_ndim=2)
    n = int(z.shape[-1])
    if z.shape[-2] != n:
        raise ValueError(f"logits must have shape (..., seq, seq), got shape {tuple(z.shape)}")
    shape = tuple(z.shape)  # a broadcast view may hold far fewer values than its shape says
    _check_square(shape[:-2], n, z, torch_in, f"stick_breaking_weights: logits of shape {shape}")
    valid = _causal(n, z, torch_in, strict=not attend_current)
    keep = _logsigmoid(-z, torch_in)  # log(1 - s): what a key leaves on the stick
    if torch_in:
        torch = sys.modules["torch"]
        keep = keep.masked_fill(~valid, 0.0)
        after = torch.flip(torch.cumsum(torch.flip(keep, [-1]), -1), [-1]) - keep  # sum_{k>j}
        log_a = _logsigmoid(z, True) + after
        out = torch.where(valid, torch.exp(log_a), torch.zeros((), dtype=z.dtype, device=z.device))
        return out.to(_out_dtype(logits, True))
    keep = np.where(valid, keep, 0.0)
    after = np.cumsum(keep[..., ::-1], axis=-1)[..., ::-1] - keep
    weights: FloatArray = np.where(valid, np.exp(_logsigmoid(z, False) + after), 0.0)
    return weights


# --- PaTH --------------------------------------------------------------------------------------


@overload
def path_scores(q: Tensor, k: Tensor, w: Tensor, beta: Tensor) -> Tensor: ...
@overload
def path_scores(q: ArrayLike, k: ArrayLike, w: ArrayLike, beta: ArrayLike) -> FloatArray: ...
def path_scores(
    q: Tensor | ArrayLike, k: Tensor | ArrayLike, w: Tensor | ArrayLike, beta: Tensor | ArrayLike
) -> Tensor | FloatArray:
    """PaTH attention logits ``q_i^T H_i H_{i-1} ... H_{j+1} k_j`` (Yang et al., 2025).

    Experimental. Each token ``t`` brings a Householder-like matrix
    ``H_t = I - beta_t w_t w_t^T``; the key of token ``j`` reaches query ``i`` through the
    product of the matrices of the tokens after it, up to and including ``i``. ``H`` depends on
    the data, so the transform between two positions is not a function of their distance, as
    it is in RoPE (where every step is the same rotation). With ``beta = 0`` the scores are
    ``q_i . k_j`` (NoPE); with a unit ``w_t`` and ``beta_t = 2``, ``H_t`` is a reflection.
    Scores of future keys are ``-inf``; scale and softmax as usual.

    Parameters
    ----------
    q, k : array or tensor of shape (..., seq, d)
        Queries and keys.
    w : array or tensor of shape (..., seq, d)
        The direction of each token's transform (the paper L2-normalises it).
    beta : array or tensor of shape (..., seq)
        Its strength (the paper: ``2 sigmoid(.)`` in (0, 2)).

    Returns
    -------
    array or tensor of shape (..., seq, seq)
        float64 for NumPy input, ``q``'s float dtype for tensors.

    Raises
    ------
    TypeError
        An argument not real, tensors mixed with arrays.
    ValueError
        An argument not finite (not checked under ``torch.compile`` / ``torch.func``); shapes
        that do not agree;
        scores past the memory of the device (refused before allocating).

    Notes
    -----
    ``O(seq^2 d)``: the keys are carried forward one token at a time,
    ``K <- K - beta_t w_t (w_t^T K)`` for every key before ``t``, and row ``t`` of the scores is
    read off. The papers' kernels use a blockwise (UT / WY) form; the values agree.

    References
    ----------
    Yang, Shen, Wen, Tan, Mishra, Ren, Panda and Kim, "PaTH Attention: Position Encoding via
    Accumulating Householder Transformations", arXiv:2505.16381.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> q = k = np.eye(2)[[0, 0, 0]]                  # three tokens, all along e0
    >>> w = np.eye(2)[[0, 0, 0]]                      # every H flips e0
    >>> posenc.path_scores(q, k, w, beta=np.full(3, 2.0))
    array([[  1., -inf, -inf],
           [ -1.,   1., -inf],
           [  1.,  -1.,   1.]])
    """
    arrays = [
        _real(a, name, min_ndim=m)
        for a, name, m in ((q, "q", 2), (k, "k", 2), (w, "w", 2), (beta, "beta", 1))
    ]
    kinds = {t for _, t in arrays}
    if len(kinds) > 1:
        raise TypeError("q, k, w and beta must all be NumPy arrays or all be torch tensors")
    (qq, torch_in), (kk, _), (ww, _), (bb, _) = arrays
    if not (qq.shape == kk.shape == ww.shape) or tuple(bb.shape) != tuple(qq.shape[:-1]):
        raise ValueError(
            "q, k and w must have one shape (..., seq, d) and beta (..., seq); got "
            f"q {tuple(qq.shape)}, k {tuple(kk.shape)}, w {tuple(ww.shape)}, beta {tuple(bb.shape)}"
        )
    n = int(qq.shape[-2])
    shape = tuple(qq.shape)
    _check_square(shape[:-2], n, qq, torch_in, f"path_scores: q and k of shape {shape}")
    if torch_in:
        torch = sys.modules["torch"]
        rows = []
        carried = kk.clone()
        for t in range(n):
            wt = ww[..., t, :]  # (..., d)
            proj = torch.einsum("...d,...jd->...j", wt, carried[..., :t, :])
            carried[..., :t, :] -= bb[..., t, None, None] * proj[..., :, None] * wt[..., None, :]
            rows.append(torch.einsum("...d,...jd->...j", qq[..., t, :], carried))
        s = torch.stack(rows, dim=-2) if rows else qq.new_zeros(*qq.shape[:-1], 0)
        s = s.masked_fill(~_causal(n, s, True), float("-inf"))
        return s.to(_out_dtype(q, True))
    carried_np = kk.copy()
    rows_np = []
    for t in range(n):
        wt = ww[..., t, :]
        proj = np.einsum("...d,...jd->...j", wt, carried_np[..., :t, :])
        carried_np[..., :t, :] -= bb[..., t, None, None] * proj[..., :, None] * wt[..., None, :]
        rows_np.append(np.einsum("...d,...jd->...j", qq[..., t, :], carried_np))
    out = np.stack(rows_np, axis=-2) if rows_np else np.zeros(qq.shape[:-1] + (0,))
    scores: FloatArray = np.where(_causal(n, out, False), out, -np.inf)
    return scores


# --- hybrids in transformers -------------------------------------------------------------------


@dataclass(frozen=True)
class HybridRow:
    """How a hybrid model type of transformers 5.23 handles position.

    ``attention``: ``"rope"`` (its attention layers rotate q and k) or ``"none"`` (NoPE
    attention: order comes only from the recurrent layers and the causal mask).
    ``mixer``: the non-attention layers. ``source``: the transformers module that decides.
    """

    attention: str
    mixer: str
    source: str


# Read from transformers 5.23's modeling code and checked by tests/test_hybrid.py, which runs a
# small model of each type twice with different position_ids: the logits move only where the
# attention layers rotate.
HYBRID_ROWS: Mapping[str, HybridRow] = {
    "jamba": HybridRow("none", "Mamba", "models/jamba"),
    "nemotron_h": HybridRow("none", "Mamba-2", "models/nemotron_h"),
    "granitemoehybrid": HybridRow("none", "Mamba-2", "models/granitemoehybrid"),
    "kimi_linear": HybridRow("none", "Kimi Delta Attention", "models/kimi_linear"),
    "qwen3_next": HybridRow("rope", "Gated DeltaNet", "models/qwen3_next"),
    "falcon_h1": HybridRow("rope", "Mamba-2 (parallel)", "models/falcon_h1"),
    "bamba": HybridRow("rope", "Mamba-2", "models/bamba"),
    "zamba2": HybridRow("rope", "Mamba-2", "models/zamba2"),
    "lfm2": HybridRow("rope", "short convolution", "models/lfm2"),
}


def hybrid_attention(model_type: str) -> HybridRow:
    """Whether the attention layers of a hybrid model type rotate, and what the other layers are.

    Experimental. ``"none"`` for Jamba, Nemotron-H, Granite 4.0-H (``granitemoehybrid`` with its
    default ``position_embedding_type=None``) and Kimi Linear; ``"rope"`` for Qwen3-Next,
    Falcon-H1, Bamba, Zamba2 and LFM2, as transformers 5.23 runs them.

    Parameters
    ----------
    model_type : str
        ``config.json``'s ``model_type``.

    Returns
    -------
    HybridRow

    Raises
    ------
    TypeError
        ``model_type`` not a string.
    ValueError
        A model type that is not in the table.

    Examples
    --------
    >>> import posenc
    >>> posenc.hybrid_attention("jamba").attention, posenc.hybrid_attention("qwen3_next").attention
    ('none', 'rope')
    """
    if not isinstance(model_type, str):
        raise TypeError(f"model_type must be a str, got {_describe(model_type)}")
    row = HYBRID_ROWS.get(model_type)
    if row is None:
        raise ValueError(
            f"model_type {model_type!r} is not in the table; known: {sorted(HYBRID_ROWS)}"
        )
    return row
