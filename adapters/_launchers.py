"""The options by which a program Shell may run starts another program.

`allow=("find", "git")` lets a model run find and git, not a shell: but
`find . -exec sh -c ...` runs one, and so does `git -c alias.x='!sh ...' x`. A command
is checked with what it makes run: the command an option names (`find -exec`,
`fd --exec`, `rg --pre`, `tar -I`) is checked as the model's own command is, and an
option that runs a command line no check can read, or that configures a program git
will start, is refused. Options are read as each program reads them: long ones by a
prefix of their name (`--to-com=...`), short ones inside a cluster (`-xzIzstd`) for
the programs that bundle them, and the value of an option that takes one is skipped.
git's rules are in `_gitlaunch`.

A command line that a shell runs (`tar -I` when it compresses, `zip -TT`), or that
the program splits into words its own way (`rsync -e`, `go -toolexec`), is taken only
as plain words: no quote, no shell character, no builtin such as `.` or `trap` first.
Then every reader sees the same words, and they are checked as a command.

These checks stop the direct routes only. A program that interprets what it is given
(python, node, awk, sed, make, sqlite3 and psql, go with `go run` and `go generate`)
runs that code by design. git runs the hooks of the repository it works in, and the
programs its config names (`core.fsmonitor`, a filter, a diff driver): allowing git, or
any program that writes files in a repository (git itself, find -fprintf, tar -x),
allows the code a model can put there, which a later, ordinary git command runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import NoReturn

import addressable as ad

from ._launchspecs import RUNNING_SETTINGS, SPECS, Check, How, Spec

# go: `-flag`, `--flag`, either with `=value`; -exec and -toolexec are split by go.
_GO: dict[str, How] = {"exec": "line", "toolexec": "line", "vettool": "program"}
_GO_BOOL = frozenset(
    {
        "a", "n", "v", "x", "race", "msan", "asan", "work", "trimpath", "linkshared",
        "modcacherw", "buildvcs", "cover", "json",
    }
)  # fmt: skip

_PLAIN = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")
_HOSTS = re.compile(r"[A-Za-z0-9_.@:%,\[\]-]+")  # ssh -J: user@host:port, comma-separated
# Builtins and keywords by which a shell runs its words as code, or a file.
_SHELL_WORDS = frozenset(
    {
        ".", "source", "eval", "exec", "command", "builtin", "time", "trap", "fc",
        "enable", "coproc", "mapfile", "readarray", "compgen", "complete",
    }
)  # fmt: skip
_NOT_A_PROGRAM = ("!", "(", ")", ",")  # find's operators: not the start of a command


def check_launches(tool: str, argv: Sequence[str], check: Check) -> None:
    """`ScopeError` if `argv` makes its program start one that `check` refuses (it is
    given each such command's words), or a command line that cannot be checked. git's
    options are checked by `_gitlaunch.check_git`."""
    name = PurePosixPath(argv[0]).name.lower()
    args = list(argv[1:])
    if name == "go":
        _go(tool, args, check)
        return
    spec = SPECS.get(name)
    if spec is None:
        return
    if name in ("tar", "gtar") and args and not args[0].startswith("-"):
        # Old-style `tar cIf PROG FILE`: its letters take the words that follow, in
        # order. Such a letter that starts a program is refused, not followed.
        for letter in args.pop(0):
            if "-" + letter in spec.options:
                refuse(tool, name, "-" + letter)
    scan(tool, name, args, spec, check)


def scan(tool: str, program: str, args: Sequence[str], spec: Spec, check: Check) -> None:
    """Check each command the options of `args` make `program` start."""
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--" and not spec.whole:
            return  # what follows is operands
        found = _option(word, spec)
        if found is None:
            continue
        option, how, value = found
        if how is None:  # an option that takes a value: skip it
            if option in spec.paired:
                i += 1
            if value is None and i < len(args):
                i += 1 if spec.dash_values or not args[i].startswith("-") else 0
            continue
        if how in ("command", "command+"):
            if value is not None:
                raise ad.ScopeError(
                    f"{tool}: {program} {option}: give its command as separate words "
                    "after it; nothing was run"
                )
            i = _command(tool, program, option, args, i, how == "command+", check)
            continue
        if value is None:
            value = args[i] if i < len(args) else ""
            i += 1
        _launch(tool, program, option, how, value, check)


def _option(word: str, spec: Spec) -> tuple[str, How | None, str | None] | None:
    """The option `word` gives, how it starts a program (None: it takes a value and
    starts none), and its value when in the same word; None when it is no such option."""
    if not word.startswith("-") or word == "-":
        return None
    if spec.whole:
        if word in spec.valued or (spec.valued_like and spec.valued_like.fullmatch(word)):
            return word, None, None
        how = spec.options.get(word)
        return None if how is None else (word, how, None)
    if word.startswith("--"):
        name, eq, value = word[2:].partition("=")
        for option, how in spec.options.items():
            # A long option may be given by a prefix of its name, as getopt takes it.
            if option.startswith("--") and name and option[2:].startswith(name):
                return option, how, value if eq else None
        return None
    if not spec.clusters:
        how = spec.options.get(word)
        return None if how is None else (word, how, None)
    for option, how in spec.options.items():  # a two-letter short option (zip -TT)
        at = word.find(option[1:], 1) if len(option) > 2 and option[1] != "-" else -1
        if at > 0:
            return option, how, word[at + len(option) - 1 :].removeprefix("=") or None
    for at, letter in enumerate(word[1:], 2):  # letters in order, up to one with a value
        option = "-" + letter
        if option in spec.options:
            return option, spec.options[option], word[at:] or None
        if option in spec.valued:
            return option, None, word[at:] or None
    return None


_PLACEHOLDER = re.compile(r"\{(?:|/|//|\.|/\.)\}")  # find's {}; fd's {}, {/}, {//}, {.}, {/.}


def _command(
    tool: str, program: str, option: str, args: Sequence[str], start: int, plus: bool, check: Check
) -> int:
    """Check the command that starts at `args[start]`; the index after its end."""
    end = len(args)
    for j in range(start, len(args)):
        if args[j] == ";":
            end = j
            break
        # GNU find ends the command at "+" after a word holding "{}" (and then wants
        # "{}" alone); BSD find only after "{}" alone. Either way: "{}" alone.
        if plus and args[j] == "+" and j > start and "{}" in args[j - 1]:
            if args[j - 1] != "{}":
                raise ad.ScopeError(
                    f"{tool}: {program} {option}: put {{}} alone before +; nothing was run"
                )
            end = j
            break
    words = args[start:end]
    # find and fd put the path they found where a placeholder is, within a word too: as
    # the program, or spliced into an option (`--to-command{}` of a path "=cmd"), it
    # makes a word no check here has read.
    for n, word in enumerate(words):
        if _PLACEHOLDER.search(word) and (n == 0 or word.startswith("-")):
            what = "the program" if n == 0 else f"in the option {word!r}"
            raise ad.ScopeError(
                f"{tool}: {program} {option}: the path found cannot be {what}; nothing was run"
            )
    if words and (words[0].startswith("-") or words[0] in _NOT_A_PROGRAM):
        raise ad.ScopeError(
            f"{tool}: {program} {option} is followed by {words[0]!r}, not a program; "
            "nothing was run"
        )
    if words:
        check(words)
    return end + 1


def _go(tool: str, args: Sequence[str], check: Check) -> None:
    """go's flags: after its command, up to the first word that is not a flag nor a
    flag's value (`go run ./cmd/x -exec foo` gives -exec to the program); anywhere for
    `go test` and `go vet`, which read flags after the packages too."""
    command, flags = (args[0], args[1:]) if args else ("", [])
    anywhere = command in ("test", "vet")
    value_next = False  # the word before was a flag that may take the next as its value
    i = 0
    while i < len(flags):
        word = flags[i]
        i += 1
        if not word.startswith("-") or word == "-":
            if not (anywhere or value_next):
                return
            value_next = False
            continue
        name, eq, value = word.removeprefix("-").removeprefix("-").partition("=")
        how = _GO.get(name)
        if how is None:
            value_next = not eq and name not in _GO_BOOL
            continue
        value_next = False
        if not eq:
            value = flags[i] if i < len(flags) else ""
            i += 1
        _launch(tool, f"go {command}", "-" + name, how, value, check)


def _launch(tool: str, program: str, option: str, how: How, value: str, check: Check) -> None:
    """Check the program `option`'s `value` makes `program` start, as `how` says."""
    if how == "refused":
        refuse(tool, program, option)
    if how == "setting":
        # ssh drops quotes and reads `=` or any white space around a name (a newline
        # too): none is taken here, nor a control character anywhere in it.
        if (
            any(c in value for c in "\"'\\")
            or value[:1] == "="
            or value[:1].isspace()
            or any(c < " " or c == "\x7f" for c in value)
        ):
            refuse(
                tool, program, f"{option} with quotes, a leading separator or a control character"
            )
        parts = re.split(r"[\s=]+", value, maxsplit=1)
        name, rest = parts[0].lower(), parts[1] if len(parts) > 1 else ""
        if name in RUNNING_SETTINGS:
            refuse(tool, program, f"{option} {name}")
        if name == "proxyjump":
            _launch(tool, program, option, "host", rest, check)
        return
    if how == "host":
        # ssh runs a jump host through /bin/sh -c: host names only.
        if value and (value.startswith("-") or not _HOSTS.fullmatch(value)):
            raise ad.ScopeError(
                f"{tool}: {program} {option} takes hosts as user@host:port, comma-separated,"
                " of letters, digits and _.@:%,[]- only; nothing was run"
            )
        return
    if how == "program":
        if value:
            check([value])
        return
    words = [word for word in value.split(" ") if word]
    if all(_PLAIN.fullmatch(word) for word in words):
        if not words:
            return
        first = words[0]
        if not (first.startswith("-") or "=" in first or first in _SHELL_WORDS):
            check(words)
            return
    raise ad.ScopeError(
        f"{tool}: {program} {option} takes a command line, which must be plain words "
        "here: a program, then its arguments, of letters, digits and _@%+=:,./- only; "
        "nothing was run"
    )


def refuse(tool: str, program: str, option: str) -> NoReturn:
    """`ScopeError`: `option` makes `program` run what no check can read."""
    runs = program.split()[0]
    raise ad.ScopeError(
        f"{tool}: {program} {option} makes {runs} run a command line or a program it "
        "names, which this Shell adapter does not allow; nothing was run"
    )
