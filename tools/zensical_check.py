"""What blocks moving this site to Zensical, rechecked against its newest release
(`make zensical-check`; the plan and the blockers found so far are in tools/ZENSICAL.md).

In a throwaway venv it installs the newest Zensical that installs here (and says so when the
newest on PyPI does not), builds a copy of the site with it (the site's toolchain comes from the
development .venv), and inspects what came out with ``inspect_site``: one line per blocker,
each with the id that tools/ZENSICAL.md uses. It changes nothing in the repository.
``inspect_site`` also runs in the test suite over the ProperDocs build, where it must find none.

``python tools/zensical_check.py [--keep DIR]``
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COPIED = ["docs", "docs_src", "overrides", "hooks", "mkdocs.yml", "src"]

# id -> what it means; tools/ZENSICAL.md explains each (a test holds the two lists equal)
BLOCKERS = {
    "no-build": "the build failed or wrote no page",
    "hooks-math": "math left as raw TeX: hooks/katex.py did not run",
    "hooks-notebooks": "no notebook or script next to the pages: hooks/notebooks.py did not run",
    "hooks-figures": "figure code blocks failed: hooks/figures.py (site_figures) did not run",
    "hooks-atlas": "the atlas page has no section per convention: hooks/atlas.py did not run",
    "hooks-meta": "no 'Cite this page' block: hooks/page_meta.py did not run",
    "i18n": "no Chinese site under zh/ with lang=zh: mkdocs-static-i18n is not run",
    "search-zh": "no search index of its own for the Chinese pages (hooks/zh_search.py)",
    "templates": "the overrides/ templates failed to render",
}


def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("index.html") if p.is_file())


def inspect_site(site: Path, log: str = "") -> list[str]:
    """The ids of BLOCKERS that the built site at ``site`` (and its build ``log``) shows."""
    found: list[str] = []
    pages = _pages(site) if site.is_dir() else []
    if not pages:
        return ["no-build"]
    texts = {p: p.read_text(encoding="utf-8", errors="replace") for p in pages}
    # the English pages: at the root (mkdocs-static-i18n) or, with docs/ taken as it is, in en/
    en = site if (site / "rope" / "index.html").is_file() else site / "en"
    if any(re.search(r'class="arithmatex">\s*\\[(\[]', t) for t in texts.values()):
        found.append("hooks-math")
    rope = en / "rope"
    if not (rope / "rope.ipynb").is_file() or not (rope / "rope.py").is_file():
        found.append("hooks-notebooks")
    if "No module named 'site_figures'" in log or not any(
        'class="posenc-figure"' in t for t in texts.values()
    ):
        found.append("hooks-figures")
    atlas = en / "atlas" / "index.html"
    if not atlas.is_file() or 'id="conv-' not in texts[atlas]:  # a section per convention
        found.append("hooks-atlas")
    if not any('class="posenc-cite"' in t for t in texts.values()):
        found.append("hooks-meta")
    zh_home = site / "zh" / "index.html"
    if not zh_home.is_file() or '<html lang="zh' not in texts.get(zh_home, ""):
        found.append("i18n")
    if not (site / "zh" / "search" / "search_index.json").is_file():
        found.append("search-zh")
    if re.search(r"(?i)template|minijinja|has no method", log) and re.search(r"(?i)error", log):
        found.append("templates")
    return found


def _venv(folder: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    python = folder / "bin" / "python"
    # the site's toolchain and posenc from the development .venv, behind the venv's own packages
    purelib = Path(sysconfig.get_paths()["purelib"])
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "zz_posenc_dev.pth").write_text(f"{purelib}\n{ROOT / 'src'}\n", encoding="utf-8")
    return python


def _newest_on_pypi(python: Path) -> str | None:
    proc = subprocess.run(
        [str(python), "-m", "pip", "index", "versions", "zensical"],
        capture_output=True,
        text=True,
    )
    m = re.search(r"zensical \(([^)]+)\)", proc.stdout)
    return m[1] if m else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="build into this folder and keep it")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        python = _venv(work / "venv")
        newest = _newest_on_pypi(python)
        install = subprocess.run(
            [str(python), "-m", "pip", "install", "--progress-bar", "off", "zensical"],
            capture_output=True,
            text=True,
        )
        got = subprocess.run(
            [str(python), "-c", "import importlib.metadata as m; print(m.version('zensical'))"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        print(f"zensical: newest on the index {newest or '?'}, installed {got or 'none'}")
        if install.returncode != 0 or not got:
            print(install.stdout[-1500:] + install.stderr[-1500:])
            print("BLOCKER install: zensical does not install here")
            return 1
        if newest and got != newest:
            why = re.findall(r"ERROR: .*", install.stdout + install.stderr)
            print(f"BLOCKER install: zensical {newest} does not install here; {got} did")
            trial = subprocess.run(
                [str(python), "-m", "pip", "install", "--dry-run", f"zensical=={newest}"],
                capture_output=True,
                text=True,
            )
            why = re.findall(r"ERROR: .*", trial.stdout + trial.stderr) or why
            for line in why[:3]:
                print(f"  {line}")
        copy = work / "site-src"
        copy.mkdir()
        for name in COPIED:
            source = ROOT / name
            if source.is_dir():
                shutil.copytree(source, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(source, copy / name)
        (copy / "node_modules").symlink_to(ROOT / "node_modules")
        out = args.keep.resolve() if args.keep else work / "site"
        build = subprocess.run(
            [str(work / "venv" / "bin" / "zensical"), "build", "-f", "mkdocs.yml"],
            cwd=copy,
            capture_output=True,
            text=True,
        )
        log = re.sub(r"\x1b\[[0-9;]*m", "", build.stdout + build.stderr)
        built = copy / "site"
        if built.is_dir() and built != out:
            shutil.rmtree(out, ignore_errors=True)
            shutil.move(str(built), str(out))
        print(f"zensical build: exit {build.returncode}, {len(_pages(out))} pages")
        if build.returncode != 0:
            lines = [line for line in log.splitlines() if line.strip(" │╭╰─")]
            print("  " + "\n  ".join(lines[-12:]))
        found = inspect_site(out, log)
        for blocker in found:
            print(f"BLOCKER {blocker}: {BLOCKERS[blocker]}")
        if not found:
            print("no blocker found: the site builds the same way (compare it page by page)")
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
