"""Type aliases for the public signatures. Read by type checkers and IDEs; never imports torch.

How posenc annotates a function whose output follows its input's library:

* ``from __future__ import annotations`` at the top of the module, and torch imported only under
  ``if TYPE_CHECKING:`` (``import posenc`` must never import torch at run time);
* two ``@overload`` stubs, the tensor one first (a tensor is also array-like, so that overload
  carries ``# type: ignore[overload-overlap]``, as NumPy's own stubs do), then the NumPy one::

      @overload
      def f(positions: Tensor, dim: int, *, dtype: TorchDType | None = ...) -> Tensor: ...  # type: ignore[overload-overlap]
      @overload
      def f(positions: PositionsLike, dim: int, *, dtype: DTypeLike = ...) -> FloatArray: ...
      def f(positions: Tensor | PositionsLike, dim: int, *, dtype: Any = None) -> Tensor | FloatArray:
          ...

* the implementation itself is annotated too, with the unions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

__all__ = [
    "ArrayLike",
    "DTypeLike",
    "FloatArray",
    "IntArray",
    "PositionsLike",
    "Tensor",
    "TorchDType",
    "Pairing",
    "Layout",
]

ArrayLike = npt.ArrayLike
DTypeLike = npt.DTypeLike
FloatArray = npt.NDArray[np.floating[Any]]
IntArray = npt.NDArray[np.integer[Any]]
# Positions on the NumPy side: a Python int is a count (0..n-1); anything array-like holds positions.
PositionsLike = int | npt.ArrayLike
Pairing = Literal["interleaved", "half"]
Layout = Literal["interleaved", "concat"]

if TYPE_CHECKING:
    import torch

    Tensor = torch.Tensor
    TorchDType = torch.dtype
else:  # names that exist at run time too, so ``from ._typing import Tensor`` never fails
    Tensor = "torch.Tensor"
    TorchDType = "torch.dtype"
