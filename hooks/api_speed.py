"""MkDocs hook: format each API signature once per build, not once per signature and language.

mkdocstrings-python formats a long signature (``separate_signature``) with Ruff, and Ruff has no
Python API: every signature starts one ``ruff format`` process, and the API pages (api.md,
api-*.md) are rendered once per language (hooks/api_locale.py), so a build started ~200 of them.
This hook gives mkdocstrings-python a formatter that remembers its answers for the whole process:
the English pages format each signature once and the Chinese pages reuse the result. The text
Ruff returns is the same, so the pages are byte for byte what they were.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any


def _remembering(formatter: Callable[[str, int], str]) -> Callable[[str, int], str]:
    if getattr(formatter, "posenc_remembers", False):
        return formatter

    @cache
    def formatted(code: str, line_length: int) -> str:
        return formatter(code, line_length)

    formatted.posenc_remembers = True  # type: ignore[attr-defined]
    return formatted


def on_config(config: Any, **kwargs: Any) -> Any:
    try:
        from mkdocstrings_handlers.python._internal import rendering
    except ImportError:  # another mkdocstrings-python layout: it formats as it always did
        return config
    get_formatter = rendering._get_formatter
    if not getattr(get_formatter, "posenc_remembers", False):
        remembered = _remembering(get_formatter())

        def get_remembering_formatter() -> Callable[[str, int], str]:
            return remembered

        get_remembering_formatter.posenc_remembers = True  # type: ignore[attr-defined]
        rendering._get_formatter = get_remembering_formatter  # type: ignore[assignment]
    return config
