"""MkDocs hook: render mkdocstrings' section labels in the page's own language.

mkdocstrings fixes its locale once per build, but mkdocs-static-i18n builds both languages in
one run; this sets the locale per page from the language folder (docs/zh/... -> zh).
"""

from __future__ import annotations


def on_page_markdown(markdown, page, config, files, **kwargs):
    plugin = config.plugins.get("mkdocstrings")
    handlers = getattr(plugin, "handlers", None) if plugin else None
    if handlers is not None:
        handlers._locale = "zh" if page.file.src_uri.startswith("zh/") else "en"
    return markdown
