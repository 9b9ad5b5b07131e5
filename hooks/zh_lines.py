"""MkDocs hook: join soft line breaks between Chinese characters on the zh pages.

A paragraph wrapped across source lines renders each line break as a space, which reads as a
stray gap between two Chinese characters (Chromium does not drop it). Only a break with a CJK
character on both sides is joined; code blocks keep their lines.
"""

from __future__ import annotations

import re

CJK = r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]"
BREAK = re.compile(rf"(?<={CJK})\n(?={CJK})")
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})", re.M)


def on_page_markdown(markdown, page, **kwargs):
    if not page.file.src_uri.startswith("zh/"):
        return markdown
    parts, inside, start = [], None, 0
    for m in FENCE.finditer(markdown):
        if inside is None:
            parts.append(BREAK.sub("", markdown[start : m.start()]))
            inside, start = m.group(1)[0], m.start()
        elif m.group(1)[0] == inside:
            end = markdown.find("\n", m.end())
            end = len(markdown) if end < 0 else end
            parts.append(markdown[start:end])
            inside, start = None, end
    tail = markdown[start:]
    parts.append(tail if inside else BREAK.sub("", tail))
    return "".join(parts)
