"""The README's example runs as written, and its CLI section names real commands."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def test_first_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = README.read_text()
    example = re.search(r"## A first example\n\n```python\n(.*?)```", text, re.S)
    assert example is not None
    code = example[1]
    assert len(code.strip().splitlines()) < 20
    shutil.copy(README, tmp_path / "README.md")
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.splitlines()
    assert re.fullmatch(r"[0-9a-f]{16} \d+ [0-9a-f]{12}", first)
    assert second == "unchanged"
    assert (tmp_path / ".addressable").is_dir()


def test_cli_section_lists_only_real_commands() -> None:
    from addressable._cli import _parser

    text = README.read_text()
    block = re.search(r"## The command line\n.*?```\n(.*?)```", text, re.S)
    assert block is not None
    named = {line.split()[1] for line in block[1].splitlines() if line.startswith("addressable")}
    choices = next(a for a in _parser()._actions if a.dest == "command").choices
    assert choices is not None
    assert named <= set(choices)
    assert {"ls", "show", "replay", "verify", "stats", "gc", "export", "import"} <= named
