"""nn.Modules: thin shells that hold buffers and call the functions of :mod:`posenc`.

Needs PyTorch: ``pip install 'posenc[torch]'``. The functions of :mod:`posenc` work without it.
"""

try:
    import torch as _torch  # noqa: F401
except ImportError as exc:  # a clear message instead of a failure deep inside a module
    raise ImportError(
        "posenc.torch needs PyTorch, which is not installed: pip install 'posenc[torch]' "
        "(or install torch itself, https://pytorch.org/get-started/locally/). The functions "
        "of posenc (posenc.sinusoidal, posenc.apply_rope, ...) work without it, on NumPy arrays."
    ) from exc

from . import axial as _axial
from . import learned as _learned
from . import rope as _rope
from . import rope2d as _rope2d
from . import sinusoidal as _sinusoidal
from . import t5 as _t5
from .axial import *  # noqa: F403
from .learned import *  # noqa: F403
from .rope import *  # noqa: F403
from .rope2d import *  # noqa: F403
from .sinusoidal import *  # noqa: F403
from .t5 import *  # noqa: F403

__all__ = [
    *_sinusoidal.__all__,
    *_learned.__all__,
    *_rope.__all__,
    *_t5.__all__,
    *_axial.__all__,
    *_rope2d.__all__,
]
