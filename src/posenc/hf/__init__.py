"""posenc.hf: the model atlas. From a transformers config to the exact posenc call.

:func:`describe` reads a config (a ``config.json`` dict or a transformers config object) and
returns a :class:`Scheme`: which convention the model follows, each layer's parameters and the
config key each came from. :meth:`Scheme.rotate` rotates whole query or key heads exactly as the
model's attention does; :meth:`Scheme.explain` says it in English or Chinese; the command
``python -m posenc explain config.json`` prints it.

What the code of each model type decides (pairing, NoPE layers, a sub-config) lives in one
table, :data:`MODELS`, whose rows point at :data:`CONVENTIONS`. Importing this package imports
neither torch nor transformers; nothing is ever downloaded.
"""

from __future__ import annotations

from .conventions import CONVENTIONS
from .explain import posenc_call
from .read import describe
from .registry import MODELS, TRANSFORMERS_VERSION
from .schema import Convention, ModelRow
from .scheme import LayerScheme, Scheme

__all__ = [
    "CONVENTIONS",
    "MODELS",
    "TRANSFORMERS_VERSION",
    "Convention",
    "LayerScheme",
    "ModelRow",
    "Scheme",
    "describe",
    "posenc_call",
]
