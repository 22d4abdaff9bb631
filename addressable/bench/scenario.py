"""The bundled scenario: a research task run by a scripted agent with the real adapters
over a real corpus, needing no download and no model.

The corpus is the documentation of installed standard library modules, rendered to HTML
by pydoc and served by a local HTTP server (as http://docs.local/library/NAME.html), and
indexed by the local search backend. The task: for each of the item modules, does its
documentation say whether it is thread-safe, and where? Some say so; most do not, so
negative findings, Claims (searches) and References (pages) all occur. The agent
searches, reads, searches again where a page is silent, re-reads its positive findings
to quote them, checks some related pages its first searches turned up, and writes a
report. Its trajectory is built at run time and can be written as JSONL.

This module uses the adapters: like the CLI, the benchmark is a face that knows every part.
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import json
import pydoc
import re
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from .. import Task, Toolkit, open_store
from .sessions import RecordedFinding, Session

HOST = "docs.local"
CLOCK = datetime(2026, 3, 11, 9, 0, tzinfo=UTC)  # fixed: the same figures on every run
ITEMS = [
    "threading",
    "queue",
    "logging",
    "sqlite3",
    "asyncio",
    "random",
    "socket",
    "ssl",
    "selectors",
    "concurrent.futures",
    "multiprocessing",
    "subprocess",
    "io",
    "weakref",
    "decimal",
    "collections",
    "heapq",
    "json",
    "pathlib",
    "shutil",
    "tempfile",
    "signal",
    "http.client",
    "urllib.request",
    "pickle",
    "copy",
    "array",
    "struct",
    "codecs",
    "locale",
    "argparse",
    "configparser",
    "hashlib",
    "uuid",
    "ipaddress",
    "mmap",
    "smtplib",
    "ftplib",
    "xmlrpc.client",
    "shelve",
    "dbm",
    "inspect",
    "traceback",
    "warnings",
    "contextlib",
    "enum",
    "dataclasses",
    "tracemalloc",
]
EXTRA = [
    "contextvars",
    "functools",
    "zipfile",
    "tarfile",
    "csv",
    "gc",
    "sched",
    "select",
    "atexit",
    "email",
    "textwrap",
    "difflib",
]  # in the corpus, not in the task
_MENTION = re.compile(r"[^\n.]*\b(thread[- ]?safe\w*|threadsafety|thread safety)\b[^\n.]*", re.I)
_ADDRESS = re.compile(r"(?: |&nbsp;)at(?: |&nbsp;)0x[0-9a-fA-F]+")
_URL = re.compile(r"http://docs\.local/library/[\w.]+\.html")


def corpus(modules: list[str]) -> dict[str, bytes]:
    """pydoc's HTML documentation of each module that imports here."""
    pages = {}
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        html = pydoc.html.page(pydoc.describe(module), pydoc.html.document(module, name))
        # Object reprs carry memory addresses, which differ from run to run.
        pages[name] = _ADDRESS.sub("", html).encode("utf-8")
    return pages


@contextmanager
def serve(pages: dict[str, bytes]) -> Iterator[int]:
    """Serve the pages on a free loopback port; yields the port."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            match = re.fullmatch(r"/library/([\w.]+)\.html", self.path)
            body = pages.get(match[1]) if match else None
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


class _ToLoopback(httpx.BaseTransport):
    """Sends requests for docs.local to the local server, so that URLs (and so token
    counts) are the same whatever port the server got."""

    def __init__(self, port: int) -> None:
        self._port = port
        self._inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        # A new request for the wire; the client keeps the original, so the response's
        # URL stays the docs.local one.
        wire = httpx.Request(
            request.method,
            request.url.copy_with(host="127.0.0.1", port=self._port),
            headers=request.headers,
            stream=request.stream,
            extensions=request.extensions,
        )
        return self._inner.handle_request(wire)

    def close(self) -> None:
        self._inner.close()


def url(module: str) -> str:
    return f"http://{HOST}/library/{module}.html"


def build(progress: Callable[[str], None] | None = None) -> tuple[Session, Toolkit]:
    """Run the scripted agent; returns its session and the kit that recorded it."""
    # Imported by name: the core never imports the adapters; the benchmark, like the
    # CLI, is a face that uses them.
    adapters: Any = importlib.import_module("addressable.adapters")
    html_title, html_to_text = adapters.html_title, adapters.html_to_text

    say = progress or (lambda text: None)
    say("rendering the corpus with pydoc")
    pages = corpus(ITEMS + EXTRA)
    items = [m for m in ITEMS if m in pages]
    task = Task(
        text="For each of these standard library modules, does its documentation "
        "say whether it is thread-safe, and where? Write the answers to "
        "report.md.",
        items=items,
    )
    counter = itertools.count()
    kit = Toolkit(
        open_store("memory://"),
        session="scenario",
        clock=lambda: CLOCK,
        nonce=lambda: next(counter).to_bytes(8, "big"),
        # The session as the tools gave it: the benchmark applies the first-sight cap to
        # every strategy alike, as its own option (--first-sight).
        max_result_tokens=None,
    )  # action ids repeat too
    with (
        serve(pages) as port,
        tempfile.TemporaryDirectory() as workdir,
        httpx.Client(transport=_ToLoopback(port)) as client,
    ):
        index = adapters.LocalIndex()
        for name, html in pages.items():
            text = html.decode("utf-8")
            index.add(url(name), html_title(text) or name, html_to_text(text))
        adapters.Fetch(kit, client=client)
        adapters.Search(kit, index, limit=3, reuse_within=None)
        adapters.Files(kit, workdir)
        agent = _Agent(kit, task)
        say("running the scripted agent")
        agent.run(items)
    session = Session(
        session_id="bundled-stdlib-thread-safety",
        task=task,
        system="You are a careful research agent. Use the tools; cite where "
        "each answer comes from.",
        findings=agent.findings,
        messages=agent.messages,
        shape="flat",
    )
    return session, kit


class _Agent:
    """The scripted agent: what a careful model would do, step by step."""

    def __init__(self, kit: Toolkit, task: Task) -> None:
        self.kit = kit
        self.messages: list[dict[str, Any]] = [
            {"role": "user", "content": task.text + "\nModules: " + ", ".join(task.items)}
        ]
        self.findings: list[RecordedFinding] = []
        self.notes: list[str] = []
        self.related: list[str] = []  # pages its searches found besides the one it read
        self._calls = 0
        self._noted = ""

    def call(self, thought: str, name: str, arguments: dict[str, Any]) -> str:
        call_id = f"call_{self._calls:04}"
        self._calls += 1
        if self._noted:  # the model writes down what it found before its next step
            thought = f"Noted: {self._noted} {thought}"
            self._noted = ""
        self.messages.append(
            {
                "role": "assistant",
                "content": thought,
                "tool_calls": [{"id": call_id, "name": name, "arguments": arguments}],
            }
        )
        text = self.kit.handle(name, arguments)
        self.messages.append(
            {"role": "tool", "tool_call_id": call_id, "name": name, "content": text}
        )
        return text

    def note(self, item: str, status: str, established: str, evidence: list[str]) -> None:
        self.notes.append(f"- {item}: {established}")
        self._noted = f"{item}: {established}."
        self.findings.append(
            RecordedFinding(
                item=item,
                status=status,
                established=established,
                evidence=evidence,
                turn=len(self.messages),
            )
        )

    def run(self, items: list[str]) -> None:
        found: list[tuple[str, str]] = []
        for item in items:
            hits = _URL.findall(
                self.call(
                    f"Looking for the documentation of {item}.",
                    "search",
                    {"query": f"{item} thread safe"},
                )
            )
            page = url(item) if url(item) in hits else (hits[0] if hits else url(item))
            self.related += [h for h in hits if h != page and h not in self.related]
            text = self.call(f"Reading the {item} page.", "fetch", {"url": page})
            mention = _MENTION.search(text)
            if mention:
                quote = " ".join(mention[0].split())[:160]
                self.note(item, "found", f'its documentation says "{quote}" ({page})', [page])
                found.append((item, page))
                continue
            query = f"{item} threadsafety lock"
            others = self.call(
                f"The {item} page does not say; searching once more.", "search", {"query": query}
            )
            self.related += [h for h in _URL.findall(others) if h not in self.related]
            self.note(
                item,
                "not found",
                f"neither its page ({page}) nor a search for "
                f"'{query}' says whether it is thread-safe",
                [page],
            )
        # Re-read each positive finding, to quote it exactly in the report.
        for item, page in found:
            self.call(f"Re-reading the {item} page to quote it.", "fetch", {"url": page})
        # Check the related pages the first searches turned up and were not read yet.
        read = {u for _, u in found} | {url(i) for i in items}
        for page in [r for r in self.related if r not in read][:4]:
            self.call("Checking a related page from an earlier search.", "fetch", {"url": page})
        report = (
            "# Thread safety in the standard library documentation\n\n"
            + "\n".join(self.notes)
            + "\n"
        )
        self.call(
            "Writing the report.",
            "files",
            {"command": "write", "path": "report.md", "content": report},
        )


def write_trajectory(session: Session, path: str) -> None:
    """The scenario's session as one JSONL line, readable by `addressable bench --trace`."""
    data = session.model_dump(exclude={"shape"})
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(data, ensure_ascii=False) + "\n")
