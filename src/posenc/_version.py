"""The version of posenc: the single source read by the build (``[tool.hatch.version]``)."""

from __future__ import annotations

__version__ = "0.1.0"
