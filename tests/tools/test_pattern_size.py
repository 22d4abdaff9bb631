"""A model's `pattern` is refused before `regex` compiles it when its counted repeats,
written out, would make more than `PATTERN_ITEMS` items: compiling writes them out in
full, and no time limit on matching stops that."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

import addressable as ad
from addressable.tools.patterns import expanded_size
from addressable.tools.replay import select
from tests.helpers import ROOT

ITEMS = 10_000  # what a pattern may stand for written out (PATTERN_ITEMS, as README says)

PAGE = "\n".join(f"line {i}: 2026-03-{i:02d} aaaa error" for i in range(1, 31))


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


def replay(kit: ad.Toolkit, pattern: str) -> str:
    stored = kit.record("t", {}, PAGE.encode(), determinism="deterministic")
    return kit.handle("replay_result", {"id": stored.id, "pattern": pattern})


@pytest.mark.parametrize(
    "pattern",
    [
        # Each compiles in well under a second, and each is past the bound: it goes by
        # items, whatever the time.
        pytest.param("(?:a{1000}){100}", id="nested"),
        pytest.param("a{20000}", id="one-repeat"),
        pytest.param("a{5000}b{5001}", id="two-repeats"),
        pytest.param("(?:ab|cd){5001}", id="alternatives-add-up"),
        pytest.param("a{10001,}", id="at-least"),
        pytest.param("a{,10001}", id="at-most"),
        pytest.param("(?:a{100})(?#a comment){101}", id="repeat-after-a-comment"),
        pytest.param("(?:a{100})(?i){101}", id="repeat-after-flags"),
        pytest.param("(?:[)]{100}){101}", id="paren-in-a-set"),
        pytest.param("(?:[]a]{100}){101}", id="bracket-first-in-a-set"),
        pytest.param("(?:[[:alpha:])]{100}){101}", id="posix-class"),
        pytest.param("(?V1)(?:[[a]--[)]]{100}){101}", id="nested-set"),
        pytest.param("(?:x{100}){e<=0}{101}", id="repeat-after-a-fuzzy-constraint"),
        pytest.param("(?:x{100}(?#\\))){101}", id="escaped-paren-in-a-comment"),
        pytest.param("(?<n>a{100}){101}", id="named-group"),
        pytest.param("(a)(?(1)a{100}|b){101}", id="conditional"),
        pytest.param("(?:\\N{LATIN SMALL LETTER A}{100}){101}", id="named-character"),
        pytest.param("(?<=a{10001})b", id="lookbehind"),
        pytest.param("a{99999999999999999999999999}", id="huge-count"),
    ],
)
def test_a_pattern_that_would_grow_too_large_is_refused_before_it_compiles(
    kit: ad.Toolkit, pattern: str
) -> None:
    size = expanded_size(pattern)
    assert size is not None and size > ITEMS
    started = time.monotonic()
    out = replay(kit, pattern)
    assert time.monotonic() - started < 1.0
    assert out.startswith(f"error: ArgumentError: the pattern {pattern[:80]!r} repeats too much")
    assert "\n" not in out


# Run in a process of its own with 1 GiB of address space: compiled, the first took 4 s
# and 2.9 GB, the second ran out of memory at 6 GB.
BOUNDED = """
import resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
import addressable as ad
kit = ad.Toolkit(ad.open_store("memory://"))
stored = kit.record("t", {}, b"line one\\nline two\\n", determinism="deterministic")
started = time.monotonic()
out = kit.handle("replay_result", {"id": stored.id, "pattern": sys.argv[1]})
print(f"{time.monotonic() - started:.3f} {out}")
"""


@pytest.mark.parametrize("pattern", ["((a{1000}){1000}){10}", "(((a{100}){100}){100}){100}"])
def test_patterns_that_took_gigabytes_to_compile_are_refused_at_once(pattern: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-c", BOUNDED, pattern],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    seconds, _, out = run.stdout.strip().partition(" ")
    assert out.startswith(f"error: ArgumentError: the pattern {pattern!r} repeats too much")
    assert float(seconds) < 0.5


@pytest.mark.parametrize(
    ("pattern", "matches"),
    [
        pytest.param("error", 30, id="text"),
        pytest.param(r"\d{4}-\d{2}-\d{2}", 30, id="a-date"),
        pytest.param(r"line 1\d?:", 11, id="optional"),
        pytest.param("a{1,100}", 30, id="a-range"),
        pytest.param("[[:alpha:]]{4} error", 30, id="posix-class"),
        pytest.param("(?i)ERROR|warn", 30, id="flags"),
        pytest.param("(?:a{100}){100}", 0, id="ten-thousand-items"),
        pytest.param("[unclosed", 0, id="not-a-regular-expression"),
        pytest.param("a{100000", 0, id="an-unclosed-brace-is-text"),
    ],
)
def test_ordinary_patterns_still_match(kit: ad.Toolkit, pattern: str, matches: int) -> None:
    assert replay(kit, pattern).startswith(f"[{matches} lines match {pattern!r} of 30]")


def test_verbose_mode_is_refused(kit: ad.Toolkit) -> None:
    # In verbose mode a space or a "# comment" is no part of the pattern: the count would
    # be read wrong, so the pattern is not taken.
    assert expanded_size("(?x) a {100} # {5}") is None
    out = replay(kit, "(?x)(?:a{1000} # )\n){1000}")
    assert out.startswith("error: ArgumentError: the pattern ") and "verbose mode" in out
    assert "\n" not in out


def test_the_mcp_proxy_selection_is_bounded_too() -> None:
    # The proxy selects in an upstream's text with `select`, the same as replay_result.
    with pytest.raises(ad.ArgumentError, match="repeats too much"):
        select(PAGE, {"pattern": "((a{1000}){1000}){10}"})
    assert select(PAGE, {"pattern": "line 3:"}).startswith("[1 lines match")


@pytest.mark.parametrize(
    ("pattern", "size"),
    [
        pytest.param("abc", 3, id="characters"),
        pytest.param("a{7}", 7, id="a-repeat"),
        pytest.param("(?:ab){3}c", 7, id="a-group"),
        pytest.param("(?:a|bc){2}", 6, id="alternatives"),
        pytest.param("[a{9}]", 1, id="braces-in-a-set"),
        pytest.param(r"\{{9}", 9, id="an-escaped-brace-repeated"),
        pytest.param("a(?#{1000})", 1, id="a-comment"),
        pytest.param("((a{10}){10}){10}", 1000, id="nested"),
    ],
)
def test_the_size_is_the_items_written_out(pattern: str, size: int) -> None:
    assert expanded_size(pattern) == size
