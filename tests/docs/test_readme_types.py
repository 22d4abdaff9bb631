"""The docs' Python passes `mypy --strict` as a user would write it: the README's first
example, the state document's (docs/state.md), and every recipe (docs/recipes.md), which
hands `kit.tools()` and `Compaction.messages` to the SDKs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import ROOT

README = ROOT / "README.md"
DOCS = README.parent / "docs"

# What a recipe takes from the code around it, with the types a user's code gives it.
PREAMBLE = """\
from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import openai
from agents import Agent, Model, RunConfig, Runner
from langchain_core.language_models import BaseChatModel
from langchain.agents import create_agent

import addressable as ad

MODEL = "claude-sonnet-4-5"
TASK = "Which of these modules are thread-safe?"
TRIGGER = 100_000
"""

# The recipes in the order of docs/recipes.md, and the client each one is handed.
CLIENTS = [
    "client: anthropic.Anthropic",
    "client: openai.OpenAI",
    "client: openai.OpenAI",
    "client: anthropic.Anthropic",
    "llm: Model",
    "llm: BaseChatModel",
]


def _module(text: str, recipes_page: str, state_page: str) -> str:
    first = re.search(r"## A first example\n\n```python\n(.*?)```", text, re.S)
    section = re.search(r"\A# Recipes.*?\n(.*)", recipes_page, re.S)
    assert first is not None and section is not None
    recipes = re.findall(r"```python\n(.*?)```", section[1], re.S)
    assert len(recipes) == len(CLIENTS)
    parts = [PREAMBLE]
    parts.append("def first_example() -> None:\n" + textwrap.indent(first[1], "    "))
    state = re.search(r"\A# The state document\n.*?```python\n(.*?)```", state_page, re.S)
    assert state is not None
    parts.append(
        "def state_example(client: anthropic.Anthropic, kit: ad.Toolkit, messages: list[Any], "
        "document: ad.StateDocument | None, log: list[str]) -> None:\n"
        + textwrap.indent(state[1], "    ")
    )
    for number, (recipe, client) in enumerate(zip(recipes, CLIENTS, strict=True)):
        body = textwrap.indent(recipe, "    ")
        parts.append(f"def recipe_{number}({client}, kit: ad.Toolkit) -> None:\n{body}")
    return "\n\n".join(parts)


@pytest.mark.xdist_group("mypy")
def test_readme_python_passes_mypy_strict(tmp_path: Path) -> None:
    source = tmp_path / "readme_examples.py"
    pages = (DOCS / "recipes.md").read_text(), (DOCS / "state.md").read_text()
    source.write_text(_module(README.read_text(), *pages))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            # The project's settings and cache: the SDKs' modules are read once, by
            # whichever of this and the package's check runs first (the same xdist group).
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            str(source),
        ],
        cwd=tmp_path,
        # The checkout as an installed package would be: mypy does not follow the
        # editable install's import hook.
        env={**os.environ, "MYPYPATH": str(README.parent)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
