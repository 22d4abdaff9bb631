"""A shell command as a model or a caller gives it: checked and split before anything
runs, its words as they run, and its timeout."""

from __future__ import annotations

import math
import shlex
from collections.abc import Sequence
from typing import TypeGuard

import addressable as ad
from addressable.recording.argerrors import shown

_SHOWN = 60  # characters of a value an error shows


def split_command(command: str | Sequence[str], shell: bool, tool: str) -> tuple[str, list[str]]:
    """(the command as text, the argument list to start); `ArgumentError`, one line,
    for a command that is not a string or a list of strings, is empty, has an unclosed
    quote or holds a NUL byte."""
    if not isinstance(command, str) and not _is_words(command):
        raise ad.ArgumentError(
            f"{tool}: the command must be a string or a list of strings, not "
            f"{_kind(command)}; nothing was run"
        )
    text = command if isinstance(command, str) else shlex.join(command)
    if "\0" in text:
        raise ad.ArgumentError(f"{tool}: the command holds a NUL byte; nothing was run")
    if shell:
        argv = ["/bin/sh", "-c", text] if text.strip() else []
    elif isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as exc:  # "No closing quotation", "No escaped character"
            raise ad.ArgumentError(
                f"{tool}: the command cannot be split into words ({exc}); nothing was run"
            ) from None
    else:
        argv = list(command)
    if not argv or not argv[0]:
        raise ad.ArgumentError(f"{tool}: the command is empty; nothing was run")
    return text, argv


def _is_words(command: object) -> bool:
    """Whether `command` is a list (or tuple) of strings: an argument list."""
    return isinstance(command, list | tuple) and all(isinstance(w, str) for w in command)


def _kind(value: object) -> str:
    """What `value` is, for an error: its type, or a list's and that of a member that is
    not a string."""
    if isinstance(value, list | tuple):
        wrong = next(w for w in value if not isinstance(w, str))
        return f"a {type(value).__name__} holding {type(wrong).__name__}"
    return type(value).__name__


def words(text: str, argv: list[str], shell: bool) -> str:
    """The command's words as they run, quoted and spaced one way (`'rm'  x` is
    `rm x`), for `pure=` and `writes=` to match; a shell command's as `shlex` splits
    it, or its text when it does not split."""
    if not shell:
        return shlex.join(argv)
    try:
        return shlex.join(shlex.split(text))
    except ValueError:  # an unclosed quote: /bin/sh will say so
        return text.strip()


def is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def timeout_seconds(value: object, tool: str) -> float:
    """`value` as a timeout in seconds; `ArgumentError`, one line, unless it is a finite
    number over 0 (a direct call's or the adapter's own: a model's past the adapter's
    limit is the limit, see `handle`)."""
    try:
        seconds = float(value) if is_number(value) else math.nan
    except OverflowError:  # an int past any float
        seconds = math.inf
    if not 0 < seconds < math.inf:
        said = shown(value) if is_number(value) else type(value).__name__
        said = said if len(said) <= _SHOWN else said[:_SHOWN] + "..."
        raise ad.ArgumentError(
            f"{tool}: timeout must be a finite number of seconds over 0, not {said}; "
            "nothing was run"
        )
    return seconds
