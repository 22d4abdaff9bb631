"""The parts a gist is made of, and how they are joined within a budget of tokens.

A part is whole: a sentence, a value, or a list of values (`Items`). `fit` leaves out a
part that does not fit rather than cut it, so that no gist ends in a broken fragment.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..core.tokens import count_tokens

GIST_FLOOR = 12  # tokens a gist may take besides its essential values, at least (JSON: none)

# A terminal's escape sequences: CSI (colours, cursor moves, also with the 8-bit
# introducer), OSC (window titles, hyperlinks: up to BEL or ST), DCS/SOS/PM/APC strings,
# and the two-character ones. Their text is never shown, so a stub leaves it out.
ESCAPE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
# C0 and C1 controls besides the whitespace ones (tab, line ends: `str.split` takes those).
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f]")


def plain(text: str) -> str:
    """`text` without escape sequences and control characters, its whitespace (tabs,
    line ends) kept: what a terminal would show of it, as text a stub can hold."""
    if text.isprintable():
        return text  # the common case: nothing to take out
    return _CONTROL.sub("", ESCAPE.sub("", text))


def one_line(text: str) -> str:
    """`text` as plain text on one line, its runs of whitespace one space each."""
    return " ".join(plain(text).split())


@dataclass(frozen=True)
class Items:
    """A part that is a list: `head` then values joined by `sep`. When it does not fit,
    it loses values from its end (never fewer than `least`) rather than being cut; when
    even its first values do not fit, it keeps, in order, the values that do."""

    head: str
    values: Sequence[str]
    sep: str = ","
    least: int = 1

    def text(self, n: int | None = None) -> str:
        return self.head + self.sep.join(self.values[: len(self.values) if n is None else n])


Part = str | Items


def part_tokens(part: Part) -> int:
    """The tokens `part` takes in a gist, its separator included."""
    return count_tokens((part.text() if isinstance(part, Items) else part) + "; ")


def fit(parts: Iterable[Part], budget: int, sep: str = "; ") -> str:
    """Join `parts`, in order, within `budget` tokens. A part that does not fit is left
    out (an `Items` part first loses values from its end), and later, smaller parts
    still get their chance: no part is ever cut in the middle."""
    kept: list[str] = []
    used = 0
    for part in parts:
        if isinstance(part, Items):
            values = list(part.values)
            n = len(values)
            text = part.text(n)
            cost = count_tokens(text + sep)
            if used + cost > budget and n > part.least:
                # Drop values from the end: estimate, then step until it fits.
                n = max(part.least, min(n - 1, int(n * (budget - used) / max(1, cost))))
                text = part.text(n)
                cost = count_tokens(text + sep)
                while used + cost > budget and n > part.least:
                    n -= 1
                    text = part.text(n)
                    cost = count_tokens(text + sep)
            if used + cost > budget and n == part.least:
                # Even its first values do not fit: keep, in order, those that do.
                chosen: list[str] = []
                for value in values:
                    trial = part.head + part.sep.join([*chosen, value])
                    if used + count_tokens(trial + sep) <= budget:
                        chosen.append(value)
                if chosen:
                    text = part.head + part.sep.join(chosen)
                    cost = count_tokens(text + sep)
            if not values or not text.strip():
                continue
        else:
            text = part.strip()
            if not text:
                continue
            cost = count_tokens(text + sep)
        if used + cost > budget:
            continue
        kept.append(text)
        used += cost
    joined = ""
    for text in kept:
        # After a sentence that ends with its own stop, a space is enough.
        joined += (" " if joined.endswith((".", "!", "?")) else sep) + text if joined else text
    return joined
