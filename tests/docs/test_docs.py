"""The README is the front door and docs/ the manual: the README stays short, every page
of docs/ is in the site's navigation, and every relative link, in the README, the pages
and benchmarks/README.md, names a file (and a heading) that exists."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from tests.helpers import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
LINKED = [README, *PAGES, ROOT / "benchmarks" / "README.md"]

FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    """The text outside code blocks and code spans, where a link is a link."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def _links(path: Path) -> list[str]:
    return LINK.findall(_prose(path.read_text(encoding="utf-8")))


def _anchors(path: Path) -> set[str]:
    """The anchors of a page's headings, as GitHub and mkdocs both make them."""
    headings = re.findall(r"^#+ (.*)$", FENCE.sub("", path.read_text(encoding="utf-8")), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def _nav_files(entries: object) -> list[str]:
    """Every file the navigation names, however deep."""
    if isinstance(entries, str):
        return [entries]
    if isinstance(entries, list):
        return [f for entry in entries for f in _nav_files(entry)]
    if isinstance(entries, dict):
        return [f for value in entries.values() for f in _nav_files(value)]
    return []


def test_the_readme_is_at_most_250_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines"


def test_the_readme_names_no_path_outside_the_repository() -> None:
    for number, line in enumerate(README.read_text(encoding="utf-8").splitlines(), 1):
        assert "../" not in line, f"README.md:{number}: {line}"


def test_every_page_is_in_the_navigation() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["site_name"] == "addressable" and config["theme"]["name"] == "material"
    listed = _nav_files(config["nav"])
    assert PAGES
    missing = [p.name for p in PAGES if p.name not in listed]
    assert not missing, f"pages not in mkdocs.yml's nav: {missing}"
    # ...and the navigation names only pages that exist: in docs/, or in the repository
    # (benchmarks/README.md, which docs/hooks/benchmarks.py publishes).
    for name in listed:
        assert (DOCS / name).is_file() or (ROOT / name).is_file(), name


def test_every_relative_link_names_a_file_that_exists() -> None:
    broken = []
    for path in LINKED:
        for target in _links(path):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            file, _, anchor = target.partition("#")
            linked = (path.parent / file).resolve() if file else path
            where = f"{path.relative_to(ROOT)}: {target}"
            if not linked.exists():
                broken.append(where)
            elif not linked.is_relative_to(ROOT):
                broken.append(where + " (outside the repository)")
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
                broken.append(where + " (no such heading)")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_the_home_page_starts_as_the_readme_does() -> None:
    """docs/index.md repeats the README's setup commands and first example, word for
    word: the README's are the ones the tests run."""

    def first_blocks(text: str) -> tuple[str, str]:
        commands = re.search(r"```bash\n(.*?)```", text, re.S)
        example = re.search(r"## A first example\n\n```python\n(.*?)```", text, re.S)
        assert commands is not None and example is not None
        return commands[1], example[1]

    readme = first_blocks(README.read_text(encoding="utf-8"))
    assert first_blocks((DOCS / "index.md").read_text(encoding="utf-8")) == readme
    assert README.read_text(encoding="utf-8").split("```")[1].startswith("bash\n")
