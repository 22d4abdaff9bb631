"""A hostile model against the sandbox, whatever programs it is allowed: for each set
(the docs' `git` and `ls`, `find` beside `tar` or `git`, `git` alone), commands that try
to write outside the folder, read the store, reach the network or leave a process
running. Each is either refused before it runs or run and stopped by the system: its
effect is looked for outside the sandbox, not in what the command printed."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from pathlib import Path

import pytest

import addressable as ad
from addressable.adapters import Shell
from tests.helpers.httpserver import LocalServer


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / "a.txt").write_text("a\n")
    (folder / "src").mkdir()
    (folder / "src" / "b.txt").write_text("b\n")
    git = ["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "a.txt", "src"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], check=True)
    return folder


@pytest.fixture
def kit(working_kit: ad.Toolkit) -> ad.Toolkit:
    return working_kit


ATTACKS = [
    # writing outside the folder
    (("git", "ls"), "git clone -q --bare . {outside}/repo.git"),
    (("git", "ls"), "git init -q {outside}/repo"),
    (("find", "tar"), "tar cf {outside}/x.tar a.txt"),
    (("find", "tar"), "tar -C {outside} -xf archive.tar"),
    (("find", "tar"), "find . -maxdepth 1 -name a.txt -fprint {outside}/found"),
    (("find", "tar"), "find . -name a.txt -exec tar cf {outside}/y.tar {{}} ;"),
    (("find", "git"), "find . -name b.txt -fprintf {outside}/z %p"),
    (("find", "git"), "git worktree add {outside}/tree"),
    (("git",), "git bundle create {outside}/all.bundle --all"),
    # reading the store, in the folder as the README sets it up
    (("git", "ls"), "ls -laR .addressable"),
    (("find", "tar"), "tar cvf - .addressable"),
    (("find", "tar"), "find .addressable -type f"),
    (("find", "git"), "git add -f .addressable"),
    # reaching the network: a server on the host's loopback
    (("git", "ls"), "git ls-remote {url}"),
    (("git",), "git clone -q {url}x.git"),
    (("find", "git"), "git fetch {url}"),
    # leaving a process behind
    (("git",), "git daemon --base-path=. --export-all --detach --reuseaddr --port={port}"),
    (("find", "git"), "git daemon --base-path=. --detach --reuseaddr --port={port}"),
]


def _left(marker: str) -> list[int]:
    """Processes on the machine whose command line holds `marker`: killed, and named."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(marker.encode() == part for part in cmdline[1:]):
            found.append(int(entry.name))
            os.kill(int(entry.name), signal.SIGKILL)
    return found


@pytest.mark.parametrize(("allow", "command"), ATTACKS, ids=[c for _, c in ATTACKS])
def test_what_a_command_tries_is_stopped(
    kit: ad.Toolkit,
    work: Path,
    tmp_path: Path,
    server: LocalServer,
    allow: tuple[str, ...],
    command: str,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    with socket.socket() as free:  # a port of this test's own: others run beside it
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    mark = f"--port={port}"
    subprocess.run(["tar", "cf", str(work / "archive.tar"), "-C", str(work), "a.txt"], check=True)
    shell = Shell(kit, cwd=work, allow=allow)
    try:
        res = shell(command.format(outside=outside, url=server.url("/"), port=port))
    except ad.ScopeError:
        res = None  # refused before it ran: nothing to look for, but look all the same
    assert list(outside.iterdir()) == []
    assert server.requests == []
    assert _left(mark) == []
    with socket.socket() as probe:  # nothing listens on the host where the daemon would
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    if res is not None:
        assert "cache.db" not in res.text
    tracked = subprocess.run(["git", "-C", str(work), "ls-files"], capture_output=True, text=True)
    assert ".addressable" not in tracked.stdout
    assert kit.store.verify().ok
