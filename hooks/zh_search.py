"""MkDocs hook: search per language, with Chinese cut into the words readers type.

1. **Words.** jieba (the search plugin's Chinese segmenter) learns this site's terms and their
   aliases from hooks/terms.yml (the single source of the zh terms), plus the phrases in
   ``PHRASES``, through the search plugin's ``jieba_dict_user`` setting (mkdocs.yml):
   hooks/zh_words.txt, written from them by ``python hooks/zh_search.py`` (a test holds it equal).
   Without it jieba cuts 位置编码 into 位置 / 编码, and lunr, which matches query words as
   prefixes of indexed words, finds nothing for 位置编码.
2. **Aliases.** A Chinese index entry that uses a term also carries the term's aliases and
   avoided forms in an ``alias`` field (searched, never shown): 插值 finds the pages on 内插,
   词向量 and 词嵌入 those on 词元嵌入.
3. **One index per language, loaded when the reader searches.** mkdocs-static-i18n merges both
   languages into one search/search_index.json, and both languages load it. After the build it is
   split: the English entries go to search/full_index.json, the Chinese ones to
   zh/search/full_index.json, and each language's search_index.json keeps only the settings
   (``config``, no documents): Material's bundle fetches that stub with every page, and the
   worker (5.) fetches the full index on the first query. Each Chinese page's ``__config.base``
   names zh/ as its root, so Material's search uses (and links into) only the Chinese pages there.
4. **Identifiers (issue 23).** ``_`` is no separator of either index (mkdocs.yml), so
   ``rotate_half`` is indexed and searched as one word. The section that defines an identifier
   ranks first for it: the glossary (docs/<lang>/glossary.md, one row per term of
   hooks/terms.yml) names identifiers among a term's forms (``rotate_half``, ``position_ids``)
   and links the page that defines the term; that section's entry carries them in a
   ``defines`` field (searched, never shown), boosted above titles.
5. **The worker.** Every page's search worker is docs/assets/posenc-search.js (``__config.search``
   names it, with Material's worker and the page's full index as parameters): it answers the
   stub, loads the full index and Material's worker on the first query (issue 13: no search
   bytes in a page's first view), and cuts a Chinese query into the index's words (Material's
   own cut ends in single characters, and 长上下文 then highlighted every 下).
"""

from __future__ import annotations

import json
import logging
import posixpath
import re
from pathlib import Path

import yaml
from mkdocs.plugins import event_priority

TERMS_FILE = Path(__file__).resolve().parent / "terms.yml"

# Words that are not glossary terms but that readers type as one word; cut apart, a query for
# them searches (and highlights) single characters.
PHRASES = (
    "长上下文",
    "训练长度",
    "上下文长度",
    "上下文窗口",
    "注意力分数",
    "自注意力",
    "注意力机制",
    "置换等变",
    "置换不变",
    "旋转矩阵",
    "点积",
    "掩码",
    "分桶",
    "勘误",
    "术语表",
    "交错配对",
    "对半配对",
    "部分旋转",
    "位置内插",
    "词元",
)

HAN = re.compile(r"[\u3400-\u9fff]")
DOCS = Path(__file__).resolve().parent.parent / "docs"
# an identifier: a word of code with an underscore in it (the words "_" used to split)
IDENTIFIER = re.compile(r"(?<![\w.])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w.])")
GLOSSARY_LINK = re.compile(r"\]\(([\w-]+)\.md(#[\w-]+)?\)")
DEFINES_BOOST = 10000.0  # above a title's 1000 (Material's search plugin), below tags
CONFIG = re.compile(r'(<script id="__config" type="application/json">)(.*?)(</script>)', re.S)
WORKER = "assets/posenc-search.js"
WORDS_FILE = Path(__file__).resolve().parent / "zh_words.txt"
WORD_FREQ = 100000  # above any word of jieba's own dictionary: the site's words stay whole
FULL_INDEX = "full_index.json"


def load_terms(path: Path = TERMS_FILE) -> list[dict]:
    """hooks/terms.yml as a list of {en, zh, aliases (avoided forms included)}; [] while missing."""
    try:
        entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    except FileNotFoundError:
        return []
    terms = []
    for entry in entries:
        if isinstance(entry, dict) and entry.get("zh"):
            # avoided forms are words readers type too: search finds the term's pages for them
            aliases = [str(a) for a in [*(entry.get("aliases") or []), *(entry.get("avoid") or [])]]
            terms.append(
                {"en": str(entry.get("en", "")), "zh": str(entry["zh"]), "aliases": aliases}
            )
    return terms


def search_words(terms: list[dict]) -> list[str]:
    """Every Chinese word jieba must keep whole: terms, their aliases and ``PHRASES``."""
    words = [*PHRASES]
    for term in terms:
        words += [term["zh"], *term["aliases"]]
    return sorted({w for w in words if HAN.search(w)}, key=len, reverse=True)


def words_file(terms: list[dict]) -> str:
    """hooks/zh_words.txt's text: one ``word frequency`` line per word of :func:`search_words`
    (jieba's user dictionary format, read by the search plugin's ``jieba_dict_user``; it has no
    comments: ``python hooks/zh_search.py`` writes the file)."""
    words = sorted(search_words(terms), key=lambda word: (-len(word), word))
    return "".join(f"{word} {WORD_FREQ}\n" for word in words)


@event_priority(100)  # before the search plugin loads jieba_dict_user
def on_config(config, **kwargs):
    try:
        import jieba
    except ImportError:  # search still works, only with jieba's default dictionary
        return config
    # jieba logs four lines to stderr (at DEBUG) while it loads its dictionary: not a build's news
    jieba.setLogLevel(logging.WARNING)
    return config


def _zh_page(page) -> bool:
    return page.file.src_uri.startswith("zh/")


def on_post_page(output, page, config, **kwargs):
    """Point the page's search at posenc-search.js, and a Chinese page's search at zh/."""
    m = CONFIG.search(output)
    if not m:
        return output
    data = json.loads(m.group(2))
    worker = data.get("search") or ""
    if "assets/" in worker and WORKER not in worker:
        prefix, material = worker.split("assets/", 1)
        index = f"../{'zh/' if _zh_page(page) else ''}search/{FULL_INDEX}"  # from assets/
        data["search"] = f"{prefix}{WORKER}?worker={material}&index={index}"
    if _zh_page(page):
        data["base"] = posixpath.join(data.get("base") or ".", "zh") + "/"
    return output[: m.start(2)] + json.dumps(data) + output[m.end(2) :]


def _aliases_for(entry: dict, terms: list[dict]) -> list[str]:
    text = (entry.get("title", "") + " " + entry.get("text", "")).replace("\u200b", "")
    found = []
    for term in terms:
        if term["aliases"] and term["zh"] in text:
            found += [a for a in term["aliases"] if a not in text and a not in found]
    return found


def definitions(lang: str, docs: Path = DOCS) -> dict[str, list[str]]:
    """{index location: identifiers it defines}, from the glossary of ``lang``: the identifiers
    among a row's English term and other names, at the first page (and section) the row links
    (``rotate_half`` -> ``rope/#pairings``)."""
    out: dict[str, list[str]] = {}
    text = (docs / lang / "glossary.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        cells = (
            [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        )
        link = GLOSSARY_LINK.search(cells[-1]) if len(cells) >= 5 else None
        if link is None:
            continue
        names = IDENTIFIER.findall(" ".join(cells[1:3]).replace("`", " "))
        page = "" if link[1] == "index" else f"{link[1]}/"
        for name in names:
            found = out.setdefault(page + (link[2] or ""), [])
            found += [] if name in found else [name]
    return out


def split_index(site_dir: Path, terms: list[dict]) -> None:
    """Split search/search_index.json into an English and a Chinese full index, each with a stub
    of its settings as search_index.json (see the module's docstring)."""
    path = site_dir / "search" / "search_index.json"
    if not path.is_file():
        return
    index = json.loads(path.read_text(encoding="utf-8"))
    en, zh = [], []
    defines = {"en": definitions("en"), "zh": definitions("zh")}
    for entry in index.get("docs", []):
        if entry["location"].startswith("zh/"):
            entry = {**entry, "location": entry["location"][3:]}
            aliases = _aliases_for(entry, terms)
            if aliases:
                entry["alias"] = "\u200b".join(aliases)
            names = defines["zh"].get(entry["location"])
            zh.append({**entry, "defines": " ".join(names)} if names else entry)
        else:
            names = defines["en"].get(entry["location"])
            en.append({**entry, "defines": " ".join(names)} if names else entry)
    boost = {"defines": {"boost": DEFINES_BOOST}}
    for folder, docs, fields in (
        (path.parent, en, boost),
        (site_dir / "zh" / "search", zh, {"alias": {"boost": 1.0}, **boost}),
    ):
        config = {**index["config"], "fields": {**index["config"]["fields"], **fields}}
        folder.mkdir(parents=True, exist_ok=True)
        for name, written in ((FULL_INDEX, docs), ("search_index.json", [])):
            (folder / name).write_text(
                json.dumps(
                    {"config": config, "docs": written}, ensure_ascii=False, separators=(",", ":")
                ),
                encoding="utf-8",
            )


@event_priority(-200)  # after mkdocs-static-i18n (-100) has written the merged index
def on_post_build(config, **kwargs):
    split_index(Path(config.site_dir), load_terms())


if __name__ == "__main__":  # rewrite hooks/zh_words.txt after hooks/terms.yml or PHRASES changed
    WORDS_FILE.write_text(words_file(load_terms()), encoding="utf-8")
