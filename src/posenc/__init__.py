"""posenc: small, exact reference implementations of Transformer position encodings.

Functions take positions and return arrays in the input's library (NumPy or torch) on the
input's device. Importing posenc never imports torch; ``posenc.torch`` holds the nn.Modules
and ``posenc.compat`` the drop-ins named after the framework functions they reproduce.
One family of encodings per module; each module lists its public names in ``__all__``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from . import alibi as _alibi
from . import attention as _attention
from . import axial as _axial
from . import cope as _cope
from . import deberta as _deberta
from . import engines as _engines
from . import frontier as _frontier
from . import hybrid as _hybrid
from . import kvcache as _kvcache
from . import layers as _layers
from . import mla as _mla
from . import mrope as _mrope
from . import naive as _naive
from . import packing as _packing
from . import partial as _partial
from . import positions as _positions
from . import relative as _relative
from . import resize as _resize
from . import rope as _rope
from . import rope2d as _rope2d
from . import rope_nd as _rope_nd
from . import rope_scaling as _rope_scaling
from . import sincos2d as _sincos2d
from . import sinusoidal as _sinusoidal
from . import speculative as _speculative
from . import t5 as _t5
from . import video_rope as _video_rope
from . import xpos as _xpos
from ._version import __version__ as __version__
from .alibi import *  # noqa: F403
from .attention import *  # noqa: F403
from .axial import *  # noqa: F403
from .cope import *  # noqa: F403
from .deberta import *  # noqa: F403
from .engines import *  # noqa: F403
from .frontier import *  # noqa: F403
from .hybrid import *  # noqa: F403
from .kvcache import *  # noqa: F403
from .layers import *  # noqa: F403
from .mla import *  # noqa: F403
from .mrope import *  # noqa: F403
from .naive import *  # noqa: F403
from .packing import *  # noqa: F403
from .partial import *  # noqa: F403
from .positions import *  # noqa: F403
from .relative import *  # noqa: F403
from .resize import *  # noqa: F403
from .rope import *  # noqa: F403
from .rope2d import *  # noqa: F403
from .rope_nd import *  # noqa: F403
from .rope_scaling import *  # noqa: F403
from .sincos2d import *  # noqa: F403
from .sinusoidal import *  # noqa: F403
from .speculative import *  # noqa: F403
from .t5 import *  # noqa: F403
from .video_rope import *  # noqa: F403
from .xpos import *  # noqa: F403

__all__ = [
    *_sinusoidal.__all__,
    *_naive.__all__,
    *_attention.__all__,
    *_positions.__all__,
    *_relative.__all__,
    *_rope_scaling.__all__,
    *_rope.__all__,
    *_alibi.__all__,
    *_t5.__all__,
    *_mrope.__all__,
    *_frontier.__all__,
    *_cope.__all__,
    *_xpos.__all__,
    *_axial.__all__,
    *_deberta.__all__,
    *_resize.__all__,
    *_layers.__all__,
    *_rope2d.__all__,
    *_mla.__all__,
    *_sincos2d.__all__,
    *_rope_nd.__all__,
    *_video_rope.__all__,
    *_engines.__all__,
    *_hybrid.__all__,
    *_partial.__all__,
    *_kvcache.__all__,
    *_packing.__all__,
    *_speculative.__all__,
]


def __getattr__(name: str) -> ModuleType:
    # ``posenc.torch`` and ``posenc.compat`` are imported on first use, so ``import posenc``
    # stays free of torch.
    if name in ("torch", "compat"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'posenc' has no attribute {name!r}")
