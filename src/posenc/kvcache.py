"""Positions inside a KV cache: re-rotating cached keys, StreamingLLM's sinks, learned sinks.

A RoPE model caches its keys *after* rotation: the key of the token at position ``p`` is stored
as ``R(p w) k``. Whatever later changes which positions the cache holds (evicting tokens,
keeping attention sinks, reusing a cached block at another offset) must either leave those
rotations alone (the keys keep their original positions) or move every kept key to its new
position ``p'``. The second is one more rotation: ``R(p' w) k = R((p' - p) w) R(p w) k``, since
rotations by angles about one axis add. :func:`rerotate_keys` applies it with the angle formed
in float64 from the exact difference ``p' - p``.

:func:`streaming_positions` gives the tokens a StreamingLLM cache keeps (the first ``sinks``
tokens and the ``window`` most recent ones) and the positions their keys carry (re-indexed
inside the cache, or the original ones). :func:`sink_softmax` is the softmax of gpt-oss's learned
sinks: one extra logit per head in the denominator, with no key, no value and no position.
"""

from __future__ import annotations

import math
import numbers
import sys
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from . import _rope_torch
from ._array import (
    _describe,
    check_base,
    check_choice,
    check_length,
    check_memory,
    compiling,
    is_torch,
)
from ._typing import ArrayLike, FloatArray, IntArray, Pairing, PositionsLike
from .rope import PAIRINGS, _check_x, _cos_sin, _fit_positions, _rotary_dim, _rotate, _work_dtype
from .rope_scaling import _positive_int, rope_frequencies

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ._typing import Tensor

__all__ = ["rerotate_keys", "streaming_positions", "sink_softmax"]

# Integer positions are subtracted in int64: both must lie in this range so that p' - p cannot
# overflow (and stays exact as a float64 angle factor, |p' - p| <= 2**53).
_MAX_POS = 2**52


@overload
def rerotate_keys(
    k: Tensor,
    from_positions: Tensor | PositionsLike,
    to_positions: Tensor | PositionsLike,
    *,
    base: float = ...,
    pairing: Pairing = ...,
    scaling: Mapping[str, Any] | None = ...,
    rotary_dim: int | None = ...,
    seq_len: int | None = ...,
) -> Tensor: ...
@overload
def rerotate_keys(
    k: ArrayLike,
    from_positions: PositionsLike,
    to_positions: PositionsLike,
    *,
    base: float = ...,
    pairing: Pairing = ...,
    scaling: Mapping[str, Any] | None = ...,
    rotary_dim: int | None = ...,
    seq_len: int | None = ...,
) -> FloatArray: ...
def rerotate_keys(
    k: Tensor | ArrayLike,
    from_positions: Tensor | PositionsLike,
    to_positions: Tensor | PositionsLike,
    *,
    base: float = 10000.0,
    pairing: Pairing = "interleaved",
    scaling: Mapping[str, Any] | None = None,
    rotary_dim: int | None = None,
    seq_len: int | None = None,
) -> Tensor | FloatArray:
    """Move cached, already rotated keys from positions ``p`` to ``p'``: one rotation by ``p' - p``.

    Experimental: the name, signature or results may change in any release.

    Parameters
    ----------
    k : array or tensor of shape (..., seq, dim)
        Keys as a RoPE cache holds them: rotated at ``from_positions`` by :func:`apply_rope`
        (or a framework doing the same) with the same ``base``, ``pairing``, ``scaling`` and
        ``rotary_dim``. Floating (NumPy or torch; float16, bfloat16, float32, float64).
    from_positions, to_positions : int or array of shape (..., seq)
        The positions the keys were rotated at, and the positions they should carry. Each
        follows :func:`apply_rope`'s rule (a Python ``int`` is a count ``0 .. n-1``; arrays line
        up with ``k``'s leading axes from the left). Integer positions must lie within
        ``+-2**52`` (each integer argument, whatever the other's dtype); their difference is
        then exact, also against float positions.
    base, pairing, scaling, rotary_dim, seq_len
        As for :func:`apply_rope`: the rotation the cache was built with. The attention factor
        of yarn and longrope scaling is *not* applied again (the cached keys already carry it).

    Returns
    -------
    array or tensor
        Same shape, dtype, library and device as ``k``: the keys rotated by ``(p' - p) w_i``.

    Raises
    ------
    TypeError
        ``k`` not a floating array, positions not real, NumPy ``k`` with tensor positions.
    ValueError
        Positions that do not fit ``k`` (the message names which), integer positions past
        ``+-2**52``, bad ``pairing``, ``rotary_dim``, ``scaling`` or ``base``.
    RuntimeError
        Under ``torch.compile`` / ``torch.export``: integer positions past ``+-2**52``, tested
        inside the graph (reading them would break it), with the same message. Under
        ``torch.func`` transforms, which can neither read values nor batch such a test, the
        keys moved from or to such a position come out NaN instead.

    See Also
    --------
    apply_rope : the rotation the keys went through.
    streaming_positions : which positions a StreamingLLM cache keeps, and where they move.

    Notes
    -----
    ``R(p' w) = R((p' - p) w) R(p w)`` for every pair; so
    ``rerotate_keys(apply_rope(k, p), p, p2) == apply_rope(k, p2)`` up to rounding. The angle is
    formed in float64 from ``p' - p`` (exact for integer positions), never from ``p'`` and ``p``
    separately: moving a key from ``2**40`` to ``2**40 + 5`` costs no more precision than moving
    it by 5. Exact only when the frequencies are the same as when the keys were cached: with
    ``"dynamic"`` or ``"longrope"`` scaling pass the ``seq_len`` the cache was built with.

    References
    ----------
    Xiao et al., "Efficient Streaming Language Models with Attention Sinks", arXiv:2309.17453.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> k = np.random.default_rng(0).normal(size=(2, 6, 8))     # (heads, seq, dim)
    >>> cached = posenc.apply_rope(k, np.arange(10, 16))
    >>> moved = posenc.rerotate_keys(cached, np.arange(10, 16), 6)  # to 0 .. 5
    >>> bool(np.allclose(moved, posenc.apply_rope(k, 6), atol=1e-12))
    True
    """
    pair = check_choice(pairing, name="pairing", choices=PAIRINGS)
    arr = _check_keys(k)
    rot = _rotary_dim(rotary_dim, arr.shape[-1], what="k's last axis")
    base = check_base(base)
    seq_len = None if seq_len is None else _positive_int(seq_len, "seq_len")
    inv_freq, _ = rope_frequencies(rot, base=base, scaling=scaling, seq_len=seq_len)
    delta = _delta(
        _fit(from_positions, arr, "from_positions"), _fit(to_positions, arr, "to_positions")
    )
    cos, sin = _cos_sin(delta, inv_freq, 1.0, dtype=_work_dtype(arr))
    out: Tensor | FloatArray = _rotate(arr, cos, sin, pairing=pair, rotary_dim=rot)
    return out


def streaming_positions(
    length: int, *, sinks: int, window: int, reindex: bool = True
) -> tuple[IntArray, IntArray]:
    """What a StreamingLLM cache holds after ``length`` tokens, and the positions of its keys.

    Experimental: the name, signature or results may change in any release.

    Parameters
    ----------
    length : int
        Tokens seen so far (all of them cached before eviction), ``>= 0``.
    sinks : int
        The first tokens always kept (StreamingLLM's attention sinks; 4 in the paper), ``>= 0``.
    window : int
        The most recent tokens kept, ``>= 0``.
    reindex : bool, default True
        True: the keys carry their slots in the cache, ``0 .. n-1`` (StreamingLLM); the next
        token then has position ``n``. False: they keep their original positions, and the
        next token has position ``length``.

    Returns
    -------
    kept : numpy.ndarray of shape (n,), int64
        The original positions of the cached tokens, ascending: ``0 .. sinks-1`` and the last
        ``window`` positions (all of them while ``length <= sinks + window``).
    positions : numpy.ndarray of shape (n,), int64
        The positions their keys carry: ``arange(n)`` or ``kept``.

    Raises
    ------
    TypeError, ValueError
        ``length``, ``sinks`` or ``window`` not a non-negative integer (or past ``2**52``);
        ``reindex`` not a bool; more kept tokens than this machine's memory can hold (refused
        before allocating, naming the three sizes).

    See Also
    --------
    rerotate_keys : moves the kept keys from ``kept`` to ``positions``.

    Notes
    -----
    With ``reindex=True`` the largest offset between the next query and any key is
    ``sinks + window``, however long the stream; with original positions it is ``length``.

    References
    ----------
    Xiao et al., "Efficient Streaming Language Models with Attention Sinks", arXiv:2309.17453
    (section 3.2: positions assigned within the cache).

    Examples
    --------
    >>> import posenc
    >>> kept, pos = posenc.streaming_positions(10, sinks=2, window=3)
    >>> kept.tolist(), pos.tolist()
    ([0, 1, 7, 8, 9], [0, 1, 2, 3, 4])
    """
    length = check_length(length, name="length")
    sinks = check_length(sinks, name="sinks")
    window = check_length(window, name="window")
    if not isinstance(reindex, (bool, np.bool_)):
        raise TypeError(f"reindex must be a bool, got {_describe(reindex)}")
    for value, name in ((length, "length"), (sinks, "sinks"), (window, "window")):
        if value > _MAX_POS:
            raise ValueError(f"{name} must be <= 2**52, got {value}")
    head = min(sinks, length)
    start = max(head, length - window)
    n = head + length - start  # before allocating: two int64 arrays of n
    check_memory(
        16 * n,
        what=f"streaming_positions(length={length}, sinks={sinks}, window={window}), keeping "
        f"{n} tokens,",
    )
    kept = np.concatenate([np.arange(head), np.arange(start, length)]).astype(np.int64)
    positions = np.arange(kept.size, dtype=np.int64) if reindex else kept.copy()
    return kept, positions


@overload
def sink_softmax(scores: Tensor, sinks: Tensor | ArrayLike) -> Tensor: ...
@overload
def sink_softmax(scores: ArrayLike, sinks: ArrayLike) -> FloatArray: ...
def sink_softmax(scores: Tensor | ArrayLike, sinks: Tensor | ArrayLike) -> Tensor | FloatArray:
    """Attention weights with a learned sink logit per head (gpt-oss): a softmax over keys + sink.

    Experimental: the name, signature or results may change in any release.

    Parameters
    ----------
    scores : array or tensor of shape (..., heads, q_len, k_len)
        Attention logits (scaled ``q k^T``, plus any mask as ``-inf``), floating.
    sinks : array or tensor of shape (heads,) or ()
        One logit per head (gpt-oss's ``sinks`` parameter), or one for all heads. Finite; a
        sink past the range of the work dtype (``1e39`` with float32 scores) takes its limit:
        all the weight when it is above every key (the keys get 0), none when it is far below.

    Returns
    -------
    array or tensor of shape scores.shape
        ``exp(s_j) / (exp(sink) + sum_j exp(s_j))``: each row sums to less than 1; what is
        missing is the weight given to "no token". Computed in float32 at least (float64 for
        float64 input), returned in ``scores``' dtype, library and device (meta scores: a meta
        result). A row whose keys are all ``-inf`` gets 0 everywhere.

    Raises
    ------
    TypeError
        ``scores`` or ``sinks`` not floating / real, a NumPy ``scores`` with tensor ``sinks``.
    ValueError
        ``scores`` with fewer than 3 axes, ``sinks`` of the wrong shape or not finite (not
        checked under ``torch.compile`` or ``torch.func`` transforms, which cannot read
        values), ``sinks`` on the meta device with ``scores`` that are not, a result larger
        than the device's memory (refused before allocating).

    See Also
    --------
    posenc.attention : plain scaled dot-product attention.

    Notes
    -----
    The sink has no key and no value, so no position: evicting keys from a sliding window never
    moves it, and nothing has to be re-rotated. transformers 5.23 (``models/gpt_oss``) appends
    the sink as one more column of logits, subtracts the row maximum, takes the softmax and drops
    the column; this function computes the same weights, with the sink kept apart from the keys
    (a sink that does not fit the work dtype then gives its limit, not NaN).

    References
    ----------
    OpenAI, "gpt-oss-120b & gpt-oss-20b Model Card", arXiv:2508.10925.

    Examples
    --------
    >>> import numpy as np
    >>> import posenc
    >>> w = posenc.sink_softmax(np.zeros((1, 1, 3)), np.array([0.0]))
    >>> np.round(w, 4)
    array([[[0.25, 0.25, 0.25]]])
    """
    torch_in = is_torch(scores)
    s = _check_scores(scores, torch_in)
    sk = _check_sinks(sinks, s, torch_in)
    shape = tuple(s.shape)
    heads = shape[-3]
    if shape[-1] == 0:  # no keys: all the weight on the sink, none to return
        return s[..., :0].clone() if torch_in else s[..., :0].copy()
    if torch_in:
        torch = sys.modules["torch"]
        work = torch.float64 if s.dtype == torch.float64 else torch.float32
        check_memory(
            math.prod(shape) * (8 if work == torch.float64 else 4),
            what=f"sink_softmax: scores of shape {shape}",
            device=s.device,
        )
        sw = s.to(work)
        # a sink past the work dtype's range becomes +-inf here: the limit, handled below
        col = sk.to(device=s.device, dtype=work).reshape(-1, 1, 1).expand(heads, 1, 1)
        ref = torch.maximum(sw.amax(dim=-1, keepdim=True), col)  # (..., heads, q_len, 1)
        big = torch.finfo(work).max
        ref = ref.clamp(-big, big)  # finite: no inf - inf below
        e = torch.exp(sw - ref)
        den = e.sum(dim=-1, keepdim=True) + torch.exp(col - ref)
        # den is 0 only when every key is -inf and the sink -inf in work: the weights are 0
        return (e / den.clamp_min(torch.finfo(work).tiny)).to(s.dtype)
    work = np.float64 if s.dtype.itemsize >= 8 else np.float32
    check_memory(
        math.prod(shape) * np.dtype(work).itemsize, what=f"sink_softmax: scores of shape {shape}"
    )
    sw = s.astype(work, copy=False)
    with np.errstate(over="ignore"):  # a sink past the work dtype's range: +-inf, the limit
        col = sk.astype(work).reshape(-1, 1, 1)
    big = np.finfo(work).max
    ref = np.clip(np.maximum(sw.max(axis=-1, keepdims=True), col), -big, big)
    with np.errstate(over="ignore", under="ignore"):
        e = np.exp(sw - ref)
        den = e.sum(axis=-1, keepdims=True) + np.exp(col - ref)
    out = e / np.maximum(den, np.finfo(work).tiny)
    return out.astype(s.dtype, copy=False)


# --- helpers -----------------------------------------------------------------------------------


def _check_keys(k: Any) -> Any:
    """``k`` as a floating array or tensor of shape (..., seq, dim), errors naming ``k``."""
    try:
        arr, _ = _check_x(k)
    except (TypeError, ValueError) as exc:
        raise type(exc)(str(exc).replace("x must", "k must", 1)) from None
    return arr


def _fit(positions: Any, k: Any, name: str) -> Any:
    try:
        return _fit_positions(positions, k)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{name}: {exc}") from None


def _delta(p: Any, q: Any) -> Any:
    """``q - p``: int64 when both are integer, else float64; exact either way, since integer
    positions must lie within +-2**52 (checked for each integer argument on its own: against
    float positions an integer past 2**53 would be rounded on its way to float64)."""
    if is_torch(p) or is_torch(q):
        torch = sys.modules["torch"]
        outside = []  # under torch.func: where positions lie past the range (no value is read)
        for t, name in ((p, "from_positions"), (q, "to_positions")):
            if t.is_floating_point() or not t.numel() or t.device.type == "meta":
                continue
            size = t.to(torch.float64).abs()  # exact up to 2**53: enough to compare with 2**52
            if compiling():  # reading the values would be a data-dependent branch: test in-graph
                torch._assert_async(
                    (size <= _MAX_POS).all(), f"{name} must lie within +-2**52 (integer positions)"
                )
            elif _rope_torch.functorch_active():  # vmap reads no values, nor batches an assert
                outside.append(size > _MAX_POS)
            elif bool((size > _MAX_POS).any()):
                worst = t.reshape(-1)[int(size.reshape(-1).argmax())].item()
                raise ValueError(f"{name} must lie within +-2**52 (integer positions), got {worst}")
        ints = not p.is_floating_point() and not q.is_floating_point()
        dtype = torch.int64 if ints and not outside else torch.float64
        delta = q.to(dtype) - p.to(dtype)
        for mask in outside:  # NaN keys where the move is out of range: never a wrong move
            delta = torch.where(mask, math.nan, delta)
        return delta
    for a, name in ((p, "from_positions"), (q, "to_positions")):
        if a.dtype.kind in "iu" and a.size:
            size = np.abs(a.astype(np.float64))
            if float(size.max()) > _MAX_POS:
                worst = a.reshape(-1)[int(size.argmax())]
                raise ValueError(
                    f"{name} must lie within +-2**52 (integer positions), got {int(worst)}"
                )
    if p.dtype.kind in "iu" and q.dtype.kind in "iu":
        return q.astype(np.int64) - p.astype(np.int64)
    return q.astype(np.float64) - p.astype(np.float64)


def _check_scores(scores: Any, torch_in: bool) -> Any:
    if torch_in:
        if not scores.is_floating_point():
            raise TypeError(f"scores must be a floating tensor, got {_describe(scores)}")
        shape = tuple(scores.shape)
    else:
        if scores is None or isinstance(scores, (numbers.Number, str, bytes)):
            raise TypeError(
                f"scores must be a floating array of shape (..., heads, q_len, k_len), "
                f"got {_describe(scores)}"
            )
        try:
            scores = np.asarray(scores)
        except Exception as exc:
            raise TypeError(
                f"scores must be a rectangular floating array, got {type(scores).__name__}"
            ) from exc
        if scores.dtype.kind != "f":
            raise TypeError(f"scores must be a floating array, got dtype {scores.dtype}")
        shape = scores.shape
    if len(shape) < 3:
        raise ValueError(
            f"scores must have shape (..., heads, q_len, k_len), got shape {tuple(shape)}"
        )
    return scores


def _check_sinks(sinks: Any, scores: Any, torch_in: bool) -> Any:
    heads = tuple(scores.shape)[-3]
    if torch_in and compiling() and not isinstance(sinks, bool):
        # dynamo traces no ndarray.dtype: a NumPy array or number becomes a tensor of its dtype
        # first (a Python float: float64), and the tensor checks below refuse what NumPy's would
        torch = sys.modules["torch"]
        if isinstance(sinks, (np.ndarray, np.generic, int)):
            sinks = torch.as_tensor(sinks)
        elif isinstance(sinks, float):
            sinks = torch.as_tensor(sinks, dtype=torch.float64)
    if is_torch(sinks):
        if not torch_in:
            raise TypeError(
                "sinks is a torch tensor but scores is a NumPy array; pass both from one library"
            )
        if sinks.dtype.is_complex or sinks.dtype == sys.modules["torch"].bool:
            raise TypeError(f"sinks must hold real numbers, got {_describe(sinks)}")
        if sinks.device.type == "meta" and scores.device.type != "meta":
            raise ValueError(
                f"sinks is on the meta device (no values) but scores is on {scores.device}; "
                "pass sinks with values"
            )
        if (
            sinks.device.type != "meta"
            and not compiling()  # reading the values would be a data-dependent branch
            and not _rope_torch.functorch_active()  # nor can vmap read them
            and not bool(sys.modules["torch"].isfinite(sinks).all())
        ):
            raise ValueError("sinks must be finite, got a tensor holding inf or nan")
        shape = tuple(sinks.shape)
        out = sinks
    else:
        if sinks is None or isinstance(sinks, (str, bytes, bool)):
            raise TypeError(f"sinks must be an array of shape (heads,), got {_describe(sinks)}")
        try:
            arr = np.asarray(sinks)
        except Exception as exc:
            raise TypeError(
                f"sinks must be an array of real numbers, got {_describe(sinks)}"
            ) from exc
        if arr.dtype.kind not in "iuf":
            raise TypeError(f"sinks must hold real numbers, got {_describe(arr)}")
        if not np.isfinite(arr.astype(np.float64)).all():
            raise ValueError("sinks must be finite, got an array holding inf or nan")
        shape = arr.shape
        out = arr
        if torch_in:
            out = sys.modules["torch"].as_tensor(arr.astype(np.float64), device=scores.device)
    if shape not in ((), (1,), (heads,)):
        raise ValueError(f"sinks must have shape (heads,) = ({heads},) or (), got shape {shape}")
    return out
