"""The sandbox holds on its own: with a shell allowed (so that no reading of options
stands in the way), what a command tries against the files, the store, the network and
the other processes is stopped by the system, and nothing outlives the call."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
from pathlib import Path

import pytest

import addressable as ad
from addressable.adapters import NoSandbox, Shell
from addressable.adapters.shell import sandbox


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@pytest.fixture
def kit(working_kit: ad.Toolkit) -> ad.Toolkit:
    return working_kit


def _sh(kit: ad.Toolkit, work: Path, *, name: str = "sh", network: bool = False) -> Shell:
    return Shell(kit, cwd=work, allow_shell=True, name=name, network=network)


def _run(shell: Shell, command: str) -> ad.Result:
    return shell(command, shell=True, writes=False)


def test_a_command_writes_in_its_folder_and_nowhere_else(
    kit: ad.Toolkit, work: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    shell = _sh(kit, work)
    res = _run(shell, f"echo in > inside.txt; echo out > {outside}/x; echo home > ~/x; echo done")
    assert (work / "inside.txt").read_text() == "in\n"
    assert list(outside.iterdir()) == []
    assert "done" in res.text
    # its /tmp is its own, and gone after the call
    _run(shell, "echo t > /tmp/left-behind")
    assert not Path("/tmp/left-behind").exists()


def test_the_store_in_the_folder_is_hidden_and_unchanged(kit: ad.Toolkit, work: Path) -> None:
    shell = _sh(kit, work)
    store = work / ".addressable"
    before = sorted(p.name for p in store.iterdir())
    assert "cache.db" in before
    res = _run(shell, "ls -A .addressable; rm -rf .addressable; echo x > .addressable/db")
    assert res.text.startswith("[stderr]")  # nothing listed: the folder shows empty
    assert "db" not in {p.name for p in store.iterdir()}
    assert set(before) <= {p.name for p in store.iterdir()}
    assert kit.store.verify().ok and kit.replay(res.id).text == res.text


def test_a_store_outside_the_folder_and_the_home_folder_cannot_be_read(
    work: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    kit = ad.Toolkit(ad.open_store(f"disk://{store}"))
    shell = _sh(kit, work)
    res = _run(shell, f"ls {store} || echo no store; ls {Path.home()} || echo no home")
    assert "no store" in res.text and "no home" in res.text
    kit.close()


def test_the_system_s_secrets_cannot_be_read(kit: ad.Toolkit, work: Path, tmp_path: Path) -> None:
    # The machine's own (/etc/shadow is there on Debian), read as root would read it.
    assert Path("/etc/shadow").is_file()
    res = _run(_sh(kit, work), "cat /etc/shadow; echo end")
    assert res.text.startswith("end\n") and "root:" not in res.text  # nothing of it read


def test_git_config_and_hooks_are_read_only(kit: ad.Toolkit, work: Path) -> None:
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    config = (work / ".git" / "config").read_bytes()
    hooks = work / ".git" / "hooks"
    for hook in hooks.iterdir():
        hook.unlink()
    hooks.rmdir()
    shell = _sh(kit, work)
    _run(shell, "echo '[core] hooksPath = /tmp' >> .git/config; mkdir -p .git/hooks")
    _run(shell, "printf '#!/bin/sh\\necho pwned' > .git/hooks/pre-commit")
    assert (work / ".git" / "config").read_bytes() == config
    assert not (hooks / "pre-commit").exists()
    # the rest of the repository is the command's to change: git add works
    (work / "a.txt").write_text("a\n")
    res = _run(shell, "git add a.txt && git status --short")
    assert "A  a.txt" in res.text


def test_git_works_in_a_subfolder_of_a_repository_which_it_cannot_change(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    sub = repo / "pkg"
    sub.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "top.txt").write_text("top\n")
    (sub / "a.txt").write_text("a\n")
    kit = ad.Toolkit(ad.open_store(f"disk://{tmp_path / 'store'}"))
    shell = _sh(kit, sub)
    res = _run(shell, "git status --short; echo x > ../top.txt; echo y > b.txt; echo end")
    assert "?? ./" in res.text or "?? a.txt" in res.text  # git found its repository
    assert "end" in res.text and (sub / "b.txt").read_text() == "y\n"
    assert (repo / "top.txt").read_text() == "top\n"  # above the folder: read-only
    kit.close()


@pytest.mark.parametrize("folder", ["/", "home", "/usr", "/etc"])
def test_a_folder_that_holds_the_system_or_the_home_folder_is_refused(
    kit: ad.Toolkit, folder: str
) -> None:
    cwd = Path.home() if folder == "home" else Path(folder)
    with pytest.raises(ad.ArgumentError, match=r"^Shell: commands cannot write in .*cwd$"):
        Shell(kit, cwd=cwd, allow_shell=True)
    assert [t["name"] for t in kit.tools()] == ["replay_result"]  # no shell was added
    Shell(kit, cwd=cwd, allow_shell=True, sandbox=False)  # the caller's own choice


def test_a_store_under_a_folder_given_read_only_is_hidden(work: Path, tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    store = tools / "store"
    kit = ad.Toolkit(ad.open_store(f"disk://{store}"))
    (tools / "tool.txt").write_text("tool\n")
    shell = Shell(kit, cwd=work, allow_shell=True, read_only=[tools])
    res = _run(shell, f"cat {tools}/tool.txt; ls -A {store}; echo end")
    assert res.text.startswith("tool\nend\n")  # the folder is read, the store shows empty
    kit.close()


def test_no_network_unless_asked(kit: ad.Toolkit, work: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        accepted: list[bool] = []

        def accept() -> None:
            server.settimeout(20)
            try:
                connection, _ = server.accept()
            except OSError:
                return
            connection.close()
            accepted.append(True)

        thread = threading.Thread(target=accept)
        thread.start()
        probe = f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5)\""
        denied = _run(_sh(kit, work), probe + " && echo connected")
        assert "connected" not in denied.text and not accepted
        allowed = _run(_sh(kit, work, network=True, name="net"), probe + " && echo connected")
        thread.join()
        assert "connected" in allowed.text and accepted


def test_other_processes_are_out_of_sight_and_reach(kit: ad.Toolkit, work: Path) -> None:
    res = _run(_sh(kit, work), f"kill -0 {os.getpid()} && echo reached; ls /proc | grep -c .")
    assert "reached" not in res.text


def _running(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry.name))
    return found


def test_nothing_outlives_the_call(kit: ad.Toolkit, work: Path) -> None:
    # Many daemons, so that the system takes a while to end them: the call returns only
    # when it has (bwrap itself exits a moment before).
    marker = "4321.5"  # seconds of a sleep that no other test starts
    command = (
        'python3 -c "import subprocess\nfor _ in range(300): subprocess.Popen('
        f"['sleep', '{marker}'], start_new_session=True, stdout=subprocess.DEVNULL, "
        'stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)"; echo started'
    )
    shell = _sh(kit, work)
    for _ in range(3):
        res = _run(shell, command)
        left = _running(marker)
        for pid in left:  # a failing run leaves nothing behind either
            os.kill(pid, signal.SIGKILL)
        assert "started" in res.text and left == []


def test_the_environment_is_what_the_user_passed(kit: ad.Toolkit, work: Path) -> None:
    def names(**options: bool) -> set[str]:
        name = "shell" if options.get("sandbox", True) else "plain"
        shell = Shell(
            kit, cwd=work, env_allow=("PATH",), env={"GREETING": "hi"}, name=name, **options
        )
        text = shell(["cat", "/proc/self/environ"]).text
        pairs = text.rsplit("\n[exit", 1)[0].split("\0")
        return {pair.split("=", 1)[0] for pair in pairs if pair}

    # bubblewrap adds PWD, the folder the command starts in, which it knows already
    assert names() == {"GREETING", "PATH", "PWD"}
    assert names(sandbox=False) == {"GREETING", "PATH"}


def test_without_bwrap_shell_refuses_to_start_unless_told(
    kit: ad.Toolkit, work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    sandbox.bwrap.cache_clear()
    try:
        with pytest.raises(NoSandbox, match="bwrap is not installed") as caught:
            Shell(kit, cwd=work)
        assert "\n" not in str(caught.value) and "sandbox=False" in str(caught.value)
        res = Shell(kit, cwd=work, sandbox=False)(["/bin/echo", "unsandboxed"])
        assert res.text == "unsandboxed\n[exit 0]"
    finally:
        sandbox.bwrap.cache_clear()
