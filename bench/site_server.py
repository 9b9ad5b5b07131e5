"""A local static server for the built site that gzips as a static host does.

Text types (HTML, CSS, JavaScript, JSON, SVG, XML) are sent gzip-compressed (level 6, what nginx
and GitHub Pages use) when the client accepts it; fonts and images go out as they are. Used by
``bench/lighthouse.py`` and ``bench/page_weight.py`` so that the bytes they report are the bytes a
reader would download.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

COMPRESSIBLE = (".html", ".css", ".js", ".json", ".svg", ".xml", ".txt", ".inv", ".map")


class _GzipHandler(http.server.SimpleHTTPRequestHandler):
    _cache: dict[Path, bytes] = {}

    def log_message(self, *args: object) -> None:
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def send_head(self):  # type: ignore[no-untyped-def]
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        gz = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (gz and path.is_file() and path.suffix in COMPRESSIBLE):
            return super().send_head()
        if (
            not self.path.split("?", 1)[0].endswith("/")
            and (Path(self.translate_path(self.path))).is_dir()
        ):
            return super().send_head()  # the redirect to the slash-terminated URL
        body = self._cache.get(path)
        if body is None:
            body = gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)
            self._cache[path] = body
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        import io

        return io.BytesIO(body)


@contextlib.contextmanager
def serve(site: Path, port: int = 0) -> Iterator[str]:
    """Serve ``site`` on 127.0.0.1 in a background thread; yields the base URL (no slash)."""
    site = Path(site)
    if not (site / "index.html").is_file():
        raise FileNotFoundError(f"site must be a built site folder with index.html, got {site}")
    handler = type("Handler", (_GzipHandler,), {"_cache": {}})
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", port), functools.partial(handler, directory=str(site))
    )
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
