"""A model's input to Shell and Search: which programs run, bad commands, search limits.

Real subprocesses: a refused command is shown not to run by the file it would have made.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import addressable as ad
from addressable.adapters import LocalIndex, Search, Shell

MAX_LIMIT = 100  # the most hits one search may ask for (adapters.search.MAX_LIMIT)
MAX_QUERY = 2000  # characters a query may have (adapters.search.MAX_QUERY)


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


def _description(kit: ad.Toolkit, name: str) -> str:
    return next(str(t["description"]) for t in kit.tools() if t["name"] == name)


# -- which programs a model may run ----------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "sh -c 'echo 42 | cat; echo x > made.txt'",
        "/bin/sh -c 'echo x > made.txt'",
        "env sh -c 'echo x > made.txt'",
        "env -i touch made.txt",
        "bash -c 'echo x > made.txt'",
        "dash -c 'echo x > made.txt'",
        "timeout 5 touch made.txt",
        "nice touch made.txt",
        "nohup touch made.txt",
        "xargs -a names.txt touch",
        "busybox touch made.txt",
        "setarch x86_64 sh -c 'echo x > made.txt'",
        "linux64 sh -c 'echo x > made.txt'",
        "ssh-agent sh -c 'echo x > made.txt'",
        "dbus-run-session -- touch made.txt",
        "valgrind -q touch made.txt",
        "gdb -batch -ex '!touch made.txt'",
        "tmux new -d 'touch made.txt'",
        "hyperfine --runs 1 'touch made.txt'",
    ],
)
def test_without_allow_shell_no_shell_or_runner_runs(
    kit: ad.Toolkit, tmp_path: Path, command: str
) -> None:
    (tmp_path / "names.txt").write_text("made.txt\n")
    Shell(kit, cwd=tmp_path)
    text = kit.handle("shell", {"command": command})
    assert text.startswith("error: ScopeError: shell: ") and "nothing was run" in text
    assert "\n" not in text
    assert not (tmp_path / "made.txt").exists()
    assert list(kit.store.records()) == []
    shell = Shell(kit, cwd=tmp_path, name="direct", writes=("touch",))
    with pytest.raises(ad.ScopeError, match="shell or a command runner"):
        shell(command)
    assert not (tmp_path / "made.txt").exists() and list(kit.store.records()) == []


def test_the_description_says_what_the_model_may_run(kit: ad.Toolkit, tmp_path: Path) -> None:
    Shell(kit, cwd=tmp_path)
    Shell(kit, cwd=tmp_path, allow=("git", "wc", "ls"), name="tools")
    Shell(kit, cwd=tmp_path, allow_shell=True, name="sh")
    plain = _description(kit, "shell")
    assert "no shell runs it" in plain and "(sh, bash, env, xargs" in plain
    assert "refused" in plain
    listed = _description(kit, "tools")
    assert listed.endswith("one of these programs: git, wc, ls.")
    assert "refused" not in listed
    assert _description(kit, "sh").startswith("Run a shell command")


def test_with_allow_only_the_programs_named_run(kit: ad.Toolkit, tmp_path: Path) -> None:
    Shell(kit, cwd=tmp_path, allow=("echo", "touch"))
    assert kit.handle("shell", {"command": "echo hi"}) == "hi\n[exit 0]"
    for command in ("ls", "/bin/echo hi", "./echo hi", "/usr/bin/touch made.txt", "Touch x"):
        text = kit.handle("shell", {"command": command})
        assert text.startswith("error: ScopeError: shell: ")
        assert "is not an allowed program (allowed: echo, touch); nothing was run" in text
    assert not (tmp_path / "made.txt").exists()
    assert [r.args["command"] for r in kit.store.records()] == ["echo hi"]
    assert kit.handle("shell", {"command": "touch made.txt"}) == "[exit 0]"
    assert (tmp_path / "made.txt").exists()


def test_a_path_or_a_runner_runs_when_the_user_named_it(kit: ad.Toolkit, tmp_path: Path) -> None:
    shell = Shell(kit, cwd=tmp_path, allow=("/bin/echo", "sh"))
    assert shell("/bin/echo via path").text == "via path\n[exit 0]"
    with pytest.raises(ad.ScopeError, match="not an allowed program"):
        shell("echo hi")
    shell("sh -c 'echo x > made.txt'")
    assert (tmp_path / "made.txt").read_text() == "x\n"
    with pytest.raises(ad.ScopeError, match="not an allowed program"):
        shell(["bash", "-c", "true"])  # an argument list is checked the same way


def test_allow_given_wrongly_is_refused_when_made(kit: ad.Toolkit, tmp_path: Path) -> None:
    bad: list[dict[str, object]] = [
        {"allow": "git"},  # one string, not a tuple of names
        {"allow": ("git status",)},  # a command prefix, as pure= and writes= take
        {"allow": ("",)},
        {"allow": ()},  # no program at all: None is "any"
        {"allow": ("git",), "allow_shell": True},  # a shell's first word bounds nothing
    ]
    for options in bad:
        with pytest.raises(ad.ArgumentError) as caught:
            Shell(kit, cwd=tmp_path, **options)  # type: ignore[arg-type]
        assert "\n" not in str(caught.value)
    assert [t["name"] for t in kit.tools()] == ["replay_result"]  # none was registered


def test_runners_cover_the_shells_and_runners_the_review_named() -> None:
    from addressable.adapters.shell import RUNNERS

    named = "sh bash dash zsh ksh fish env xargs busybox nohup timeout nice sudo doas su"
    assert set(named.split()) <= RUNNERS


# -- commands that cannot be run as given ----------------------------------------------


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("", "the command is empty"),
        ("   \n", "the command is empty"),
        ("touch made.txt 'unbalanced", "cannot be split into words (No closing quotation)"),
        ("touch made.txt \\", "cannot be split into words (No escaped character)"),
        ("touch made.txt a\x00b", "the command holds a NUL byte"),
        ("touch made.txt \udc80", "lone surrogate"),
    ],
)
def test_a_bad_command_is_one_line_and_nothing_runs(
    kit: ad.Toolkit, tmp_path: Path, command: str, why: str
) -> None:
    shell = Shell(kit, cwd=tmp_path, writes=("touch",))
    text = kit.handle("shell", {"command": command})
    assert text.startswith("error: ArgumentError: ") and why in text
    assert "\n" not in text
    with pytest.raises(ad.ArgumentError) as caught:
        shell(command)
    assert why in str(caught.value) and "\n" not in str(caught.value)
    assert not (tmp_path / "made.txt").exists()
    assert list(kit.store.records()) == []


@pytest.mark.parametrize("argv", [[], [""], ["touch", "made.txt", "a\x00b"]])
def test_a_bad_argument_list_is_refused(kit: ad.Toolkit, tmp_path: Path, argv: list[str]) -> None:
    with pytest.raises(ad.ArgumentError):
        Shell(kit, cwd=tmp_path)(argv)
    assert not (tmp_path / "made.txt").exists() and list(kit.store.records()) == []


def test_an_empty_shell_command_is_refused(kit: ad.Toolkit, tmp_path: Path) -> None:
    Shell(kit, cwd=tmp_path, allow_shell=True)
    assert kit.handle("shell", {"command": " "}) == (
        "error: ArgumentError: shell: the command is empty; nothing was run"
    )
    assert list(kit.store.records()) == []


# -- search limits ---------------------------------------------------------------------


@pytest.fixture
def index() -> LocalIndex:
    index = LocalIndex()
    for i in range(MAX_LIMIT + 20):
        index.add(f"http://docs.test/{i}", f"page {i}", f"a lock, number {i}")
    return index


def test_the_schema_bounds_limit(kit: ad.Toolkit, index: LocalIndex) -> None:
    Search(kit, index)
    tool: dict[str, Any] = next(t for t in kit.tools() if t["name"] == "search")
    limit = tool["input_schema"]["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"]) == (1, MAX_LIMIT)
    from addressable.adapters.search import MAX_LIMIT as declared

    assert declared == MAX_LIMIT
    for bad in (-1, 0, MAX_LIMIT + 1, 10**30):
        text = kit.handle("search", {"query": "lock", "limit": bad})
        assert text.startswith("error: search: argument 'limit' does not fit: ")
        assert "http://docs.test/" not in text
    assert list(kit.store.records()) == []
    shown = kit.handle("search", {"query": "lock", "limit": MAX_LIMIT})
    assert shown.count("http://docs.test/") == MAX_LIMIT


@pytest.mark.parametrize("bad", [-1, 0, MAX_LIMIT + 1, 10**30, "abc", 2.5, True])
def test_a_direct_call_checks_limit(kit: ad.Toolkit, index: LocalIndex, bad: object) -> None:
    search = Search(kit, index)
    with pytest.raises(ad.ArgumentError, match=f"limit must be an integer from 1 to {MAX_LIMIT}"):
        search("lock", limit=bad)  # type: ignore[arg-type]
    with pytest.raises(ad.ArgumentError, match="limit must be an integer"):
        asyncio.run(search.acall("lock", limit=bad))  # type: ignore[arg-type]
    with pytest.raises(ad.ArgumentError, match="limit must be an integer"):
        Search(kit, index, limit=bad, name="other")  # type: ignore[arg-type]
    assert list(kit.store.records()) == []
    assert len(search.hits(search("lock", limit=1).id)) == 1


def test_a_query_too_long_to_search_is_refused(kit: ad.Toolkit, index: LocalIndex) -> None:
    search = Search(kit, index)
    words = " ".join(f"w{i}" for i in range(MAX_QUERY))  # longer than MAX_QUERY characters
    text = kit.handle("search", {"query": words})
    assert text.startswith("error: search: argument 'query' does not fit: ")
    with pytest.raises(ad.ArgumentError, match="at most 2,000 characters"):
        search(words)
    from addressable.adapters.search import MAX_QUERY as declared

    assert declared == MAX_QUERY
    assert list(kit.store.records()) == []


def test_a_model_may_ask_to_wait_less_never_longer(kit: ad.Toolkit, tmp_path: Path) -> None:
    shell = Shell(kit, cwd=tmp_path, timeout=1.0)
    text = kit.handle("shell", {"command": "sleep 30", "timeout": 0.2})
    stopped = next(iter(kit.store.records()))
    assert stopped.meta["timed_out"] is True and "0.2" in text, text
    kit.handle("shell", {"command": "sleep 30", "timeout": 10**6})
    capped = [r for r in kit.store.records() if r.id != stopped.id]
    assert capped[0].meta["timed_out"] is True  # stopped at the adapter's own 1 s
    assert kit.handle("shell", {"command": "echo hi", "timeout": 0}).startswith(
        "error: shell: argument 'timeout' does not fit: "
    )
    assert shell.timeout == 1.0
