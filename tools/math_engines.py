"""KaTeX against MathJax on this site's own formulas (`make math-engines`).

The site typesets its math at build time with KaTeX (hooks/katex.py). This measures the
alternative on the same input and records both in docs/assets/math_engines.json, which the
performance page shows ("How this site is built"):

- every distinct formula of the site (both languages), as hooks/katex.py hands it to KaTeX
  during a build (it lists them when POSENC_MATH_RECORD names a file), rendered by KaTeX (the
  build's options) and by
  MathJax 4 (``tex2chtml``, CommonHTML output) in one Node process (tools/math_engines.cjs):
  how many each renders, and the seconds of each full round (``--rounds`` rounds in a row);
- one page (``--page``, /rope/ by default): its HTML gzipped (level 6, as a static host serves
  it) with KaTeX's output and with MathJax's output in its place, each engine's CSS for the page
  gzipped, and the bytes of the font files (woff2) each engine's output needs for it. KaTeX's
  output carries MathML for screen readers; MathJax's CHTML output here carries none, so the
  MathJax bytes are a lower bound.

``python tools/math_engines.py [--rounds 3] [--page rope/]`` builds the site (ProperDocs, into a
temporary folder) and measures.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "docs" / "assets" / "math_engines.json"
SCRIPT = Path(__file__).resolve().parent / "math_engines.cjs"
MATHJAX_FONTS = ROOT / "node_modules" / "@mathjax" / "mathjax-newcm-font" / "chtml" / "woff2"

START = re.compile(r'<span class="katex">')
TAG = re.compile(r"<span\b|</span>")


def katex_elements(page: str) -> list[tuple[int, int]]:
    """(start, end) of each outermost KaTeX element of a built page, in page order."""
    spans, at = [], 0
    while (m := START.search(page, at)) is not None:
        depth = 0
        for tag in TAG.finditer(page, m.start()):
            depth += 1 if tag[0] == "<span" else -1
            if depth == 0:
                spans.append((m.start(), tag.end()))
                at = tag.end()
                break
        else:
            raise ValueError(f"unclosed KaTeX element at offset {m.start()}")
    return spans


def replaced(page: str, rendered: list[str]) -> str:
    """``page`` with its KaTeX elements replaced, in order, by ``rendered``."""
    spans = katex_elements(page)
    if len(spans) != len(rendered):
        raise ValueError(f"{len(spans)} formulas on the page, {len(rendered)} rendered")
    pieces, last = [], 0
    for (start, end), new in zip(spans, rendered, strict=True):
        pieces += [page[last:start], new]
        last = end
    return "".join(pieces) + page[last:]


def gzipped(text: str) -> int:
    return len(gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0))


def katex_fonts(page: str) -> tuple[str, list[str]]:
    """KaTeX's CSS and font files for ``page`` alone, by the rule hooks/katex.py builds with."""
    sys.path.insert(0, str(ROOT / "hooks"))
    try:
        import katex as hook
    finally:
        sys.path.remove(str(ROOT / "hooks"))
    saved = set(hook._classes)
    hook._classes.clear()
    hook._classes.update(c for attr in re.findall(r'class="([^"]*)"', page) for c in attr.split())
    try:
        return hook.stylesheet()
    finally:
        hook._classes.clear()
        hook._classes.update(saved)


def mathjax_fonts(css: str, rendered: str) -> list[str]:
    """The woff2 files a page needs of MathJax's: the families of each CSS rule whose classes all
    occur in the page's MathJax output (the rule hooks/katex.py applies to KaTeX's CSS)."""
    present = {c for attr in re.findall(r'class="([^"]*)"', rendered) for c in attr.split()}
    families: set[str] = set()
    for rule in re.finditer(r"([^{}]+)\{([^{}]*font-family:\s*([^;}]+))[^{}]*\}", css):
        if "@font-face" in rule[1]:
            continue
        for selector in rule[1].split(","):
            classes = re.findall(r"\.([\w-]+)", selector)
            if classes and all(c in present for c in classes):
                families.update(f.strip().strip('"') for f in rule[3].split(","))
    files = []
    for face in re.finditer(r"@font-face[^{]*\{([^}]*)\}", css):
        family = re.search(r"font-family:\s*([\w-]+)", face[1])
        woff2 = re.search(r'url\("?fonts/([\w-]+\.woff2)"?\)', face[1])
        if family and woff2 and family[1] in families:
            files.append(woff2[1])
    return sorted(set(files))


def build(target: Path, record: Path) -> dict[str, list[tuple[str, bool]]]:
    """Builds the site into ``target``; each page's formulas as hooks/katex.py typeset them."""
    proc = subprocess.run(
        [sys.executable, "-m", "properdocs", "build", "--strict", "-q", "-f", "mkdocs.yml"]
        + ["-d", str(target)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "POSENC_MATH_RECORD": str(record), "POSENC_FIGURE_CACHE": "1"},
    )
    if proc.returncode != 0:
        raise SystemExit(f"the site did not build:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    pages: dict[str, list[tuple[str, bool]]] = {}
    for line in record.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        pages[entry["page"]] = [(tex, display) for tex, display in entry["formulas"]]
    return pages


def measure(site: Path, pages: dict[str, list[tuple[str, bool]]], rounds: int, page_path: str):
    every = list(dict.fromkeys(f for formulas in pages.values() for f in formulas))
    page_html = (site / page_path / "index.html").read_text(encoding="utf-8")
    on_page = pages[page_path]
    node = shutil.which("node")
    if node is None:
        raise SystemExit("needs Node.js and node_modules (npm ci; make setup)")
    job = {"formulas": every, "rounds": rounds, "page": on_page}
    proc = subprocess.run(
        [node, str(SCRIPT)], input=json.dumps(job), capture_output=True, text=True, cwd=ROOT
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    out = json.loads(proc.stdout)
    katex_css, katex_font_files = katex_fonts(page_html)
    katex_dist = ROOT / "node_modules" / "katex" / "dist"
    engines = {}
    for name in ("katex", "mathjax"):
        r = out[name]
        engines[name] = {
            "version": r["version"],
            "rendered": r["rendered"],
            "failed": r["failed_count"],
            "failed_examples": r["failed"],
            "seconds": [round(s, 3) for s in r["seconds"]],
            "median_seconds": round(statistics.median(r["seconds"]), 3),
        }
    mathjax_page = replaced(page_html, out["page"]["mathjax"])
    mathjax_font_files = mathjax_fonts(out["page"]["mathjax_css"], "".join(out["page"]["mathjax"]))
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "node": subprocess.run([node, "--version"], capture_output=True, text=True)
            .stdout.strip()
            .lstrip("v"),
            "python": platform.python_version(),
            "cpu": platform.processor() or platform.machine(),
        },
        "formulas": len(every),
        "display": sum(display for _, display in every),
        "rounds": rounds,
        "engines": engines,
        "page": {
            "path": page_path,
            "formulas": len(on_page),
            "katex": {
                "html_gzip_bytes": gzipped(page_html),
                "css_gzip_bytes": gzipped(katex_css),
                "font_files": sorted(Path(f).name for f in katex_font_files),
                "font_bytes": sum((katex_dist / f).stat().st_size for f in katex_font_files),
            },
            "mathjax": {
                "html_gzip_bytes": gzipped(mathjax_page),
                "css_gzip_bytes": gzipped(out["page"]["mathjax_css"]),
                "font_files": mathjax_font_files,
                "font_bytes": sum((MATHJAX_FONTS / f).stat().st_size for f in mathjax_font_files),
            },
        },
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--page", default="rope/")
    parser.add_argument("--out", type=Path, default=RECORD)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        print("building the site (properdocs build --strict) ...", flush=True)
        site = Path(tmp) / "site"
        pages = build(site, Path(tmp) / "formulas.jsonl")
        print("rendering every formula with both engines ...", flush=True)
        record = measure(site, pages, args.rounds, args.page)
    args.out.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for name, r in record["engines"].items():
        print(
            f"{name} {r['version']}: {r['rendered']}/{record['formulas']} formulas, "
            f"{r['median_seconds']} s (median of {record['rounds']} rounds)"
        )
    print(json.dumps(record["page"], indent=2)[:1500])
    print(f"written to {args.out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
