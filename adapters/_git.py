"""Just enough git to key a file by the commit it is clean at: `path@rev`.

Every git the project starts runs through `git_lines`, and in a repository through
`_run` (the one other, `shell.launchers`' list of git's own commands, runs in `/`,
reading no repository). The repository may have been written by the model, so git runs
with an allow-listed environment, no system or global configuration, every setting by
which a repository makes git start a program switched off, no transport, no optional
locks, and only `rev-parse`: adding a subcommand means checking what it can run. A file
is clean when its bytes, hashed as a git blob, are the blob `HEAD:path` names. The rules
and their reasons: docs/security.md, "The git the library runs".
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

# The variables Shell passes by default, and the only ones of the parent git sees.
ENV_ALLOW = ("PATH", "HOME", "LANG", "LC_ALL", "TERM", "USER", "TMPDIR")

_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_EDITOR": ":",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_ALLOW_PROTOCOL": "",
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_NO_REPLACE_OBJECTS": "1",
}

_CONFIG = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.untrackedCache=false",
    "core.pager=cat",
    "core.editor=:",
    "sequence.editor=:",
    "core.askPass=",
    "core.sshCommand=false",
    "credential.helper=",
    "protocol.allow=never",
    "safe.bareRepository=explicit",
)

_TIMEOUT = 10.0  # seconds
_HEX = {"sha1": re.compile(r"[0-9a-f]{40}"), "sha256": re.compile(r"[0-9a-f]{64}")}


def environment() -> dict[str, str]:
    """The environment every git the project starts runs with."""
    env = {name: os.environ[name] for name in ENV_ALLOW if name in os.environ}
    env.update(_ENV)
    return env


def git_lines(argv: Sequence[str], cwd: Path | str) -> list[str] | None:
    """The lines the git command `argv` prints, run in `cwd` with `environment()` and
    nothing on its input; None when it fails or cannot be run."""
    try:
        proc = subprocess.run(
            list(argv),
            cwd=cwd,
            env=environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return [os.fsdecode(line) for line in proc.stdout.splitlines()]


def _run(cwd: Path, command: Literal["rev-parse"], *args: str) -> list[str] | None:
    """The lines git prints, or None when it fails or cannot be run."""
    config = [part for setting in _CONFIG for part in ("-c", setting)]
    return git_lines(["git", "--no-pager", "--no-replace-objects", *config, command, *args], cwd)


def commit_of(cwd: Path, rev: str = "HEAD") -> str | None:
    """The full commit id `rev` names in the repository around `cwd`, or None."""
    lines = _run(cwd, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    if lines is None or len(lines) != 1:
        return None
    return lines[0] if any(hex_.fullmatch(lines[0]) for hex_ in _HEX.values()) else None


def clean_at_head(path: Path, data: bytes) -> tuple[str, str] | None:
    """(path relative to the repository root, HEAD's commit) when `data`, the bytes read
    from `path`, are byte for byte the blob HEAD holds at that path; else None.

    Bytes, not what `git status` calls clean: a file that differs from the commit only
    by what a filter or line-ending conversion would undo is not keyed at the commit.
    """
    folder = path.parent
    lines = _run(
        folder,
        "rev-parse",
        "--show-toplevel",
        "--show-object-format",
        "HEAD^{commit}",
        f"HEAD:./{path.name}",
    )
    if lines is None or len(lines) != 4:
        return None
    top, object_format, head, blob = lines
    hex_ = _HEX.get(object_format)
    if hex_ is None or not hex_.fullmatch(head) or not hex_.fullmatch(blob):
        return None
    digest = hashlib.new(object_format)
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    if digest.hexdigest() != blob:
        return None
    root = Path(top).resolve()
    full = path.resolve()
    if not full.is_relative_to(root):
        return None
    return full.relative_to(root).as_posix(), head
