"""First-view weight of built pages: ``python -m bench.page_weight [SITE] [--page /sinusoidal/ ...]``.

Each page is opened in a fresh Chromium context (empty cache) at a phone's viewport (412 x 823,
Lighthouse's mobile preset), served by ``bench.site_server`` (gzip as a static host does), and
left until the network is idle, untouched. Every response is counted with the bytes that crossed
the wire (compressed body + headers), web workers' requests included (the search worker's script;
the search index and engine load only once the reader starts searching). Prints one row per page,
heaviest first, and the largest resources of the heaviest page.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .site_server import serve

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("POSENC_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
VIEWPORT = {"width": 412, "height": 823}


def all_pages(site: Path) -> list[str]:
    """URL paths of every built page (``/``, ``/rope/``, ``/zh/``, ...), 404 pages excluded."""
    out = []
    for html in sorted(site.rglob("index.html")):
        rel = html.parent.relative_to(site).as_posix()
        if rel.split("/")[-1] in ("search", "assets") or "/assets/" in f"/{rel}/":
            continue
        out.append("/" if rel == "." else f"/{rel}/")
    return out


def measure(browser, base: str, path: str) -> dict:  # type: ignore[no-untyped-def]
    """Bytes transferred and requests made by the first view of ``path``."""
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=2.625, is_mobile=True)
    page = context.new_page()
    responses = []
    context.on("requestfinished", lambda req: responses.append(req))
    page.goto(base + path, wait_until="load")
    page.wait_for_load_state("networkidle")
    rows = []
    for req in responses:
        sizes = req.sizes()
        body = sizes["responseBodySize"]
        if not body:  # Chromium reports 0 for a worker's own script: take its Content-Length
            response = req.response()
            body = int(response.headers.get("content-length", 0)) if response else 0
        rows.append((body + sizes["responseHeadersSize"], req.url[len(base) :]))
    context.close()
    rows.sort(reverse=True)
    return {
        "path": path,
        "bytes": sum(b for b, _ in rows),
        "requests": len(rows),
        "resources": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.page_weight", description=__doc__)
    parser.add_argument("site", nargs="?", type=Path, default=ROOT / "site")
    parser.add_argument("--page", action="append", help="URL path to measure (default: every page)")
    parser.add_argument(
        "--top", type=int, default=12, help="resources listed for the heaviest page"
    )
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with serve(args.site) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        results = [measure(browser, base, path) for path in (args.page or all_pages(args.site))]
        browser.close()
    results.sort(key=lambda r: -r["bytes"])
    print(f"{'page':32s} {'KiB':>8s} {'requests':>9s}")
    for r in results:
        print(f"{r['path']:32s} {r['bytes'] / 1024:8.1f} {r['requests']:9d}")
    heaviest = results[0]
    print(f"\nheaviest: {heaviest['path']}")
    for nbytes, url in heaviest["resources"][: args.top]:
        print(f"  {nbytes / 1024:8.1f} KiB  {url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
