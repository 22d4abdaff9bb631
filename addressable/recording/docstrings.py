"""The parts of a Google-style docstring a tool definition uses: its text, and each
parameter's description from its `Args:` section."""

from __future__ import annotations

import re

_SECTION = re.compile(
    r"^(\s*)(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments):\s*$"
)
_ENTRY = re.compile(r"^\**(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def split_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """A Google-style docstring's text without its `Args:` section, and the parameters'
    descriptions from that section (continuation lines joined with newlines)."""
    lines = doc.splitlines()
    kept: list[str] = []
    described: dict[str, list[str]] = {}
    i = 0
    while i < len(lines):
        header = _SECTION.match(lines[i])
        i += 1
        if header is None:
            kept.append(lines[i - 1])
            continue
        indent = len(header.group(1))
        current: str | None = None
        entry_indent: int | None = None
        while i < len(lines):
            line = lines[i]
            stripped = line.strip()
            depth = len(line) - len(line.lstrip())
            if stripped and depth <= indent:
                break
            i += 1
            if not stripped:
                continue
            if entry_indent is None:
                entry_indent = depth
            entry = _ENTRY.match(stripped) if depth == entry_indent else None
            if entry is not None:
                current = entry.group(1)
                described[current] = [entry.group(2).strip()]
            elif current is not None:
                described[current].append(stripped)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return text, {k: "\n".join(part for part in v if part) for k, v in described.items()}
