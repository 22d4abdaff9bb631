"""A real HTTP server on 127.0.0.1 for the adapter tests, with pages and routes set by
the test, and a log of every request it received."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering
    trickle: float = 0.0  # seconds between the bytes of the body, sent one at a time
    trickle_head: bool = False  # with trickle: the status line and headers too


@dataclass
class Page:
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    etag: str | None = None
    status: int = 200
    delay: float = 0.0


Route = Callable[[Request], Reply]


class LocalServer:
    """Serves `pages` for GET (with ETag / If-None-Match) and `routes` for the rest."""

    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}
        self.routes: dict[tuple[str, str], Route] = {}
        self.requests: list[Request] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = Request(
                    self.command,
                    self.path,
                    dict(self.headers.items()),
                    self.rfile.read(length) if length else b"",
                )
                server.requests.append(request)
                reply = server.answer(request)
                if reply.delay:
                    time.sleep(reply.delay)
                try:
                    if reply.trickle and reply.trickle_head:
                        self._trickle(self._head(reply), reply.trickle)
                    else:
                        self.send_response(reply.status)
                        for name, value in reply.headers.items():
                            self.send_header(name, value)
                        self.send_header("Content-Length", str(len(reply.body)))
                        self.end_headers()
                    if self.command != "HEAD" and reply.status != 304:
                        if reply.trickle:
                            self._trickle(reply.body, reply.trickle)
                        else:
                            self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting: the test meant it to

            def _head(self, reply: Reply) -> bytes:
                lines = [
                    f"{self.protocol_version} {reply.status} {self.responses[reply.status][0]}"
                ]
                lines += [f"{name}: {value}" for name, value in reply.headers.items()]
                lines.append(f"Content-Length: {len(reply.body)}")
                return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

            def _trickle(self, data: bytes, pause: float) -> None:
                # One byte at a time: a server that is slow on purpose, never silent
                # long enough for a read timeout.
                for i in range(len(data)):
                    self.wfile.write(data[i : i + 1])
                    self.wfile.flush()
                    time.sleep(pause)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def answer(self, request: Request) -> Reply:
        route = self.routes.get((request.method, request.path.split("?", 1)[0]))
        if route is not None:
            return route(request)
        page = self.pages.get(request.path)
        if page is None or request.method != "GET":
            return Reply(404, b"not found", {"Content-Type": "text/plain"})
        headers = {"Content-Type": page.content_type}
        if page.etag:
            headers["ETag"] = page.etag
            if request.headers.get("If-None-Match") == page.etag:
                return Reply(304, b"", headers)
        return Reply(page.status, page.body, headers, page.delay)

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
