"""nn.Modules: thin shells that hold buffers and call the functions of :mod:`posenc`."""

from . import learned as _learned
from . import rope as _rope
from . import sinusoidal as _sinusoidal
from . import t5 as _t5
from .learned import *  # noqa: F403
from .rope import *  # noqa: F403
from .sinusoidal import *  # noqa: F403
from .t5 import *  # noqa: F403

__all__ = [*_sinusoidal.__all__, *_learned.__all__, *_rope.__all__, *_t5.__all__]
