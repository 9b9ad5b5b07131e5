"""Config lookup for posenc.hf: one reader over a ``config.json`` dict or a config object.

A dict is read as transformers' config class of its model type reads it (the facts of
``classes.json``): a key the file leaves out takes the class's default, a key the class stores
under another name (``attribute_map``) is found under either, and a boolean key holds a JSON
boolean or nothing. Each value remembers where it came from (:meth:`Config.origin`): the key
of the file, the class's default, or a sub-config's default.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

from .._array import _describe
from .classes import class_facts

__all__ = [
    "BOOL_KEYS",
    "LENGTH_KEYS",
    "MAX_HEAD_DIM",
    "MAX_LAYERS",
    "Config",
    "check_width",
    "first",
    "nested",
]

# keys posenc.hf reads as booleans: a JSON true/false or nothing (transformers' strict config
# classes refuse the string "false"; read by truthiness it would mean true)
BOOL_KEYS = (
    "alibi",
    "attn_temperature_tuning",
    "has_relative_attention_bias",
    "has_spatial_attention_bias",
    "is_encoder_decoder",
    "mrope_interleaved",
    "rope_interleave",
    "rotary_value",
    "truncate",
    "use_bidirectional_attention",
    "use_rotary_embedding",
)
# the length keys other engines read from a config, kept raw in Scheme.length_keys for
# posenc.engines: vLLM's (it serves the smallest; posenc.engines.VLLM_LENGTH_KEYS) and the
# top-level original_max_position_embeddings that llama.cpp's converter reads for Llama 3 scaling
LENGTH_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_target_positions",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
    "original_max_position_embeddings",
)
# more layers than any model has (10**6 would already take a minute to describe): refused
# by name before a loop over them
MAX_LAYERS = 2**20
# a head wider than any model's (the widest are about 1024 features): refused by name before
# its frequencies are allocated (a head_dim of 2**53 asked for 32 PiB)
MAX_HEAD_DIM = 2**16


def check_width(value: int, where: str) -> int:
    """A head or rotated width read from ``where``: at most :data:`MAX_HEAD_DIM`."""
    if value > MAX_HEAD_DIM:
        raise ValueError(
            f"{where} must be at most {MAX_HEAD_DIM} (wider than any model's head; the widest "
            f"are about 1024), got {value}"
        )
    return value


class Config:
    """Key lookup over a dict or a config object; None counts as absent.

    ``model_type`` names the config class whose facts apply to a dict (its defaults and
    aliases); ``init`` holds the defaults a composite passes to a sub-config the file leaves
    out entirely.
    """

    def __init__(
        self,
        config: Any,
        where: str = "config",
        model_type: str | None = None,
        init: Mapping[str, Any] | None = None,
    ) -> None:
        self.config = config
        self.where = where
        self.is_dict = isinstance(config, Mapping)
        self.model_type = model_type
        self.facts = class_facts(model_type) if model_type else None
        self.init = dict(init or {})
        self._origin: dict[str, tuple[str, str]] = {}

    # --- lookup -------------------------------------------------------------------------------

    def _aliases(self, key: str) -> tuple[str, ...]:
        """The names under which the class keeps ``key``: the standard names that map to the
        stored one first (a file's standard name wins, as transformers sets it last), then the
        stored name."""
        if self.facts is None:
            return (key,)
        amap: dict[str, str] = self.facts["aliases"]
        stored = amap.get(key, key)
        standard = tuple(k for k, v in amap.items() if v == stored and k != stored)
        names = (*standard, stored)
        return tuple(dict.fromkeys(names))

    def _lookup(self, name: str) -> Any:
        if self.is_dict:
            return self.config.get(name)
        try:
            return getattr(self.config, name, None)
        except Exception:  # transformers' per-layer attributes refuse a global read
            return vars(self.config).get(name)

    def raw(self, key: str) -> Any:
        """The value as the config holds it (None when absent), with no default."""
        for name in self._aliases(key):
            value = self._lookup(name)
            if value is not None:
                self._origin[key] = ("key", f"{self.where}['{name}']")
                return value
        return None

    def holds(self, key: str) -> bool:
        """Whether the config spells ``key`` (or an alias of it) at all, null included: an
        explicit null is the value transformers keeps (Mistral's ``"sliding_window": null``
        turns off the class's default window), not a key left out."""
        if self.is_dict:
            return any(name in self.config for name in self._aliases(key))
        return any(hasattr(self.config, name) for name in self._aliases(key))

    def class_default(self, key: str) -> Any:
        """The default a dict's config class gives ``key`` (None: no default)."""
        for name in self._aliases(key):
            if self.init.get(name) is not None:
                return self.init[name]
        if self.facts is None:
            return None
        defaults: dict[str, Any] = self.facts["defaults"]
        for name in self._aliases(key):
            if defaults.get(name) is not None:
                return defaults[name]
        return None

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``: the config's, else its class's default, else ``default``."""
        value = self.raw(key)
        if value is None and not self.holds(key):
            value = self.class_default(key)
            if value is not None:
                self._origin[key] = ("class default", self.class_name)
        if value is None:
            return default
        if key in BOOL_KEYS and not isinstance(value, bool):
            raise TypeError(
                f"{self.name(key)} must be true or false (a JSON boolean), got "
                f"{_describe(value)}; transformers refuses it too"
            )
        return value

    def bool(self, key: str, default: bool) -> bool:
        """A boolean key (:data:`BOOL_KEYS`): a JSON boolean, else ``default``."""
        value = self.get(key)
        return default if value is None else bool(value)

    @property
    def class_name(self) -> str:
        if self.facts is not None:
            return str(self.facts["class"])
        return f"{self.model_type} config class"

    def origin(self, key: str) -> tuple[str, str]:
        """Where the last read of ``key`` found it: ``("key", "config['n_layer']")``,
        ``("class default", "LlamaConfig")``; ``("absent", ...)`` when it was not found."""
        return self._origin.get(key, ("absent", f"{self.where}['{key}']"))

    def overrides(self, layer: int) -> dict[str, Any]:
        """Per-layer overrides: ``per_layer_config`` (config.json) or transformers' spec."""
        if self.is_dict:
            table = self.config.get("per_layer_config") or {}
            if not isinstance(table, Mapping):
                raise TypeError(
                    f"{self.where}['per_layer_config'] must be a dict, got {_describe(table)}"
                )
            found = table.get(str(layer), table.get(layer)) or {}
        else:
            spec = vars(self.config).get("_heterogeneity_spec")
            found = getattr(spec, "per_layer_overrides", {}).get(layer) or {}
        if not isinstance(found, Mapping):
            raise TypeError(
                f"{self.where}['per_layer_config'][{layer}] must be a dict, got {_describe(found)}"
            )
        return dict(found)

    def name(self, key: str) -> str:
        """``key`` as the reader found it: ``config['n_layer']`` (under an alias),
        ``config['hidden_size'] (absent: LlamaConfig's default)``."""
        kind, where = self.origin(key)
        if kind == "key":
            return where
        if kind == "class default":
            return f"{self.where}['{key}'] (absent: {where}'s default)"
        return f"{self.where}['{key}']"

    # --- typed reads --------------------------------------------------------------------------

    def int(
        self, key: str, default: Any = None, *, minimum: int = 1, maximum: int | None = None
    ) -> Any:
        value = self.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{self.name(key)} must be an int, got {_describe(value)}")
        number = int(value)
        if number < minimum:
            raise ValueError(f"{self.name(key)} must be >= {minimum}, got {number}")
        if maximum is not None and number > maximum:
            raise ValueError(f"{self.name(key)} must be <= {maximum}, got {number}")
        return number

    def real(self, key: str, value: Any, name: str | None = None) -> float:
        """``value`` (read from ``key``) as a finite float > 0."""
        where = name or self.name(key)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{where} must be a number, got {_describe(value)}")
        try:
            as_float = float(value)
        except OverflowError:  # an int past float64 (10**400)
            raise ValueError(
                f"{where} must be finite and > 0, got an integer past float64's range"
            ) from None
        if not math.isfinite(as_float) or as_float <= 0:
            raise ValueError(f"{where} must be finite and > 0, got {value}")
        return as_float


def first(cfg: Config, keys: tuple[str, ...], sources: dict[str, str], what: str) -> Any:
    """The first of ``keys`` the config holds (an int), recording it in ``sources[what]``."""
    for key in keys:
        if cfg.raw(key) is not None:
            value = cfg.int(key)
            sources[what] = cfg.name(key)
            return value
    for key in keys:
        if cfg.get(key) is not None:
            value = cfg.int(key)
            sources[what] = cfg.name(key)
            return value
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
