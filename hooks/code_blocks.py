"""MkDocs hook: code blocks leave the build ready to show, so a page's scripts do little on load.

Two jobs Material's bundle or the highlighter would otherwise leave to the reader's phone:

- **Copy buttons at build time.** With ``content.code.copy`` Material inserts a copy button into
  every code block when the page loads, reading the block's width after each insertion: one forced
  layout of the whole page per block (206 blocks on the API reference took 0.3 s of main thread
  on this machine, about 1.2 s on Lighthouse's simulated phone). The button is written here
  instead, with the markup and title Material gives it; Material's clipboard handler (set up for
  every ``[data-clipboard-target]`` whatever the features) copies the block, or its
  ``data-copy`` text where hooks/notebooks.py gave one (doctest blocks: the code without
  prompts).
- **Fewer token spans.** Pygments wraps every name (``n``), run of whitespace (``w``), punctuation
  mark (``p``) and operator (``o``) in a span: a third of the elements of the API reference and a
  sixth of a math page's, and style and layout time scale with elements. Names and whitespace
  already take the code's own colour (Material: ``--md-code-hl-name-color`` is
  ``var(--md-code-fg-color)``; ``w`` has no rule); punctuation and operators, which Material sets
  in a lighter grey, now take it too. Keywords, strings, numbers, comments, prompts and output
  keep their colours.
"""

from __future__ import annotations

import re
from typing import Any

# Material's own titles for the button (partials/languages/*.html, "clipboard.copy")
TITLES = {"en": "Copy to clipboard", "zh": "复制"}

# a code block as pymdownx.highlight, mkdocstrings and markdown write it
_BLOCK = re.compile(r"(<pre(?![^>]*\bclass=\"[^\"]*mermaid)[^>]*>(?:<span></span>)?)<code([ >])")
# a code element, and a span of a colourless token class around plain text inside one
_CODE = re.compile(r"<code[ >].*?</code>", re.S)
_PLAIN_TOKEN = re.compile(r'<span class="(?:n|w|p|o)">([^<]*)</span>')


def copy_buttons(html: str, lang: str) -> str:
    """Give every ``pre > code`` block a copy button and its code element an id to target."""
    title = TITLES.get(lang, TITLES["en"])
    count = 0

    def button(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        target = f"posenc-code-{count}"
        return (
            f'{match[1]}<span class="md-code__nav"><button class="md-code__button" '
            f'title="{title}" data-clipboard-target="#{target}" data-md-type="copy"></button>'
            f'</span><code id="{target}"{match[2]}'
        )

    return _BLOCK.sub(button, html)


def drop_plain_spans(html: str) -> str:
    """Unwrap Pygments' ``n``, ``w``, ``p`` and ``o`` spans inside code (text kept)."""
    return _CODE.sub(lambda code: _PLAIN_TOKEN.sub(_text, code[0]), html)


def _text(span: re.Match[str]) -> str:
    return span[1]


def on_post_page(output: str, page: Any, config: Any) -> str:
    if "<pre" not in output:
        return output
    lang = "zh" if page.file.src_uri.startswith("zh/") else "en"
    start = output.find('<article class="md-content__inner')
    if start < 0:
        return output
    head, body = output[:start], output[start:]
    return head + copy_buttons(drop_plain_spans(body), lang)
