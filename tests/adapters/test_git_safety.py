"""Reading a file never runs code: the git the project starts to key a read runs no
program a repository's configuration names, and sees none of the parent's secrets.

Each case plants, in a real repository, configuration that makes git run a program; the
program would write a marker file (with a secret from the environment). Reads through
Files and Shell, directly and through `kit.handle`, must leave no marker and still key
clean tracked files `path@commit`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import addressable as ad
from addressable.adapters import Files, Shell

SECRET_NAME = "ADDRESSABLE_TEST_FAKE_SECRET"
SECRET = "fake-secret-4f1c9a"
ALLOWED = {"PATH", "HOME", "LANG", "LC_ALL", "TERM", "USER", "TMPDIR"}
MISSING_COMMIT = "1234567890abcdef1234567890abcdef12345678"


@pytest.fixture
def kit() -> ad.Toolkit:
    return ad.Toolkit(ad.open_store("memory://"))


def git(repo: Path, *args: str) -> str:
    env = {
        "PATH": os.environ["PATH"],
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.test",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.test",
    }
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def marker_program(folder: Path, marker: Path) -> Path:
    """A program that, if anything runs it, leaves `marker` with the secret it saw."""
    program = folder / "planted-program"
    program.write_text(
        f'#!/bin/sh\necho "ran: $0 $* secret=${{{SECRET_NAME}}}" >> "{marker}"\nexit 1\n'
    )
    program.chmod(0o755)
    return program


def make_stale(repo: Path) -> None:
    """Give the tracked files other stat data than the index has, as an edit that
    was undone would: `git status` must then re-read them (filters) and rewrite the
    index (hooks)."""
    for name in ("README.md", "src/app.py", ".gitattributes"):
        if (repo / name).exists():
            os.utime(repo / name, (978_307_200, 978_307_200))


def commit_attributes(repo: Path, line: str) -> None:
    (repo / ".gitattributes").write_text(line + "\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "attributes")


def config(*pairs: tuple[str, str]) -> Callable[[Path, Path], None]:
    def plant(repo: Path, program: Path) -> None:
        for name, value in pairs:
            git(repo, "config", "--add", name, value.format(program=program, repo=repo))

    return plant


def fsmonitor_through_include(repo: Path, program: Path) -> None:
    # The included file sits in the working tree, where a model can write it.
    (repo / "notes.cfg").write_text(f"[core]\n\tfsmonitor = {program}\n")
    git(repo, "config", "include.path", str(repo / "notes.cfg"))


def hook(folder: str) -> Callable[[Path, Path], None]:
    def plant(repo: Path, program: Path) -> None:
        hooks = repo / folder
        hooks.mkdir(parents=True, exist_ok=True)
        for name in ("post-index-change", "pre-commit", "post-checkout", "reference-transaction"):
            shutil.copy(program, hooks / name)
        if folder != ".git/hooks":
            git(repo, "config", "core.hooksPath", str(hooks))

    return plant


def filtered(*pairs: tuple[str, str]) -> Callable[[Path, Path], None]:
    def plant(repo: Path, program: Path) -> None:
        commit_attributes(repo, "* filter=planted")
        config(*pairs)(repo, program)

    return plant


def promisor(*pairs: tuple[str, str]) -> Callable[[Path, Path], None]:
    """A partial clone whose branch names a commit it does not have: reading it makes
    git fetch the object from the promisor remote. Every step is a plain file write in
    `.git`, which a model allowed to write files can do."""

    def plant(repo: Path, program: Path) -> None:
        config(
            ("core.repositoryformatversion", "1"),
            ("extensions.partialClone", "origin"),
            ("remote.origin.promisor", "true"),
            *pairs,
        )(repo, program)
        (repo / ".git" / "refs" / "heads" / "main").write_text(MISSING_COMMIT + "\n")

    return plant


@dataclass(frozen=True)
class Planted:
    plant: Callable[[Path, Path], None]
    head_intact: bool = True  # False: HEAD names a missing commit, no read is clean


CASES = [
    pytest.param(Planted(config(("core.fsmonitor", "{program}"))), id="core.fsmonitor"),
    pytest.param(Planted(fsmonitor_through_include), id="include.path-to-fsmonitor"),
    pytest.param(Planted(hook(".git/hooks")), id="hook-in-.git/hooks"),
    pytest.param(Planted(hook("planted-hooks")), id="core.hooksPath"),
    pytest.param(
        Planted(
            filtered(
                ("filter.planted.clean", "{program} clean"),
                ("filter.planted.smudge", "{program} smudge"),
            )
        ),
        id="filter-clean-smudge",
    ),
    pytest.param(
        Planted(filtered(("filter.planted.process", "{program} process"))),
        id="filter-process",
    ),
    pytest.param(
        Planted(
            promisor(
                ("remote.origin.url", "ssh://example.invalid/repo"),
                ("core.sshCommand", "{program}"),
            ),
            head_intact=False,
        ),
        id="core.sshCommand-lazy-fetch",
    ),
    pytest.param(
        Planted(
            promisor(
                ("remote.origin.url", "ext::{program} %S"),
                ("protocol.ext.allow", "always"),
            ),
            head_intact=False,
        ),
        id="ext-remote-lazy-fetch",
    ),
    pytest.param(
        Planted(
            promisor(
                ("remote.origin.url", "file://{repo}"),
                ("remote.origin.uploadpack", "{program}"),
                ("protocol.file.allow", "always"),
            ),
            head_intact=False,
        ),
        id="remote.uploadpack-lazy-fetch",
    ),
]


def read_everything(kit: ad.Toolkit, repo: Path, *, model_git: bool) -> None:
    """Read the two tracked files every way the adapters offer."""
    files = Files(kit, repo)
    shell = Shell(kit, cwd=repo)
    files.read("src/app.py")
    shell("cat README.md")
    shell("cat src/app.py")
    kit.handle("files", {"command": "read", "path": "README.md"})
    kit.handle("shell", {"command": "cat -- README.md"})
    if model_git:
        # The model's own `git show` runs as it gave it (Shell is a command runner);
        # only the key is computed by the project's git.
        shell("git show HEAD:src/app.py")
        kit.handle("shell", {"command": "git show HEAD:README.md"})


def keys(kit: ad.Toolkit) -> set[tuple[str, str | None]]:
    return {(str(r.args.get("path", r.args.get("command"))), r.key) for r in kit.store.records()}


@pytest.mark.parametrize("planted", CASES)
def test_reading_runs_nothing_a_repository_plants(
    kit: ad.Toolkit,
    repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    planted: Planted,
) -> None:
    monkeypatch.setenv(SECRET_NAME, SECRET)
    marker = tmp_path / "marker"
    planted.plant(repo, marker_program(tmp_path, marker))
    make_stale(repo)
    head = git(repo, "rev-parse", "HEAD")

    read_everything(kit, repo, model_git=planted.head_intact)

    assert not marker.exists(), marker.read_text()
    errors = [r.error for r in kit.store.records() if r.status is ad.Status.ERROR]
    assert errors == []
    if planted.head_intact:
        assert keys(kit) == {
            ("src/app.py", f"src/app.py@{head}"),
            ("README.md", f"README.md@{head}"),
            ("cat README.md", f"README.md@{head}"),
            ("cat -- README.md", f"README.md@{head}"),
            ("cat src/app.py", f"src/app.py@{head}"),
            ("git show HEAD:src/app.py", f"src/app.py@{head}"),
            ("git show HEAD:README.md", f"README.md@{head}"),
        }
    else:
        app = ad.ids.content_hash(b"def main():\n    return 42\n")[:16]
        readme = ad.ids.content_hash(b"# demo\n")[:16]
        assert keys(kit) == {
            ("src/app.py", f"src/app.py#{app}"),
            ("README.md", f"README.md#{readme}"),
            ("cat README.md", None),
            ("cat -- README.md", None),
            ("cat src/app.py", None),
        }


def test_programs_only_other_git_commands_run_stay_unreached(
    kit: ad.Toolkit, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pagers, editors, diff drivers, credential helpers: git runs these for commands
    the project does not start (a diff, a log, a push, a prompt on a terminal). Planted
    all at once, they stay unreached, and keys stay `path@commit`."""
    monkeypatch.setenv(SECRET_NAME, SECRET)
    marker = tmp_path / "marker"
    program = marker_program(tmp_path, marker)
    commit_attributes(repo, "* diff=planted merge=planted")
    config(
        ("core.pager", "{program}"),
        ("pager.status", "{program}"),
        ("pager.show", "{program}"),
        ("core.editor", "{program}"),
        ("sequence.editor", "{program}"),
        ("core.askPass", "{program}"),
        ("credential.helper", "!{program}"),
        ("core.sshCommand", "{program}"),
        ("core.alternateRefsCommand", "{program}"),
        ("diff.external", "{program}"),
        ("diff.planted.textconv", "{program}"),
        ("diff.planted.command", "{program}"),
        ("merge.planted.driver", "{program}"),
        ("gpg.program", "{program}"),
        ("uploadpack.packObjectsHook", "{program}"),
    )(repo, program)
    make_stale(repo)
    head = git(repo, "rev-parse", "HEAD")

    read_everything(kit, repo, model_git=True)

    assert not marker.exists(), marker.read_text()
    assert {key for _, key in keys(kit)} == {f"src/app.py@{head}", f"README.md@{head}"}


def test_the_projects_git_sees_only_allowed_environment(
    kit: ad.Toolkit, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `git` first on PATH records the environment of every git started; none has
    a variable of the parent outside the allow-list."""
    real = shutil.which("git")
    assert real is not None
    log = tmp_path / "environments.jsonl"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        f"with open({str(log)!r}, 'a') as f:\n"
        "    f.write(json.dumps(dict(os.environ)) + '\\n')\n"
        f"os.execv({real!r}, ['git', *sys.argv[1:]])\n"
    )
    wrapper.chmod(0o755)
    monkeypatch.setenv(SECRET_NAME, SECRET)
    monkeypatch.setenv("GIT_SSH_COMMAND", str(tmp_path / "not-for-git"))
    parent = dict(os.environ)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    head = git(repo, "rev-parse", "HEAD")

    Files(kit, repo).read("src/app.py")
    Shell(kit, cwd=repo)("cat README.md")
    commit_key = Shell(kit, cwd=repo, name="shell2")("git show HEAD:src/app.py").record.key

    assert commit_key == f"src/app.py@{head}"
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(seen) >= 3  # the two keys, and the model's own `git show`
    for env in seen:
        assert SECRET not in json.dumps(env)
        outside = {n for n in env if n not in ALLOWED and env[n] == parent.get(n)}
        assert outside == set(), outside
