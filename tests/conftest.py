from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import addressable as ad
from tests.helpers import SECRET_VALUES, FakeClock, assert_no_secrets
from tests.helpers.httpserver import LocalServer


@pytest.hookimpl(optionalhook=True)  # an xdist hook: pytest runs without xdist too
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n logical` (or auto): three workers for two cores. Much of the suite waits on
    what it starts (processes, servers, sandboxes, deadlines), and a waiting worker
    leaves its core to another; with two a core, they spent more CPU on crowding it."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return -(-3 * (cores or 1) // 2)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server on a free loopback port, for the whole test session."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed: apt-get install -y redis-server")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    workdir = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(workdir),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail(f"redis-server did not start on port {port}")
            time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}/0"
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(params=["memory", "disk", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ad.Store]:
    """Each store implementation, fresh for the test."""
    if request.param == "memory":
        s = ad.open_store("memory://")
    elif request.param == "disk":
        s = ad.open_store(f"disk://{tmp_path / 'store'}")
    else:
        url = request.getfixturevalue("redis_url")
        s = ad.open_store(f"{url}?namespace=test-{uuid.uuid4().hex[:12]}")
    yield s
    s.close()


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], str]:
    """Set an environment variable to a fresh credential and remember its value."""

    def make(name: str) -> str:
        value = f"cred-{name.lower()}-{uuid.uuid4().hex}"
        monkeypatch.setenv(name, value)
        SECRET_VALUES.add(value)
        return value

    return make


@pytest.fixture
def disk_store(tmp_path: Path) -> Iterator[ad.DiskStore]:
    """A disk store; after the test, its files are searched for every credential used."""
    s = ad.DiskStore(tmp_path / "store")
    yield s
    s.close()
    assert_no_secrets(tmp_path / "store")


@pytest.fixture
def kit(store: ad.Store, clock: FakeClock) -> ad.Toolkit:
    """A kit on each store implementation in turn."""
    return ad.Toolkit(store, session="test", clock=clock)


@pytest.fixture
def disk_kit(disk_store: ad.DiskStore, clock: FakeClock) -> ad.Toolkit:
    """A kit on the default disk store: for tests of what lies above the store."""
    return ad.Toolkit(disk_store, session="test", clock=clock)


@pytest.fixture
def working_kit(work: Path) -> Iterator[ad.Toolkit]:
    """A kit as the README sets one up: its store in ./.addressable of the folder the
    agent works in (`work`, a fixture of the test's module)."""
    kit = ad.Toolkit(ad.open_store(f"disk://{work / '.addressable'}"))
    yield kit
    kit.close()


@pytest.fixture
def server() -> Iterator[LocalServer]:
    """A real HTTP server on a free loopback port, stopped after the test."""
    srv = LocalServer()
    yield srv
    srv.stop()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real git repository with one commit: README.md and src/app.py."""
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# demo\n")
    (root / "src" / "app.py").write_text("def main():\n    return 42\n")
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.test",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.test",
    }

    def git(*args: str) -> None:
        subprocess.run(
            ["git", *args],
            cwd=root,
            check=True,
            capture_output=True,
            env={**env, "PATH": os.environ["PATH"]},
        )

    git("init", "-q", "-b", "main")
    git("add", ".")
    git("commit", "-q", "-m", "first")
    return root
