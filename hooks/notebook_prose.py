"""The prose of a page as Markdown cells for its notebook (hooks/notebooks.py).

A page's Markdown is written for MkDocs, Material and their extensions; a notebook's Markdown is
read by Jupyter. Line by line, the text keeps what a reader sees and drops what only the site
reads: a tab's title becomes a bold line and a note a quote (their indented bodies dedented),
``{ #anchor }`` and ``{ .class }`` attribute lists go, links to pages (``rope.md#pairings``) and
to the page's own sections become addresses on the site, the layout's ``<div>`` wrappers go.
Headings start new cells; the page's title is left to the notebook's first cell. Where the page
shows something made when the site is built, ``note`` writes a line that says so, in the page's
language, with a link to the section that shows it.
"""

from __future__ import annotations

import re

TEXT = {
    "en": {
        "figure": "*(Here the page shows a figure, drawn from the page's code when the site is "
        "built: [see it on the page]({url}).)*",
        "generated": "*(Here the page shows a table or text generated when the site is built, "
        "from posenc and the project's records: [see it on the page]({url}).)*",
        "explorer": "*(Here the page has an interactive explorer, which runs in the browser: "
        "[try it on the page]({url}).)*",
    },
    "zh": {
        "figure": "*（页面在此处有一幅插图，由页面代码在构建网站时绘制：[在页面上查看]({url})。）*",
        "generated": "*（页面在此处有一张表格或一段文字，在构建网站时由 posenc 及项目的记录生成："
        "[在页面上查看]({url})。）*",
        "explorer": "*（页面在此处有一个在浏览器中运行的交互图：[在页面上使用]({url})。）*",
    },
}

HEADING = re.compile(
    r"^(?P<hashes>#{1,6}) (?P<title>.*?)(?:\s*\{[^}]*#(?P<anchor>[\w-]+)[^}]*\})?\s*$"
)
ATTRS = re.compile(r"(?<=[)\]`*])\{\s*[.#:][^}]*\}")
LINK = re.compile(r"(?<=\]\()(?P<target>[^)\s]+)(?=[)\s])")
COMMENT = re.compile(r"<!--.*?-->", re.S)
# ``<!-- atlas:summary -->`` alone on a line: a hook puts a generated table there
PLACEHOLDER = re.compile(r"(?m)^[ \t]*<!--\s*[\w-]+:[\w-]+\s*-->[ \t]*$")
GENERATED = "\x00generated"
CONTAINER = re.compile(r"^(?P<kind>!!!|\?\?\?\+?|===)\s*(?P<rest>.*)$")
WRAPPER = re.compile(r"^\s*</?div\b[^>]*>\s*$")  # <div class=... markdown>: the site's layout
# an interactive explorer's line (hooks/explorers.py): a note and a link to it take its place
EXPLORER = re.compile(
    r'^\s*<div class="posenc-explorer" data-explorer="[a-z0-9-]+"[^>]*>\s*</div>\s*$'
)


def _url(target: str, page_url: str, site: str, lang: str) -> str:
    """A link of the page as an address on the site (the notebook lives outside it)."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
        return target
    if target.startswith("#"):
        return page_url + target
    path, _, anchor = target.partition("#")
    if path.endswith(".md"):
        stem = path[:-3]
        path = ("zh/" if lang == "zh" else "") + ("" if stem == "index" else f"{stem}/")
    else:  # a file beside the pages (assets/...)
        path = re.sub(r"^(\.\./)+", "", path)
    return site + path + (f"#{anchor}" if anchor else "")


class Prose:
    """The page's text, line by line, as Markdown that Jupyter reads: tabs and notes opened up
    (a tab's title in bold, a note as a quote), anchors and attribute lists dropped, links made
    absolute, the layout's ``<div>`` wrappers dropped. Cut into cells at each heading."""

    def __init__(self, page_url: str, site: str, lang: str) -> None:
        self.page_url, self.site, self.lang = page_url, site, lang
        self.anchor = ""  # the section the text is in, for links back to it
        self.inside = self.quote = False  # in a tab or note / in a note
        self.lines: list[str] = []
        self.cells: list[str] = []

    def here(self) -> str:
        return self.page_url + (f"#{self.anchor}" if self.anchor else "")

    def flush(self) -> None:
        text = "\n".join(self.lines)
        text = re.sub(r"(?m)^>\n(?!>)", "\n", text + "\n")  # a note's last, empty line
        text = re.sub(r"\n{3,}", "\n\n", text).strip("\n")
        if text.strip():
            self.cells.append(text)
        self.lines = []

    def add(self, line: str) -> None:
        container = CONTAINER.match(line)
        if container:
            title = re.findall(r'"([^"]*)"', container["rest"])
            if container["kind"] == "===":
                self.lines += ["", f"**{title[0] if title else container['rest']}**", ""]
                self.quote = False
            else:
                kind = (container["rest"].split() or ["note"])[0]
                self.lines += ["", f"> **{title[0] if title else kind.capitalize()}**", ">"]
                self.quote = True
            self.inside = True
            return
        if self.inside and line.startswith("    "):
            line = ("> " if self.quote else "") + line[4:]
        elif line.strip():
            self.inside = self.quote = False
        elif self.quote:
            line = ">"
        if WRAPPER.match(line):
            return
        if EXPLORER.match(line):
            self.note("explorer")
            return
        heading = HEADING.match(line)
        if heading:
            self.flush()
            self.anchor = heading["anchor"] or self.anchor
            if len(heading["hashes"]) == 1:
                return  # the title: the notebook's first cell holds it
            line = f"{heading['hashes']} {heading['title']}"
        line = ATTRS.sub("", line)
        self.lines.append(
            LINK.sub(lambda m: _url(m["target"], self.page_url, self.site, self.lang), line)
        )

    def note(self, what: str) -> None:
        self.lines += ["", TEXT[self.lang][what].format(url=self.here()), ""]

    def block(self, info: str, body: list[str]) -> None:
        """A fenced block that is not the reader's code (text, shell, data): shown as it is."""
        fence = "```" + (info.split()[0] if info else "")
        prefix = "> " if self.inside and self.quote else ""
        self.lines += [prefix + fence, *(prefix + b for b in body), prefix + "```"]
