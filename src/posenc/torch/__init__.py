"""nn.Modules: thin shells that hold buffers and call the functions of :mod:`posenc`."""

from . import learned as _learned
from . import sinusoidal as _sinusoidal
from .learned import *  # noqa: F403
from .sinusoidal import *  # noqa: F403

__all__ = [*_sinusoidal.__all__, *_learned.__all__]
