from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

import addressable as ad
from addressable.adapters import Shell


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


def test_output_and_exit_code_are_stored_as_a_claim(kit: ad.Toolkit, tmp_path: Path) -> None:
    shell = Shell(kit, cwd=tmp_path)
    res = shell(
        ["python3", "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"]
    )
    assert res.text == "out\n[stderr]\nerr\n[exit 3]"
    assert res.record.meta == {"exit_code": 3, "timed_out": False}
    assert res.record.determinism is ad.Determinism.NONDETERMINISTIC
    with pytest.raises(ad.NotReplayable):
        kit.replay(res.id, verify=True)


def test_no_shell_unless_asked(kit: ad.Toolkit, tmp_path: Path) -> None:
    shell = Shell(kit, cwd=tmp_path)
    res = shell("echo a > file.txt")
    assert res.text == "a > file.txt\n[exit 0]"
    assert not (tmp_path / "file.txt").exists()
    with pytest.raises(ad.ScopeError, match="runs no shell"):
        shell("echo a > file.txt", shell=True)
    with pytest.raises(ValueError, match="a tool named 'shell' is already registered"):
        Shell(kit, cwd=tmp_path, allow_shell=True)
    Shell(kit, cwd=tmp_path, allow_shell=True, name="sh")("echo a > file.txt", shell=True)
    assert (tmp_path / "file.txt").read_text() == "a\n"


def test_only_allowed_environment_variables_pass(
    kit: ad.Toolkit, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEAKY_SECRET", "do-not-pass")
    monkeypatch.setenv("ALLOWED_ONE", "yes")
    shell = Shell(kit, cwd=tmp_path, env_allow=("PATH", "ALLOWED_ONE"))
    out = shell(["printenv"]).text  # `env` is a command runner, refused without allow_shell
    assert "ALLOWED_ONE=yes" in out and "LEAKY_SECRET" not in out


def test_a_timeout_is_recorded_with_the_partial_output(kit: ad.Toolkit, tmp_path: Path) -> None:
    shell = Shell(kit, cwd=tmp_path, timeout=1.0)
    res = shell(["python3", "-u", "-c", "import time; print('started'); time.sleep(30)"])
    assert res.text.startswith("started\n")
    assert "[timed out after 1 s" in res.text
    assert res.record.meta["timed_out"] is True and res.record.status is ad.Status.ERROR


def test_pure_commands_are_deterministic_and_rerun(kit: ad.Toolkit, tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("1\n")
    shell = Shell(kit, cwd=tmp_path, pure=("wc ",))
    res = shell("wc -l data.txt")
    assert res.record.determinism is ad.Determinism.DETERMINISTIC
    assert kit.replay(res.id, verify=True).changed is False
    (tmp_path / "data.txt").write_text("1\n2\n")
    assert kit.replay(res.id, verify=True).changed is True


def test_git_show_and_clean_files_are_keyed_at_the_commit(kit: ad.Toolkit, repo: Path) -> None:
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    shell = Shell(kit, cwd=repo)
    shown = shell("git show HEAD:src/app.py")
    assert shown.record.key == f"src/app.py@{sha}"
    assert shown.record.determinism is ad.Determinism.DETERMINISTIC
    assert "return 42" in shown.text
    cat = shell("cat README.md")
    assert cat.record.key == f"README.md@{sha}"
    (repo / "README.md").write_text("# changed\n")
    assert shell("cat README.md").record.determinism is ad.Determinism.NONDETERMINISTIC


def test_writing_commands_are_actions(kit: ad.Toolkit, tmp_path: Path) -> None:
    shell = Shell(kit, cwd=tmp_path, writes=("touch ", "false"))
    ok = shell("touch made.txt")
    assert ok.record.determinism is ad.Determinism.SIDE_EFFECT
    assert ok.record.outcome is ad.Outcome.COMPLETED
    failed = shell("false")
    assert failed.record.outcome is ad.Outcome.UNKNOWN
    with pytest.raises(ad.ArgumentError, match="cannot start 'no-such-command-xyz'"):
        shell("no-such-command-xyz", writes=True)
    never = [r for r in kit.store.records() if r.status is ad.Status.ERROR]
    assert [r.outcome for r in never] == [ad.Outcome.NOT_APPLIED]


def test_handle(kit: ad.Toolkit, tmp_path: Path) -> None:
    Shell(kit, cwd=tmp_path)
    assert kit.handle("shell", {"command": "echo hi"}) == "hi\n[exit 0]"
    assert kit.handle("shell", {"command": "no-such-command-xyz"}).startswith(
        "error: ArgumentError: shell: cannot start 'no-such-command-xyz'"
    )


def test_cat_is_keyed_only_when_its_output_is_the_blob(kit: ad.Toolkit, repo: Path) -> None:
    # Checked out with eol=crlf the file's bytes differ from the commit's, though
    # `git status` calls it clean: `cat` prints other bytes than `git show` would.
    env = {
        "PATH": os.environ["PATH"],
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.test",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.test",
    }
    (repo / ".gitattributes").write_text("*.txt text eol=crlf\n")
    (repo / "lines.txt").write_text("a\nb\n")
    for args in (["add", "."], ["commit", "-q", "-m", "crlf"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    (repo / "lines.txt").unlink()
    subprocess.run(["git", "checkout", "--", "lines.txt"], cwd=repo, check=True)
    shell = Shell(kit, cwd=repo)
    cat = shell("cat lines.txt")
    assert cat.text == "a\r\nb\r\n[exit 0]"
    assert cat.record.key is None
    assert cat.record.determinism is ad.Determinism.NONDETERMINISTIC
    assert shell("cat .gitattributes").record.key is not None


def test_a_credential_in_a_url_of_the_command_is_not_kept(
    disk_kit: ad.Toolkit, tmp_path: Path
) -> None:
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    shell = Shell(disk_kit, cwd=tmp_path, allow=("git", "echo"))
    url = f"http://user:GITPW@127.0.0.1:{port}/repo.git?access_token=TOKVALUE"
    failed = shell(f"git ls-remote {url}")  # git's error quotes the URL
    said = shell(f"echo {url}", pure=True)
    assert b"127.0.0.1" in failed.payload and said.payload.startswith(b"http://user:")
    for result in (failed, said):
        kept = result.record.model_dump_json().encode() + disk_kit.store.read(result.record)
        assert b"GITPW" not in kept and b"TOKVALUE" not in kept
    assert "access_token=[redacted]" in said.record.args["command"]
    # The command as kept is not the command that ran: it is not run again.
    with pytest.raises(ad.NotReplayable, match="held a credential"):
        disk_kit.replay(said.id, verify=True)
