"""Just enough git to key a file by the commit it is clean at: `path@rev`."""

from __future__ import annotations

import subprocess
from pathlib import Path


def _git(cwd: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def commit_of(cwd: Path, rev: str = "HEAD") -> str | None:
    """The full commit id `rev` names in the repository around `cwd`, or None."""
    return _git(cwd, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")


def clean_at_head(path: Path) -> tuple[str, str] | None:
    """(path relative to the repository root, HEAD's commit) when `path` is tracked and
    unmodified, so that its bytes are those of that commit; else None."""
    folder = path.parent
    top = _git(folder, "rev-parse", "--show-toplevel")
    if top is None:
        return None
    relative = path.resolve().relative_to(Path(top).resolve()).as_posix()
    if _git(Path(top), "ls-files", "--error-unmatch", "--", relative) is None:
        return None
    status = _git(Path(top), "status", "--porcelain", "--", relative)
    if status is None or status:
        return None
    head = commit_of(Path(top))
    return (relative, head) if head else None
