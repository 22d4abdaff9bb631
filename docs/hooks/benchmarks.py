"""An mkdocs hook: the benchmark figures live in benchmarks/README.md, beside the scripts
that make them, and the pages link to that file where it sits in the repository
(`../benchmarks/README.md`), as GitHub shows it. This publishes the file and the plots it
shows under `benchmarks/` in the site, and turns every link that names a file of the
repository by its place there into a link within the site."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parents[2]
DOCS = "docs"
FOLDER = "benchmarks"  # published in the site under the same name
PUBLISHED = ("README.md", "*/plot.png")
LINK = re.compile(r"(\]\()([^)\s#]+)")


def on_files(files: Files, config: Any) -> Files:
    for pattern in PUBLISHED:
        for path in sorted((ROOT / FOLDER).glob(pattern)):
            uri = path.relative_to(ROOT).as_posix()
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def _in_site(repository_path: str) -> str | None:
    """Where a file of the repository is in the site's sources, if it is there."""
    if repository_path.startswith(f"{DOCS}/"):
        return repository_path.removeprefix(f"{DOCS}/")
    if repository_path.startswith(f"{FOLDER}/"):
        return repository_path
    return None


def on_page_markdown(markdown: str, page: Page, config: Any, files: Files) -> str:
    source = Path(page.file.abs_src_path or "").resolve().relative_to(ROOT).as_posix()

    def relink(match: re.Match[str]) -> str:
        opening, target = match[1], match[2]
        if "://" in target or target.startswith(("/", "mailto:")):
            return match[0]
        in_site = _in_site(posixpath.normpath(posixpath.join(posixpath.dirname(source), target)))
        if in_site is None:
            return match[0]
        return opening + posixpath.relpath(in_site, posixpath.dirname(page.file.src_uri) or ".")

    return LINK.sub(relink, markdown)
