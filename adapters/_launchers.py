"""The options by which a program Shell may run starts another program.

`allow=("find", "git")` lets a model run find and git, not a shell: but
`find . -exec sh -c ...` runs one, and so does `git -c alias.x='!sh ...' x`. A command
is checked with what it makes run: the command an option names (`find -exec`,
`fd --exec`, `rg --pre`, `tar -I`) is checked as the model's own command is, and an
option whose value a shell runs, or that configures a program git will start
(`git -c`, `git config core.pager ...`, `rebase --exec`, `--upload-pack`), is refused.
Options are matched as the programs read them: long ones by a prefix of their name
(`--to-com=...`), short ones inside a cluster (`-xzIzstd`).

A program that interprets what it is given (python, node, awk, sed, make and its
variables, ...) runs that code by design: allowing it allows any code. These checks
bound the programs that otherwise only search, list, archive or keep versions.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from pathlib import PurePosixPath
from typing import Literal, NoReturn

import addressable as ad

# How an option starts another program:
# - "command": the words after it, up to ";" or "+", are a command (find -exec);
# - "program": its value is a command line, split into words (rg --pre, tar -I);
# - "shell": its value is run by a shell, or names a program another way: refused.
How = Literal["command", "program", "shell"]
Options = dict[str, How]

_FIND: Options = {"-exec": "command", "-execdir": "command", "-ok": "command", "-okdir": "command"}
_FD: Options = {"-x": "command", "--exec": "command", "-X": "command", "--exec-batch": "command"}
_TAR: Options = {
    "--to-command": "shell",
    "--checkpoint-action": "shell",
    "--info-script": "shell",
    "--new-volume-script": "shell",
    "-F": "shell",
    "--use-compress-program": "program",
    "-I": "program",
    "--rsh-command": "program",
    "--rmt-command": "program",
}
# Options of getopt programs, read as GNU reads them; find and go read their own way.
_GNU: dict[str, Options] = {
    "fd": _FD,
    "fdfind": _FD,
    "rg": {"--pre": "program"},
    "tar": _TAR,
    "gtar": _TAR,
    "sort": {"--compress-program": "program"},
    "rsync": {"-e": "program", "--rsh": "program", "--rsync-path": "shell"},
    "zip": {"-TT": "program", "--unzip-command": "program"},
}
_GO: Options = {"-exec": "program", "-toolexec": "program", "-vettool": "program"}

# git: options before the subcommand that set configuration (which can name programs
# to run: alias.*=!..., core.pager, core.sshCommand, core.fsmonitor, ...), and those
# that take their value as the next word.
_GIT_CONFIG = frozenset({"-c", "--config-env"})
_GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"})
_GIT_ANY: Options = {"--upload-pack": "shell", "--receive-pack": "shell", "--exec": "shell"}
_GIT_SUB: dict[str, Options] = {
    "rebase": {"-x": "shell"},
    "difftool": {"-x": "shell", "--extcmd": "shell"},
    "grep": {"-O": "shell", "--open-files-in-pager": "shell"},
    "clone": {"-u": "shell", "-c": "shell", "--config": "shell", "--template": "shell"},
    "init": {"--template": "shell"},
}
# Subcommands that exist to run a command line, or that send mail through a program.
_GIT_RUNS = frozenset({"filter-branch", "send-email", "instaweb"})
_GIT_RUNS_WITH = {"bisect": "run", "submodule": "foreach"}
_GIT_READS_CONFIG = frozenset(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "-l", "--list"}
)

Check = Callable[[Sequence[str]], None]


def check_launches(tool: str, argv: Sequence[str], check: Check) -> None:
    """`ScopeError` if `argv` makes its program start one that `check` refuses (it is
    given each such command's words), or a command line through a shell."""
    name = PurePosixPath(argv[0]).name.lower()
    args = list(argv[1:])
    if name == "find":
        _nested(tool, name, args, _FIND, check, exact=True)
    elif name == "git":
        _git(tool, args, check)
    elif name == "go":
        _nested(tool, name, args, _GO, check, exact=True, go=True)
    elif name in _GNU:
        if name in ("tar", "gtar") and args and not args[0].startswith("-"):
            # Old-style `tar cIf PROG FILE`: its letters take the words that follow, in
            # order. Such a letter that starts a program is refused, not followed.
            for letter in args.pop(0):
                if "-" + letter in _TAR:
                    _refuse(tool, name, "-" + letter)
        _nested(tool, name, args, _GNU[name], check)


def _nested(
    tool: str,
    program: str,
    args: list[str],
    options: Options,
    check: Check,
    *,
    exact: bool = False,
    go: bool = False,
) -> None:
    """Check each command `options` make `program` start, in `args`."""
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--" and not exact:
            return  # what follows is operands
        found = _match(word, options, exact, go)
        if found is None:
            i += 1
            continue
        option, how, value = found
        if how == "command":
            end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "+")), len(args))
            nested = args[i + 1 : end]
            if nested:
                check(nested)
            i = end + 1
            continue
        if value is None:
            value = args[i + 1] if i + 1 < len(args) else ""
            i += 1
        if how == "shell":
            _refuse(tool, program, option)
        words = _split(tool, program, option, value)
        if words:
            check(words)
        i += 1


def _match(
    word: str, options: Options, exact: bool, go: bool
) -> tuple[str, How, str | None] | None:
    """The option of `options` that `word` gives, how it starts a program, and its
    value when given in the same word; None when `word` is none of them."""
    if not word.startswith("-") or word == "-":
        return None
    if exact:  # find: whole words; go: `-flag`, `--flag`, either with `=value`
        name, eq, value = word.partition("=") if go else (word, "", "")
        if go and name.startswith("--"):
            name = name[1:]
        how = options.get(name)
        return None if how is None else (name, how, value if eq else None)
    if word.startswith("--"):
        name, eq, value = word[2:].partition("=")
        for option, how in options.items():
            # A long option may be given by a prefix of its name, as getopt takes it.
            if option.startswith("--") and name and option[2:].startswith(name):
                return option, how, value if eq else None
        return None
    for option, how in options.items():  # a short option, maybe in a cluster
        if len(option) == 2 and option[1] in word[1:]:
            rest = word[word.index(option[1], 1) + 1 :]
            return option, how, rest or None
        if len(option) > 2 and not option.startswith("--") and word.startswith(option):
            return option, how, word[len(option) :] or None  # zip -TT cmd, -TTcmd
    return None


def _git(tool: str, args: list[str], check: Check) -> None:
    i = 0
    while i < len(args) and args[i].startswith("-"):  # options before the subcommand
        name = args[i].partition("=")[0]
        if name in _GIT_CONFIG or (name == "--exec-path" and "=" in args[i]):
            _refuse(tool, "git", name)
        i += 2 if args[i] in _GIT_VALUED else 1
    if i >= len(args):
        return
    sub, rest = args[i], args[i + 1 :]
    if sub in _GIT_RUNS or _GIT_RUNS_WITH.get(sub) in rest[:1]:
        _refuse(tool, "git", sub if sub in _GIT_RUNS else f"{sub} {rest[0]}")
    if sub == "config" and not (
        any(w in _GIT_READS_CONFIG for w in rest) or rest[:1] in (["get"], ["list"])
    ):
        raise ad.ScopeError(
            f"{tool}: git config may only be read here (--get, --list): a value it sets "
            "can make git run a program; nothing was run"
        )
    _nested(tool, f"git {sub}", rest, {**_GIT_ANY, **_GIT_SUB.get(sub, {})}, check)


def _split(tool: str, program: str, option: str, value: str) -> list[str]:
    try:
        return shlex.split(value)
    except ValueError:
        raise ad.ScopeError(
            f"{tool}: {program} {option} names a command that cannot be read as words; "
            "nothing was run"
        ) from None


def _refuse(tool: str, program: str, option: str) -> NoReturn:
    runs = program.split()[0]
    raise ad.ScopeError(
        f"{tool}: {program} {option} makes {runs} run a command line or a program it "
        "names, which this Shell adapter does not allow; nothing was run"
    )
