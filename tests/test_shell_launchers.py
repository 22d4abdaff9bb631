"""Programs a Shell may run that start other programs: `allow=("find", "git")` lets a
model run find and git, and not, through their options, a shell or a program it was not
given (`find -exec sh`, `git -c alias.x=!sh`, `tar --to-command`).

Real subprocesses and a real git repository: a refused command is shown not to run by
the file its payload would have made, and by the store, which records nothing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import addressable as ad
from addressable.adapters import Shell


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit."""
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, env=env, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "a@example.com")
    git("config", "user.name", "A")
    (tmp_path / "notes.txt").write_text("one\n")
    git("add", "notes.txt")
    git("commit", "-q", "-m", "first")
    return tmp_path


# Each runs `touch pwned` (or a shell that would) if its option is followed.
ESCAPES = [
    pytest.param("find . -maxdepth 0 -exec touch pwned ;", id="find -exec"),
    pytest.param("find . -maxdepth 0 -execdir sh -c 'touch pwned' ;", id="find -execdir sh"),
    pytest.param("find . -maxdepth 0 -ok touch pwned ;", id="find -ok"),
    pytest.param("git -c alias.x='!touch pwned' x", id="git -c alias"),
    pytest.param("git -c core.pager='touch pwned' -p log", id="git -c core.pager"),
    pytest.param("git --config-env=core.pager=PAGER log", id="git --config-env"),
    pytest.param("git config alias.x '!touch pwned'", id="git config writes an alias"),
    pytest.param("git config core.fsmonitor 'touch pwned'", id="git config core.fsmonitor"),
    pytest.param("git rebase -x 'touch pwned' HEAD", id="git rebase -x"),
    pytest.param("git rebase --exe='touch pwned' HEAD", id="git rebase --exec abbreviated"),
    pytest.param("git bisect run touch pwned", id="git bisect run"),
    pytest.param("git submodule foreach touch pwned", id="git submodule foreach"),
    pytest.param("git fetch --upload-pack='touch pwned' .", id="git fetch --upload-pack"),
    pytest.param("git clone -u 'touch pwned' . copy", id="git clone -u"),
    pytest.param("git clone -c core.fsmonitor='touch pwned' . copy", id="git clone -c"),
    pytest.param("git grep -O'touch pwned' one", id="git grep -O"),
    pytest.param("git --exec-path=. version", id="git --exec-path="),
    pytest.param("tar -cf a.tar --to-command='touch pwned' notes.txt", id="tar --to-command"),
    pytest.param("tar -cf a.tar --to-com='touch pwned' notes.txt", id="tar --to-command abbr"),
    pytest.param("tar -c -f a.tar -I 'touch pwned' notes.txt", id="tar -I"),
    pytest.param("tar -cvItouch -f a.tar notes.txt", id="tar -I in a cluster"),
    pytest.param("tar cIf touch a.tar notes.txt", id="tar -I old style"),
    pytest.param(
        "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='touch pwned' notes.txt",
        id="tar --checkpoint-action",
    ),
]


@pytest.mark.parametrize("command", ESCAPES)
def test_an_option_that_starts_a_program_not_allowed_is_refused_and_nothing_runs(
    disk_kit: ad.Toolkit, repo: Path, command: str
) -> None:
    shell = Shell(disk_kit, cwd=repo, allow=("find", "git", "tar"))
    with pytest.raises(ad.ScopeError) as caught:
        shell(command)
    assert "\n" not in str(caught.value) and "nothing was run" in str(caught.value)
    assert not (repo / "pwned").exists()
    assert not (repo / "a.tar").exists() and not (repo / "copy").exists()
    assert list(disk_kit.store.records()) == []


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("find . -maxdepth 0 -exec sh -c 'touch pwned' ;", id="find -exec sh"),
        pytest.param("git -c alias.x='!touch pwned' x", id="git -c alias"),
        pytest.param("tar -cf a.tar --to-command='touch pwned' notes.txt", id="tar shell"),
    ],
)
def test_without_allow_an_option_cannot_start_a_shell_either(
    disk_kit: ad.Toolkit, repo: Path, command: str
) -> None:
    shell = Shell(disk_kit, cwd=repo)
    with pytest.raises(ad.ScopeError):
        shell(command)
    assert not (repo / "pwned").exists()


@pytest.mark.parametrize(
    ("command", "allow"),
    [
        pytest.param("rg --pre ./unpack secret", ("rg",), id="rg --pre"),
        pytest.param("rg --pre=./unpack secret", ("rg",), id="rg --pre="),
        pytest.param("fd -x touch pwned", ("fd",), id="fd -x"),
        pytest.param("fd . --exec-batch touch pwned", ("fd",), id="fd --exec-batch"),
        pytest.param("sort --compress-program=./zip big.txt", ("sort",), id="sort"),
        pytest.param("rsync -avze ./relay src/ host:dest/", ("rsync",), id="rsync -e"),
        pytest.param("zip -T -TT ./check a.zip notes.txt", ("zip",), id="zip -TT"),
        pytest.param("go test -exec=./runner ./...", ("go",), id="go test -exec"),
        pytest.param("go vet --vettool ./tool ./...", ("go",), id="go vet -vettool"),
        pytest.param("find . -exec git -c core.pager=x log ;", ("find", "git"), id="nested"),
    ],
)
def test_programs_that_need_not_be_installed_are_refused_by_their_options(
    disk_kit: ad.Toolkit, tmp_path: Path, command: str, allow: tuple[str, ...]
) -> None:
    shell = Shell(disk_kit, cwd=tmp_path, allow=allow)
    with pytest.raises(ad.ScopeError, match="nothing was run"):
        shell(command)


def test_an_option_may_start_a_program_that_is_allowed(disk_kit: ad.Toolkit, repo: Path) -> None:
    shell = Shell(disk_kit, cwd=repo, allow=("find", "touch", "git", "tar", "gzip"))
    assert shell("find . -maxdepth 0 -exec touch made ;").payload.endswith(b"[exit 0]")
    assert (repo / "made").exists()
    assert shell("tar -c -f a.tgz -I gzip notes.txt").payload.endswith(b"[exit 0]")
    assert (repo / "a.tgz").exists()


@pytest.mark.parametrize(
    "command",
    [
        "git log --oneline",
        "git -C . status --short",
        "git --no-pager log -p",
        "git config --get user.name",
        "git config --list",
        "git grep -c one",
        "git commit -c HEAD --dry-run",
        "git clean -x -n",
        "git cherry -v",
        "tar -cf a.tar notes.txt",
        "tar cf b.tar notes.txt",
        "find . -name '*.txt' -newer notes.txt",
        "git --exec-path",
    ],
)
def test_ordinary_commands_of_these_programs_still_run(
    disk_kit: ad.Toolkit, repo: Path, command: str
) -> None:
    shell = Shell(disk_kit, cwd=repo, allow=("find", "git", "tar"))
    result = shell(command)
    assert b"[exit " in result.payload
    assert b"not an allowed" not in result.payload


def test_allow_shell_leaves_the_options_alone(disk_kit: ad.Toolkit, repo: Path) -> None:
    """A shell runs anything: its options bound nothing more."""
    shell = Shell(disk_kit, cwd=repo, allow_shell=True)
    shell("git -c alias.x='!touch pwned' x")
    assert (repo / "pwned").exists()
