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
- **Keyboard access before Material mounts a block.** With ``content.lazy`` (mkdocs.yml) Material
  mounts a code block only when it first comes into view: on load it used to read every block's
  width (to make one that scrolls focusable), and each read laid out the skipped part of the page
  around it (hooks/lazy_blocks.py), one forced layout per block. A block with a line longer than
  a 360 px phone shows (``NARROW_CHARS``) is written focusable (``tabindex="0"``), so the keyboard
  can scroll it before it is mounted; once mounted, Material keeps or removes that as it always did.
"""

from __future__ import annotations

import re
from html import unescape
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


# characters of code a 360 px phone shows on one line (13.6 px monospace in a 296 px box: 36);
# a block with a longer line may scroll sideways somewhere
NARROW_CHARS = 32
_PRE_CODE = re.compile(r'(<code id="posenc-code-\d+")(>.*?</code>)', re.S)


def focusable_wide_code(html: str) -> str:
    """Make each copy-buttoned code block with a line over ``NARROW_CHARS`` focusable."""

    def focusable(match: re.Match[str]) -> str:
        text = unescape(re.sub(r"<[^>]+>", "", match[2][1:]))
        wide = max((len(line) for line in text.split("\n")), default=0) > NARROW_CHARS
        return f'{match[1]} tabindex="0"{match[2]}' if wide else match[0]

    return _PRE_CODE.sub(focusable, html)


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
    return head + focusable_wide_code(copy_buttons(drop_plain_spans(body), lang))
