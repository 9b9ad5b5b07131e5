"""Config lookup for posenc.hf: one reader over a ``config.json`` dict or a config object."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

from .._array import _describe

__all__ = ["Config", "first", "nested"]


class Config:
    """Key lookup over a dict or a config object; None counts as absent."""

    def __init__(
        self, config: Any, where: str = "config", defaults: Mapping[str, Any] | None = None
    ) -> None:
        self.config = config
        self.where = where
        self.is_dict = isinstance(config, Mapping)
        self.defaults = dict(defaults or {})
        self.defaulted: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        if self.is_dict:
            value = self.config.get(key)
        else:
            try:
                value = getattr(self.config, key, None)
            except Exception:  # transformers' per-layer attributes refuse a global read
                value = vars(self.config).get(key)
        if value is None and self.defaults.get(key) is not None:
            self.defaulted.add(key)  # a key config.json leaves out: the config class's default
            return self.defaults[key]
        return default if value is None else value

    def overrides(self, layer: int) -> dict[str, Any]:
        """Per-layer overrides: ``per_layer_config`` (config.json) or transformers' spec."""
        if self.is_dict:
            table = self.config.get("per_layer_config") or {}
            if not isinstance(table, Mapping):
                raise TypeError(
                    f"{self.name('per_layer_config')} must be a dict, got {_describe(table)}"
                )
            found = table.get(str(layer), table.get(layer)) or {}
        else:
            spec = vars(self.config).get("_heterogeneity_spec")
            found = getattr(spec, "per_layer_overrides", {}).get(layer) or {}
        if not isinstance(found, Mapping):
            raise TypeError(
                f"{self.name('per_layer_config')}[{layer}] must be a dict, got {_describe(found)}"
            )
        return dict(found)

    def name(self, key: str) -> str:
        suffix = " (transformers default)" if key in self.defaulted else ""
        return f"{self.where}['{key}']{suffix}"

    def int(self, key: str, default: Any = None, *, minimum: int = 1) -> Any:
        value = self.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{self.name(key)} must be an int, got {_describe(value)}")
        if value < minimum:
            raise ValueError(f"{self.name(key)} must be >= {minimum}, got {value}")
        return int(value)

    def real(self, key: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{self.name(key)} must be a number, got {_describe(value)}")
        if not math.isfinite(float(value)) or value <= 0:
            raise ValueError(f"{self.name(key)} must be finite and > 0, got {value}")
        return float(value)


def first(cfg: Config, keys: tuple[str, ...], sources: dict[str, str], what: str) -> Any:
    """The first of ``keys`` the config holds (an int), recording it in ``sources[what]``."""
    for key in keys:
        if cfg.get(key) is not None:
            sources[what] = cfg.name(key)
            return cfg.int(key)
    return None


def nested(rp: Any) -> bool:
    """rope_parameters keyed by layer type (values dicts, or None for a layer type that does not
    rotate) rather than one flat dict."""
    if not isinstance(rp, Mapping) or not rp:
        return False
    values = list(rp.values())
    return all(v is None or isinstance(v, Mapping) for v in values) and any(
        isinstance(v, Mapping) for v in values
    )
