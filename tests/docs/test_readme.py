"""The README's example runs as written; in docs/, the command-line page names real
commands, the MCP page's config and client snippets are valid, and the recipes are the
code their tests run."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

README = ROOT / "README.md"
DOCS = README.parent / "docs"


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


def test_every_python_snippet_runs_as_written_in_order(tmp_path: Path) -> None:
    # Each snippet after the first takes what the ones before it made (`kit`, a tool).
    snippets = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(snippets) >= 2
    shutil.copy(README, tmp_path / "README.md")
    proc = subprocess.run(
        [sys.executable, "-c", "\n".join(snippets)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    stub = proc.stdout.splitlines()[-1]
    assert stub.startswith("[ref:") and "README.md" in stub


def test_cli_section_lists_only_real_commands() -> None:
    from addressable.cli.parser import build_parser

    text = (DOCS / "cli.md").read_text()
    block = re.search(r"\A# The command line\n.*?```\n(.*?)```", text, re.S)
    assert block is not None
    named = {line.split()[1] for line in block[1].splitlines() if line.startswith("addressable")}
    choices = next(a for a in build_parser()._actions if a.dest == "command").choices
    assert choices is not None
    assert named <= set(choices)
    assert {"ls", "show", "replay", "verify", "stats", "gc", "export", "import"} <= named


def test_mcp_section_config_and_client_snippets_are_valid(tmp_path: Path) -> None:
    import json

    from addressable.mcp.config import load_config

    text = (DOCS / "mcp.md").read_text()
    section = re.search(r"\A# MCP.*?\n(.*)", text, re.S)
    assert section is not None
    (toml,) = re.findall(r"```toml\n(.*?)```", section[1], re.S)
    (tmp_path / "proxy.toml").write_text(toml)
    config = load_config(tmp_path / "proxy.toml")
    assert config.tools and config.tools[0].key == "{path}"
    snippets = [json.loads(s) for s in re.findall(r"```json\n(.*?)```", section[1], re.S)]
    assert len(snippets) == 2
    for snippet in snippets:
        (server,) = snippet["mcpServers"].values()
        assert server["command"] == "addressable" and server["args"][0] == "mcp"
        assert server["args"][1] in {"proxy", "serve"}


def test_recipes_are_the_code_their_tests_run() -> None:
    import textwrap

    text = (DOCS / "recipes.md").read_text()
    section = re.search(r"\A# Recipes.*?\n(.*)", text, re.S)
    assert section is not None
    blocks = re.findall(r"```python\n(.*?)```", section[1], re.S)
    tested = []
    for path in sorted((README.parent / "tests" / "integrations").glob("test_recipes_*.py")):
        source = path.read_text()
        for body in re.findall(r"# fmt: off\n(.*?)\n\s*# fmt: on", source, re.S):
            tested.append(textwrap.dedent(body).strip())
    assert len(blocks) == 6
    for block in blocks:
        # An import line may stand in the test module's header instead.
        glue = "\n".join(
            line for line in block.strip().splitlines() if line and not line.startswith("from ")
        )
        assert glue in tested, glue.splitlines()[0]
        assert len(block.strip().splitlines()) <= 12  # ten lines of glue, and its imports
