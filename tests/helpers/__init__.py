"""What the tests share, besides the fixtures (tests/conftest.py): a clock moved by hand,
records put in a store, the credentials the tests handed out, and where the fixtures and
the scripts the tests run as processes are.

The parts that need more room are modules beside this one: `httpserver` (a real HTTP
server on 127.0.0.1), `modelloop` (a model loop without a model, as each API's message
list), `needs` (what later calls need of earlier results), `scripted_model` (a model
behind the SDKs' mocked transport), `bundles` (bundles written and read back by hand)
and `mcp_client` (the `addressable` command and an MCP client over stdio).
"""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import addressable as ad

TESTS = Path(__file__).resolve().parent.parent
ROOT = TESTS.parent  # the repository
FIXTURES = TESTS / "fixtures"
SCRIPTS = TESTS / "scripts"  # run as processes, never imported
WRITER = SCRIPTS / "writer.py"

DAY = timedelta(days=1)


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 3, 11, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kwargs: float) -> None:
        self.now += timedelta(**kwargs)


def put_two_sharing_a_prefix(
    store: ad.Store, when: datetime, session: str | None = None
) -> tuple[str, str]:
    """Store two records whose ids share the prefix abcdef, seen in `session`; returns
    their ids."""
    ids = ("abcdef0000000001", "abcdef0000000002")
    base = ad.Record(
        id=ids[0],
        tool="t",
        args={},
        determinism="deterministic",
        content_hash=ad.ids.content_hash(b"p"),
        size=1,
        media_type="text/plain",
        observed_at=when,
        session=session,
    )
    store.put(base, b"p")
    store.put(base.model_copy(update={"id": ids[1]}), b"p")
    return ids


def exists(store: ad.Store, record_id: str) -> bool:
    try:
        store.get(record_id)
    except ad.NotFound:
        return False
    return True


# Every credential a test hands to the toolkit, so that the stores can be searched for it.
SECRET_VALUES: set[str] = set()


def assert_no_secrets(folder: Path) -> None:
    """No credential any test used appears in the bytes of any file under `folder`."""
    for file in folder.rglob("*"):
        if file.is_file():
            data = file.read_bytes()
            leaked = [v for v in SECRET_VALUES if v.encode() in data]
            assert not leaked, f"{file} holds a credential"


def run_writers(store: str, writers: int, count: int, shared: int = 0) -> list[list[str]]:
    """Start `writers` writer processes (scripts/writer.py) on one store at once; the ids
    each printed."""
    procs = [
        subprocess.Popen(
            [sys.executable, str(WRITER), store, f"w{n}", str(count), "0", str(shared)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(writers)
    ]
    outputs = []
    for proc in procs:
        with proc:
            outputs.append(proc.communicate(timeout=600)[0].split())
    assert [p.returncode for p in procs] == [0] * writers
    return outputs
