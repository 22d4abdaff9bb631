"""Shell's arguments from code and from a model: a command or a timeout of the wrong kind
is refused in one line before anything runs, a timeout a model asks for is held to the
adapter's own, and `writes=` and `pure=` are matched against the words that run.

Real subprocesses: a refused call is shown not to run by the file it would have made.
"""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest

import addressable as ad
from addressable.adapters import Shell


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


# -- the command and the timeout, from code ------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param("5", id="a string"),
        pytest.param(True, id="a bool"),
        pytest.param([5], id="a list"),
        pytest.param(0, id="zero"),
        pytest.param(-1.0, id="negative"),
        pytest.param(math.nan, id="nan"),
        pytest.param(math.inf, id="infinity"),
        pytest.param(10**400, id="an int past any float"),
    ],
)
def test_a_bad_timeout_is_refused_before_anything_runs(
    kit: ad.Toolkit, tmp_path: Path, bad: object
) -> None:
    shell = Shell(kit, cwd=tmp_path, allow=("touch",), writes=("touch",))
    with pytest.raises(ad.ArgumentError, match="timeout") as caught:
        shell("touch made.txt", timeout=bad)  # type: ignore[arg-type]
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 300
    assert not (tmp_path / "made.txt").exists()
    assert list(kit.store.records()) == []


@pytest.mark.parametrize("bad", [0, "60", math.nan, math.inf])
def test_a_bad_timeout_is_refused_when_made(kit: ad.Toolkit, tmp_path: Path, bad: object) -> None:
    with pytest.raises(ad.ArgumentError, match="timeout"):
        Shell(kit, cwd=tmp_path, timeout=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(123, id="an int"),
        pytest.param(None, id="None"),
        pytest.param(b"touch made.txt", id="bytes"),
        pytest.param(["touch", 5], id="a list holding an int"),
        pytest.param(("touch", None), id="a tuple holding None"),
    ],
)
def test_a_command_of_the_wrong_kind_is_refused(
    kit: ad.Toolkit, tmp_path: Path, bad: object
) -> None:
    shell = Shell(kit, cwd=tmp_path)
    with pytest.raises(ad.ArgumentError, match="command") as caught:
        shell(bad)  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)
    assert list(kit.store.records()) == []


def test_a_tuple_of_words_runs(kit: ad.Toolkit, tmp_path: Path) -> None:
    assert Shell(kit, cwd=tmp_path)(("echo", "a b")).text == "a b\n[exit 0]"


# -- the timeout a model asks for ----------------------------------------------------------


@pytest.mark.parametrize(
    "asked",
    [
        pytest.param("9" * 400, id="400 nines"),
        pytest.param("1e400", id="1e400"),
        pytest.param("Infinity", id="Infinity"),
        pytest.param("120", id="120"),
    ],
)
def test_a_model_asking_past_the_limit_gets_the_limit(
    kit: ad.Toolkit, tmp_path: Path, asked: str
) -> None:
    Shell(kit, cwd=tmp_path, allow=("echo",), timeout=30.0)
    text = kit.handle("shell", '{"command": "echo hi", "timeout": ' + asked + "}")
    assert text == "hi\n[exit 0]"


def test_a_direct_handle_with_a_bad_timeout_is_one_line(kit: ad.Toolkit, tmp_path: Path) -> None:
    shell = Shell(kit, cwd=tmp_path, allow=("touch",))
    with pytest.raises(ad.ArgumentError, match="timeout"):
        shell.handle({"command": "touch made.txt", "timeout": "5"})
    assert not (tmp_path / "made.txt").exists()


# -- writes= and pure= ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "command", [" touch made.txt", "'touch' made.txt", "touch  made.txt", '"touch" made.txt']
)
def test_writes_matches_the_words_that_run(kit: ad.Toolkit, tmp_path: Path, command: str) -> None:
    shell = Shell(kit, cwd=tmp_path, allow=("touch",), writes=("touch ",))
    record = shell(command).record
    assert (tmp_path / "made.txt").exists()
    assert record.determinism is ad.Determinism.SIDE_EFFECT
    assert record.outcome is ad.Outcome.COMPLETED


def test_writes_matches_the_words_of_a_shell_command(kit: ad.Toolkit, tmp_path: Path) -> None:
    shell = Shell(kit, cwd=tmp_path, allow_shell=True, writes=("rm ",))
    (tmp_path / "gone.txt").write_text("x")
    record = shell(" 'rm' gone.txt", shell=True).record
    assert not (tmp_path / "gone.txt").exists()
    assert record.determinism is ad.Determinism.SIDE_EFFECT


def test_pure_matches_the_words_that_run(kit: ad.Toolkit, tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("1\n")
    shell = Shell(kit, cwd=tmp_path, pure=("wc -l",))
    assert shell("  wc  -l data.txt").record.determinism is ad.Determinism.DETERMINISTIC
    assert shell("wc -c data.txt").record.determinism is ad.Determinism.NONDETERMINISTIC


@pytest.mark.parametrize(
    "command",
    [
        "git commit --allow-empty -q -m x",
        "git -C . commit --allow-empty -q -m x",
        "git --no-pager -C . commit --allow-empty -q -m x",
        "git --git-dir=.git commit --allow-empty -q -m x",
    ],
)
@pytest.mark.parametrize("shell", [False, True])
def test_writes_matches_git_s_command_after_its_own_options(
    kit: ad.Toolkit, tmp_path: Path, command: str, shell: bool
) -> None:
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, env=env, check=True)
    for name, value in (("user.email", "a@example.com"), ("user.name", "A")):
        subprocess.run(["git", "config", name, value], cwd=tmp_path, env=env, check=True)
    if shell:
        run = Shell(kit, cwd=tmp_path, allow_shell=True, writes=("git commit",))
    else:
        run = Shell(kit, cwd=tmp_path, allow=("git",), writes=("git commit",))
    record = run(command, shell=shell).record
    assert record.determinism is ad.Determinism.SIDE_EFFECT
    assert record.outcome is ad.Outcome.COMPLETED
    assert run("git log --oneline").text.count("\n") >= 1


@pytest.mark.parametrize(
    ("prefix", "command"),
    [
        ("echo done >", "echo done > flag.txt"),
        ('sqlite3 db "INSERT', 'sqlite3 db "INSERT INTO t VALUES(1)"'),
        ("cp *", "cp *.txt dir/"),
    ],
)
def test_writes_matches_a_shell_command_as_written_too(
    kit: ad.Toolkit, tmp_path: Path, prefix: str, command: str
) -> None:
    shell = Shell(kit, cwd=tmp_path, allow_shell=True, writes=(prefix,))
    record = shell(command, shell=True).record
    assert record.determinism is ad.Determinism.SIDE_EFFECT
    assert record.outcome is not None


# -- the adapter's own lists -----------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        pytest.param("writes", "rm", "not one str", id="writes as one str"),
        pytest.param("pure", "git log", "not one str", id="pure as one str"),
        pytest.param("env_allow", "PATH", "not one str", id="env_allow as one str"),
        pytest.param("env_allow", ["A=B"], "not a variable's name", id="a name with ="),
        pytest.param("pure", [""], "not a non-empty str", id="an empty prefix"),
        pytest.param("writes", [5], "not a non-empty str", id="not a str"),
    ],
)
def test_a_list_given_as_one_str_or_with_a_bad_entry_is_refused(
    kit: ad.Toolkit, tmp_path: Path, option: str, value: object, said: str
) -> None:
    # `writes="rm"` read as its letters would make every command starting with r or m
    # a write, and `pure="git log"` every one starting with l or o replayable.
    with pytest.raises(ad.ArgumentError, match=said) as refused:
        Shell(kit, cwd=tmp_path, **{option: value})  # type: ignore[arg-type]
    assert len(str(refused.value).splitlines()) == 1
    assert "shell" not in [tool["name"] for tool in kit.tools("anthropic")]  # nothing made
