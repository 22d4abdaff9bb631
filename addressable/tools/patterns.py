"""How large a regular expression grows when `regex` compiles it, read from its text.

`regex.compile` writes a counted repeat out in full: `(?:a{1000}){1000}` becomes a
million items, and takes seconds and gigabytes before any time limit on matching can
act. `expanded_size` counts the items a pattern stands for with every counted repeat
written out, without compiling it, so that a model's pattern can be refused first.

The count is an upper bound of what `regex` builds: a repeat counts its largest bound
(`{n,}` its least), alternatives add up, a group call counts one item. The pattern is
read twice, as version 0 and as version 1 sets (`(?V1)` can turn them on anywhere), and
the larger count is taken. Verbose mode is refused: it makes whitespace and `#` comments
no part of the pattern, which this reading does not follow.
"""

from __future__ import annotations

import re

_COUNTED = re.compile(r"\{(\d*)(,?)(\d*)\}")  # `{n}`, `{n,}`, `{,m}`, `{n,m}`, `{,}`
_FUZZY = re.compile(r"\{[deis0-9<=+,]*(?=[:}])")  # a fuzzy constraint, up to its test
_FLAGS = re.compile(r"[A-Za-z0-9\-]*")  # the flags of `(?flags)` and `(?flags:...)`
_NAME = re.compile(r"[A-Za-z0-9 &_.\-]*")  # a property's name, as `regex` reads it
_VALUE = re.compile(r"[A-Za-z0-9 &_.\-/]*")  # the value of a qualified one (`script=...`)
_CHAR_NAME = re.compile(r"\{[A-Za-z0-9 \-]*\}")  # the `{NAME}` of `\N{NAME}`
_SET_OPS = ("||", "~~", "&&", "--")  # version 1 set operators
_MOST = 1 << 62  # a count past any limit: larger ones are not worth the arithmetic


def expanded_size(pattern: str) -> int | None:
    """The items `pattern` stands for with its counted repeats written out (at least
    as many as `regex` builds); None when it turns on verbose mode, which is not read."""
    readings = [_Reading(pattern, version1=v) for v in (False, True)]
    sizes = [r.size() for r in readings]
    return None if any(r.verbose for r in readings) else max(sizes)


class _Frame:
    """A group being read: its finished alternatives, the current one, its last item."""

    __slots__ = ("branch", "done", "last")

    def __init__(self) -> None:
        self.done = 0  # items of the alternatives before the current one
        self.branch = 0  # items of the current alternative
        self.last: int | None = None  # items of the last item, which a repeat repeats

    def add(self, items: int) -> None:
        self.branch += items
        self.last = items


class _Reading:
    """One reading of a pattern, with sets read as version 0 or version 1 reads them."""

    def __init__(self, pattern: str, *, version1: bool) -> None:
        self.text = pattern
        self.version1 = version1
        self.pos = 0
        self.verbose = False  # it turns on verbose mode: read no further

    def size(self) -> int:
        text = self.text
        stack = [_Frame()]
        while self.pos < len(text):
            frame = stack[-1]
            ch = text[self.pos]
            self.pos += 1
            if ch == "\\":
                self._escape()
                frame.add(1)
            elif ch == "[":
                self._set()
                frame.add(1)
            elif ch == "(":
                opened = self._paren()
                if opened is True:
                    stack.append(_Frame())
                elif opened is False:
                    frame.add(1)  # a group call, a reference, a verb
                # None: a comment or inline flags, which leave the last item as it was
            elif ch == ")":
                if len(stack) > 1:  # one too many is a pattern `regex` refuses
                    stack.pop()
                    stack[-1].add(max(1, frame.done + frame.branch))
            elif ch == "|":
                frame.done += frame.branch
                frame.branch, frame.last = 0, None
            elif ch in "*+?":
                self._repeated(frame, 1)
            elif ch == "{":
                self._brace(frame)
            else:
                frame.add(1)
        # Groups left open (a pattern `regex` refuses) count as closed.
        while len(stack) > 1:
            inner = stack.pop()
            stack[-1].add(max(1, inner.done + inner.branch))
        return stack[0].done + stack[0].branch

    def _repeated(self, frame: _Frame, count: int) -> None:
        """A repeat of the frame's last item `count` times; a lazy or possessive mark
        after it is part of it, and nothing repeats it again."""
        if frame.last is not None:
            frame.branch = min(_MOST, frame.branch + frame.last * (max(1, count) - 1))
        frame.last = None
        if self.pos < len(self.text) and self.text[self.pos] in "?+":
            self.pos += 1

    def _brace(self, frame: _Frame) -> None:
        counted = _COUNTED.match(self.text, self.pos - 1)
        if counted is not None and (counted[1] or counted[2]):
            most = counted[3] or counted[1] or "0"  # `{n,}` counts n
            self.pos = counted.end()
            self._repeated(frame, _MOST if len(most) > 18 else int(most))
            return
        fuzzy = _FUZZY.match(self.text, self.pos - 1)
        if fuzzy is None:
            frame.add(1)  # a literal brace
            return
        # A fuzzy constraint (or braces `regex` takes as text): an item a character, and
        # the last item kept, since a constraint that allows no error repeats nothing.
        last, start = frame.last, self.pos - 1
        self.pos = fuzzy.end()
        if self.text.startswith(":", self.pos):
            self.pos += 1
            self._test()
            if self.text.startswith("}", self.pos):
                self.pos += 1
        elif self.text.startswith("}", self.pos):
            self.pos += 1
        frame.branch += self.pos - start
        frame.last = 1 if last is None else last

    def _test(self) -> None:
        """Past the character test of a fuzzy constraint: an escape, a set or one
        character that is no syntax (`regex` refuses one that is)."""
        text = self.text
        if text.startswith("\\", self.pos):
            self.pos += 1
            self._escape()
        elif text.startswith("[", self.pos):
            self.pos += 1
            self._set()
        elif self.pos < len(text) and text[self.pos] not in "()|?*+{^$#":
            self.pos += 1

    def _escape(self) -> None:
        """Past an escape whose backslash was read, as `regex` reads one: a character,
        with the `{NAME}` of `\\N` or the `{name}` of `\\p` and `\\P` when whole (else
        the letter stands for itself). What else an escape takes (`\\x41`, `\\g<name>`)
        is read on as items of its own: a few more, never a group or a set."""
        text = self.text
        if self.pos >= len(text):
            return
        ch = text[self.pos]
        self.pos += 1
        if ch == "N":
            named = _CHAR_NAME.match(text, self.pos)
            if named is not None:
                self.pos = named.end()
        elif ch in "pP" and text.startswith("{", self.pos):
            end = _property_end(text, self.pos + 1)
            if text.startswith("}", end):
                self.pos = end + 1

    def _set(self) -> None:
        """Past a set whose `[` was read, as `regex` reads one: a `]` first is a member,
        a POSIX class is one member, and version 1 nests sets and has set operators."""
        text = self.text
        if text.startswith("^", self.pos):
            self.pos += 1
        first = True  # a `]` here is a member, not the end
        while self.pos < len(text):
            if not first:
                if text[self.pos] == "]":
                    self.pos += 1
                    return
                if self.version1 and text.startswith(_SET_OPS, self.pos):
                    self.pos += 2
                    first = True
                    continue
            first = False
            ch = text[self.pos]
            self.pos += 1
            if ch == "\\":
                self._escape()
            elif ch == "[":
                posix = _posix_end(text, self.pos)
                if posix is not None:
                    self.pos = posix
                elif self.version1:
                    self._set()

    def _paren(self) -> bool | None:
        """Past what follows a `(`: True when it opens a group, False when it is a whole
        item (a group call or reference, a verb), None when it is no item (a comment,
        inline flags). Flags that turn on verbose mode end the reading (`verbose`)."""
        text = self.text
        if text.startswith("*", self.pos) and text[self.pos + 1 : self.pos + 2].isalpha():
            self._past(")")  # (*VERB)
            return False
        if not text.startswith("?", self.pos):
            return True
        self.pos += 1
        rest = text[self.pos : self.pos + 2]
        if rest[:1] == "#":  # (?#comment), which a backslash escapes in
            while self.pos < len(text) and text[self.pos] != ")":
                self.pos += 2 if text[self.pos] == "\\" else 1
            self.pos += 1
            return None
        if rest[:1] in ("=", "!", ">", "|", "(") or rest in ("<=", "<!"):
            # A lookaround, an atomic group, a branch reset, a conditional (whose
            # condition is read on as a group of its own).
            if rest[:1] != "(":
                self.pos += 2 if rest in ("<=", "<!") else 1
            return True
        if rest[:1] == "<" or rest == "P<":
            self._past(">")  # a named group
            return True
        if rest in ("P=", "P>", "P&") or rest[:1] in ("&", "R") or rest[:1].isdigit():
            self._past(")")
            return False
        if rest[:1] in ("+", "-") and rest[1:2].isdigit():
            self._past(")")
            return False
        flags = _FLAGS.match(text, self.pos)
        word = flags[0] if flags is not None else ""
        if "x" in word:
            self.verbose, self.pos = True, len(text)
            return None
        self.pos += len(word)
        if text.startswith(":", self.pos):
            self.pos += 1
            return True
        if text.startswith(")", self.pos):
            self.pos += 1
        return None

    def _past(self, end: str) -> None:
        found = self.text.find(end, self.pos)
        self.pos = len(self.text) if found < 0 else found + 1


def _property_end(text: str, pos: int) -> int:
    """Where a property's name that starts at `pos` ends (after an optional `^`), as
    `regex` reads it: a name, or a name, `:` or `=`, and a value that is not all spaces."""
    if text.startswith("^", pos):
        pos += 1
    name = _NAME.match(text, pos)
    end = name.end() if name is not None else pos
    if text[end : end + 1] in (":", "="):
        value = _VALUE.match(text, end + 1)
        if value is not None and value[0].strip():
            return value.end()
    return end


def _posix_end(text: str, pos: int) -> int | None:
    """Where a POSIX class (`[:alpha:]`) whose `[` ends before `pos` ends, or None where
    `regex` reads none there."""
    if not text.startswith(":", pos):
        return None
    end = _property_end(text, pos + 1)
    return end + 2 if text.startswith(":]", end) else None
