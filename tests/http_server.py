"""Test helpers for downloads: a real HTTP server on 127.0.0.1 with scripted misbehaviour, and archives.

`ScriptedServer` serves `Route`s (byte bodies) with Range support and can fail the first N requests
with 500, cut a response short after a Content-Length that promised more, ignore Range, or always
answer one status. It records every request (path, Range header, status) so tests can count them.
The archive builders make small .tar.* and .zip payloads, including hostile ones.
"""

from __future__ import annotations

import io
import re
import tarfile
import threading
import time
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_RANGE = re.compile(r"bytes=(\d+)-$")


@dataclass
class Route:
    """What the server answers on one path."""

    body: bytes
    content_type: str = "application/octet-stream"
    status: int | None = None
    """Always answer this error status instead of the body."""
    fail_first: int = 0
    """Answer 500 to this many requests before serving the body."""
    cut_at: int | None = None
    """Send only this many bytes of the payload (after a full Content-Length), then close."""
    cut_requests: int | None = None
    """Cut only the first N served requests (None: every one)."""
    honor_range: bool = True
    """Answer ``Range: bytes=N-`` with 206; False answers 200 with the whole body."""
    requests: int = 0


@dataclass(frozen=True)
class Hit:
    """One request the server saw."""

    path: str
    range: str | None
    status: int


@dataclass
class ScriptedServer:
    """A ThreadingHTTPServer on 127.0.0.1:<free port> in a background thread."""

    routes: dict[str, Route] = field(default_factory=dict)
    hits: list[Hit] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.scripted = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def add(self, path: str, route: Route) -> str:
        """Serve `route` at `path`; returns its URL."""
        self.routes[path] = route
        return self.url(path)

    def url(self, path: str) -> str:
        """The URL of `path` on this server."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{path}"

    def count(self, path: str | None = None) -> int:
        """Requests seen, for one path or in total."""
        with self._lock:
            return sum(1 for hit in self.hits if path is None or hit.path == path)

    def ranges(self, path: str) -> list[str | None]:
        """The Range header of each request to `path`, in order."""
        with self._lock:
            return [hit.range for hit in self.hits if hit.path == path]

    def record(self, hit: Hit) -> None:
        """Remember one request."""
        with self._lock:
            self.hits.append(hit)


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.0: the connection closes after each answer, so a cut body ends in EOF at once.
    protocol_version = "HTTP/1.0"

    @property
    def scripted(self) -> ScriptedServer:
        """The ScriptedServer this request belongs to."""
        return self.server.scripted  # type: ignore[attr-defined]

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        """Answer as the route for this path is scripted to."""
        route = self.scripted.routes.get(self.path)
        if route is None:
            return self._error(404)
        route.requests += 1
        if route.status is not None:
            return self._error(route.status)
        if route.requests <= route.fail_first:
            return self._error(500)
        self._serve(route, route.requests - route.fail_first)

    def _serve(self, route: Route, served: int) -> None:
        body, start = route.body, 0
        match = _RANGE.match(self.headers.get("Range", "")) if route.honor_range else None
        if match:
            start = int(match.group(1))
            if start >= len(body):
                return self._error(416, {"Content-Range": f"bytes */{len(body)}"})
        payload = body[start:]
        self._record(206 if match else 200)
        self.send_response(206 if match else 200)
        self.send_header("Content-Type", route.content_type)
        self.send_header("Content-Length", str(len(payload)))
        if match:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        self.end_headers()
        is_cut = route.cut_at is not None and (route.cut_requests is None or served <= route.cut_requests)
        self.wfile.write(payload[: route.cut_at] if is_cut else payload)
        self.wfile.flush()

    def _error(self, status: int, headers: dict[str, str] | None = None) -> None:
        self._record(status)
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _record(self, status: int) -> None:
        self.scripted.record(Hit(self.path, self.headers.get("Range"), status))

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        """Silent: keep test output clean."""


def sgf_game(index: int, size: int = 9) -> bytes:
    """A small, distinct, well-formed SGF game."""
    moves = ";B[ee];W[dc];B[cg];W[gd]"[: 6 + 6 * (index % 4)]
    return f"(;GM[1]FF[4]SZ[{size}]KM[7.5]RE[B+R]GN[game {index}]{moves})\n".encode()


def tar_bytes(files: dict[str, bytes], compression: str = "bz2",
              symlinks: dict[str, str] | None = None) -> bytes:
    """A tar archive (compression ``bz2``, ``gz``, ``xz`` or ``""``) of `files` and `symlinks`."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=f"w:{compression}") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), int(time.time())
            archive.addfile(info, io.BytesIO(data))
        for name, target in (symlinks or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            archive.addfile(info)
    return buffer.getvalue()


def zip_bytes(files: dict[str, bytes], symlinks: dict[str, str] | None = None) -> bytes:
    """A zip archive of `files`, plus `symlinks` stored with Unix symlink attributes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.create_system = 3  # Unix, so the mode bits below mean what they say
            info.external_attr = (0o120777 << 16)
            archive.writestr(info, target)
    return buffer.getvalue()
