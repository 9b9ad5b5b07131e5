"""posenc: small, exact reference implementations of Transformer position encodings.

Functions take positions and return arrays in the input's library (NumPy or torch) on the
input's device. Importing posenc never imports torch; ``posenc.torch`` holds the nn.Modules.
One family of encodings per module; each module lists its public names in ``__all__``.
"""

from __future__ import annotations

import importlib

from . import attention as _attention
from . import naive as _naive
from . import relative as _relative
from . import sinusoidal as _sinusoidal
from .attention import *  # noqa: F403
from .naive import *  # noqa: F403
from .relative import *  # noqa: F403
from .sinusoidal import *  # noqa: F403

__all__ = [*_sinusoidal.__all__, *_naive.__all__, *_attention.__all__, *_relative.__all__]
__version__ = "0.1.0"


def __getattr__(name):
    # ``posenc.torch`` is imported on first use, so ``import posenc`` stays free of torch.
    if name == "torch":
        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'posenc' has no attribute {name!r}")
