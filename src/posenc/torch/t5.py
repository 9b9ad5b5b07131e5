"""``T5RelativeBias``: T5's learned relative position bias, one scalar per bucket and head."""

from __future__ import annotations

import numbers

import torch
from torch import nn

from .._array import _describe, check_dim, check_length
from ..t5 import _check_buckets, t5_bucket
from ._common import check_entries

__all__ = ["T5RelativeBias"]

_INT64_MAX = 2**63 - 1


class T5RelativeBias(nn.Module):
    """Learned relative position bias of T5 (Raffel et al., 2019).

    Holds ``relative_attention_bias``, an ``nn.Embedding(num_buckets, num_heads)`` (the name and
    shape of the Hugging Face parameter, so its weight copies over as is), and looks it up by
    :func:`posenc.t5_bucket` of every key-minus-query distance.

    Parameters
    ----------
    num_heads : int
        Number of attention heads.
    bidirectional : bool, default True
        ``True`` for the encoder, ``False`` for the decoder's self-attention.
    num_buckets : int, default 32
        See :func:`posenc.t5_bucket`.
    max_distance : float, default 128
        See :func:`posenc.t5_bucket`.

    Notes
    -----
    ``forward(q_len, k_len, offset)[0, h, i, j] = W[bucket(j - (offset + i)), h]``. With the
    same weights it equals ``T5Attention.compute_bias(q_len, k_len, past_seen_tokens=offset)`` of
    Hugging Face transformers. Unlike :func:`posenc.alibi_bias`, ``offset`` defaults to 0, as
    ``compute_bias`` does: when decoding with a cache, pass the number of cached tokens.

    Built on the meta device (``with torch.device("meta")``), the table holds no values: after
    ``to_empty(device=...)`` call ``reset_parameters()``. ``torch.compile(fullgraph=True)``
    traces ``forward`` without graph breaks.

    References
    ----------
    Raffel et al., arXiv:1910.10683.

    Examples
    --------
    >>> import torch
    >>> from posenc.torch import T5RelativeBias
    >>> bias = T5RelativeBias(4)
    >>> bias(3, 5).shape                         # (1, heads, queries, keys)
    torch.Size([1, 4, 3, 5])
    >>> bias(1, 5, offset=4).shape               # one new query after 4 cached keys
    torch.Size([1, 4, 1, 5])
    >>> list(bias.state_dict())
    ['relative_attention_bias.weight']
    """

    def __init__(
        self,
        num_heads: int,
        *,
        bidirectional: bool = True,
        num_buckets: int = 32,
        max_distance: float = 128,
    ) -> None:
        super().__init__()
        self.num_heads = check_dim(num_heads, name="num_heads", even=False)
        if not isinstance(bidirectional, bool):
            raise TypeError(f"bidirectional must be a bool, got {_describe(bidirectional)}")
        _check_buckets(num_buckets, max_distance, bidirectional)
        self.bidirectional = bidirectional
        self.num_buckets = int(num_buckets)
        check_entries(
            self.num_buckets,
            self.num_heads,
            what="the table of num_buckets x num_heads",
            itemsize=torch.get_default_dtype().itemsize,
        )
        self.max_distance = max_distance
        self.relative_attention_bias = nn.Embedding(self.num_buckets, self.num_heads)

    def reset_parameters(self) -> None:
        """Draw the bias table again from ``normal(0, 1)``, as ``nn.Embedding`` initialises it.

        Also what to call after meta-device initialisation (``to_empty(device=...)``): with the
        same random seed, the table equals that of a module built directly on the device.
        """
        self.relative_attention_bias.reset_parameters()

    def buckets(self, q_len: int, k_len: int, offset: int = 0) -> torch.Tensor:
        """The ``(q_len, k_len)`` bucket of each query (at ``offset + i``) and key (at ``j``).

        int64, on the module's device; validated as in :meth:`forward`.
        """
        q_len = check_length(q_len, name="q_len")
        k_len = check_length(k_len, name="k_len")
        if isinstance(offset, bool) or not isinstance(offset, numbers.Integral):
            raise TypeError(f"offset must be an integer, got {_describe(offset)}")
        offset = int(offset)
        if abs(offset) + max(q_len, k_len) > _INT64_MAX:
            raise ValueError(
                "offset must keep every key - query distance within int64 "
                f"(|offset| + max(q_len, k_len) <= 2**63 - 1), got offset={offset} with "
                f"q_len={q_len}, k_len={k_len}"
            )
        device = self.relative_attention_bias.weight.device
        query = torch.arange(q_len, dtype=torch.int64, device=device)[:, None] + offset
        key = torch.arange(k_len, dtype=torch.int64, device=device)[None, :]
        return t5_bucket(
            key - query,  # (q_len, k_len)
            bidirectional=self.bidirectional,
            num_buckets=self.num_buckets,
            max_distance=self.max_distance,
        )

    def forward(self, q_len: int, k_len: int, offset: int = 0) -> torch.Tensor:
        """The ``(1, num_heads, q_len, k_len)`` bias to add to the attention scores.

        Raises
        ------
        TypeError
            ``q_len``, ``k_len`` or ``offset`` not an integer.
        ValueError
            ``q_len`` or ``k_len`` negative; ``offset`` so large that a distance leaves int64.
        """
        values = self.relative_attention_bias(self.buckets(q_len, k_len, offset))  # (q, k, heads)
        return values.permute(2, 0, 1).unsqueeze(0)  # (1, heads, q, k)

    def extra_repr(self) -> str:
        return (
            f"num_heads={self.num_heads}, bidirectional={self.bidirectional}, "
            f"num_buckets={self.num_buckets}, max_distance={self.max_distance}"
        )
