"""MkDocs hook: serve MathJax from the site itself (copied from node_modules at build time).

Only what ``tex-chtml.js`` loads is copied: the script, its fonts, the TeX extensions it may
autoload and the menu/accessibility parts. No page asks a CDN for anything.
"""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "node_modules" / "mathjax" / "es5"
PARTS = ("tex-chtml.js", "input", "output/chtml", "a11y", "ui", "adaptors")


def on_pre_build(config, **kwargs):
    if not (SOURCE / "tex-chtml.js").is_file():
        raise FileNotFoundError(
            f"MathJax not found at {SOURCE}: run `npm ci` (make does this for you)"
        )


def on_post_build(config, **kwargs):
    target = Path(config["site_dir"]) / "assets" / "mathjax"
    for part in PARTS:
        src, dst = SOURCE / part, target / part
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
