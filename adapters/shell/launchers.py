"""The options by which a program Shell may run starts another program.

A command is checked with what it makes run: the command an option names (`find -exec`,
`fd --exec`, `rg --pre`, `tar -I`) is checked as the model's own command is; a command
line that a shell runs, or that the program splits into words its own way, is taken only
as plain words; and an option that runs what no check can read, or that configures a
program git will start, is refused. Options are read as each program reads them (`SPECS`
says which options of which programs start another program, and how): long ones by a
prefix of their name, short ones inside a cluster for the programs that bundle them, and
the value of an option that takes one is skipped. A git command is read as git reads it
(`check_git`). What these checks stop, and what they do not: docs/security.md, "Shell".
"""

from __future__ import annotations

import functools
import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal, NoReturn

import addressable as ad

from .._git import git_lines

# -- which options start a program ------------------------------------------------------------

# How an option starts another program:
# - "command": the words after it, up to ";", are a command (find -ok, fd -x);
# - "command+": the same, or up to "+" right after "{}" (find -exec);
# - "line": its value is a command line: plain words, checked as a command (tar -I);
# - "program": its value names one program, run without a shell (rg --pre);
# - "refused": its value is run by a shell or reaches a program no check sees;
# - "setting": its value is a setting, `Name=value` or `Name value` (ssh -o), refused
#   when the setting's name is one of `RUNNING_SETTINGS`;
# - "host": its value is jump hosts, which ssh puts in a command line a shell runs.
How = Literal["command", "command+", "line", "program", "refused", "setting", "host"]


@dataclass(frozen=True)
class Spec:
    """How a program reads its options."""

    options: dict[str, How]
    valued: frozenset[str] = frozenset()  # short options that take a value
    clusters: bool = False  # short options bundle (`-xzf`); else whole words only
    dash_values: bool = False  # a value in the next word may start with "-" (getopt)
    whole: bool = False  # find: options are whole words, values skipped, no "--"
    paired: frozenset[str] = frozenset()  # of `valued`, those that take two words
    valued_like: re.Pattern[str] | None = None  # more options that take a value


Check = Callable[[Sequence[str]], None]

# find's tests and actions that take the next word as their value (-fprintf two).
_FIND_VALUED = frozenset(
    {
        "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex",
        "-iregex", "-lname", "-ilname", "-newer", "-anewer", "-cnewer", "-samefile",
        "-user", "-group", "-perm", "-type", "-xtype", "-size", "-links", "-inum", "-uid",
        "-gid", "-atime", "-ctime", "-mtime", "-amin", "-cmin", "-mmin", "-used",
        "-maxdepth", "-mindepth", "-fstype", "-context", "-printf", "-fprintf", "-fprint",
        "-fprint0", "-fls", "-files0-from", "-regextype",
    }
)  # fmt: skip
_FIND = Spec(
    {"-exec": "command+", "-execdir": "command+", "-ok": "command", "-okdir": "command"},
    _FIND_VALUED,
    dash_values=True,
    whole=True,
    paired=frozenset({"-fprintf"}),  # -fprintf FILE FORMAT
    valued_like=re.compile(r"-newer[aBcmt][aBcmt]"),
)
_FD = Spec(
    {"-x": "command", "--exec": "command", "-X": "command", "--exec-batch": "command"},
    frozenset({"-d", "-E", "-t", "-e", "-S", "-o", "-c", "-j", "-C"}),
    clusters=True,
)
_TAR = Spec(
    {
        "--to-command": "refused",
        "--checkpoint-action": "refused",
        "--info-script": "refused",
        "--new-volume-script": "refused",
        "-F": "refused",
        # Run by /bin/sh -c when tar compresses, split by tar when it decompresses.
        "--use-compress-program": "line",
        "-I": "line",
        # Run as a path, given the archive's host and the remote command as arguments.
        "--rsh-command": "refused",
        "--rmt-command": "refused",
    },
    frozenset({"-b", "-C", "-f", "-g", "-H", "-K", "-L", "-N", "-T", "-V", "-X"}),
    clusters=True,
    dash_values=True,
)
_INSTALL = Spec(
    {"--strip-program": "program"}, frozenset({"-g", "-m", "-o", "-S", "-t"}), clusters=True
)
_SPLIT = Spec({"--filter": "line"}, frozenset({"-a", "-b", "-C", "-l", "-n", "-t"}), clusters=True)
# ssh settings that run a local command line or load code: ProxyCommand and the like,
# and those that read more settings (a file the model wrote, or `Match exec`).
RUNNING_SETTINGS = frozenset(
    {
        "proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand",
        "pkcs11provider", "smartcarddevice", "securitykeyprovider", "include", "match",
        "host", "xauthlocation",
    }
)  # fmt: skip


def _ssh(valued: str, **more: How) -> Spec:
    """How ssh, scp and sftp read their options: `-o` a setting, `-F` a settings file
    (refused: it can hold any setting), and `more` of each program's own; `valued`
    are the letters of its other options that take a value."""
    options: dict[str, How] = {"-o": "setting", "-F": "refused"}
    options |= {f"-{letter}": how for letter, how in more.items()}
    return Spec(options, frozenset("-" + letter for letter in valued), clusters=True)


SPECS: dict[str, Spec] = {
    "find": _FIND,
    "fd": _FD,
    "fdfind": _FD,
    "rg": Spec({"--pre": "program", "--hostname-bin": "program"}),
    "tar": _TAR,
    "gtar": _TAR,
    "sort": Spec({"--compress-program": "program"}),
    # rsync splits -e into words itself; the remote shell runs --rsync-path.
    "rsync": Spec(
        {"-e": "line", "--rsh": "line", "--rsync-path": "refused"},
        frozenset({"-B", "-T", "-f", "-M"}),
        clusters=True,
    ),
    # install -s runs the program --strip-program names on each file it installs.
    "install": _INSTALL,
    "ginstall": _INSTALL,
    # split pipes each piece to the command line --filter gives, through $SHELL -c.
    "split": _SPLIT,
    "gsplit": _SPLIT,
    # diff3 and sdiff compare through the program --diff-program names.
    "diff3": Spec({"--diff-program": "program"}, frozenset({"-L"}), clusters=True),
    "sdiff": Spec({"--diff-program": "program"}, frozenset({"-I", "-o", "-w"}), clusters=True),
    # man runs its pager's command line through a shell, and -H a browser; a config
    # file (-C) can name any of the programs it runs.
    "man": Spec(
        {
            "-P": "line",
            "--pager": "line",
            "-H": "refused",
            "--html": "refused",
            "-C": "refused",
            "--config-file": "refused",
        },
        frozenset({"-E", "-L", "-M", "-R", "-S", "-e", "-m", "-p", "-r", "-s"}),
        clusters=True,
    ),
    # Mercurial's --config can set a hook or an alias, which run shell commands.
    "hg": Spec({"--config": "refused", "--config-file": "refused"}),
    # zip runs -TT through system(); it is a two-letter option, found in any cluster.
    "zip": Spec({"-TT": "line", "--unzip-command": "line"}, clusters=True),
    # wget asks the program --use-askpass names for a password; -e runs a wgetrc line,
    # which can name that program too, as can the file --config names.
    "wget": Spec(
        {
            "--use-askpass": "program",
            "-e": "refused",
            "--execute": "refused",
            "--config": "refused",
        },
        frozenset("-" + c for c in "oaiBtOTwQPUlARDIX"),
        clusters=True,
    ),
    # ssh -I loads a PKCS#11 library; scp and sftp run -S's program in ssh's place and
    # -D's as their server; sftp runs a batch file's `!command` lines (-b).
    "ssh": _ssh("BbcDEeiLlmOPpQRSWw", I="refused", J="host"),
    "slogin": _ssh("BbcDEeiLlmOPpQRSWw", I="refused", J="host"),
    "scp": _ssh("cilPX", S="program", D="refused", J="host"),
    "sftp": _ssh("BcilPRsX", S="program", D="refused", b="refused", J="host"),
}


# -- reading a command's options --------------------------------------------------------------

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
    options are checked by `check_git`."""
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


# -- git --------------------------------------------------------------------------------------

# Global options, before the command: flags, options that take a value (the next
# word, or `--opt=value`), and the words git reads as the command `help` or `version`.
_GLOBAL_FLAGS = frozenset(
    {
        "-p", "--paginate", "-P", "--no-pager", "--bare", "--no-replace-objects",
        "--no-lazy-fetch", "--no-optional-locks", "--no-advice", "--literal-pathspecs",
        "--no-literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs",
        "--icase-pathspecs", "--exec-path", "--html-path", "--man-path", "--info-path",
    }
)  # fmt: skip
_GLOBAL_VALUED = frozenset({"-C", "--git-dir", "--work-tree", "--namespace", "--attr-source"})
_AS_COMMAND = {"-h": "help", "--help": "help", "-v": "version", "--version": "version"}

_ANY: dict[str, How] = {
    "--upload-pack": "refused",
    "--receive-pack": "refused",
    "--exec": "refused",
}
_OPTIONS: dict[str, dict[str, How]] = {
    "rebase": {"-x": "refused"},
    "difftool": {"-x": "refused", "--extcmd": "refused"},
    "grep": {"-O": "refused", "--open-files-in-pager": "refused"},
    "clone": {"-u": "refused", "-c": "refused", "--config": "refused", "--template": "refused"},
    "init": {"--template": "refused"},
    "daemon": {"--access-hook": "refused"},
    "svn": {"--authors-prog": "refused"},
}
_VALUED = {"grep": frozenset({"-e", "-f"})}  # a pattern is not an option: -e -Oops
# Commands that exist to run a command line (remote-ext: its address is one;
# merge-index: its first word is a program; for-each-repo: its words are a git command
# run in each repository a setting names), and those whose first word after their
# options is one that does.
_RUNS = frozenset(
    {"filter-branch", "send-email", "instaweb", "remote-ext", "merge-index", "for-each-repo"}
)
_RUNS_WITH = {"bisect": "run", "submodule": "foreach"}
_BISECT_SHOWS = frozenset({"view", "visualize"})  # they run a command their words name

# git config: read actions, options that change no value, options with a value, and
# the commands of newer gits that write (`git config set`).
_CONFIG_READS = frozenset(
    {
        "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color",
        "--get-colorbool", "--list",
    }
)  # fmt: skip
_CONFIG_FLAGS = frozenset(
    {
        "--global", "--system", "--local", "--worktree", "--bool", "--int",
        "--bool-or-int", "--path", "--expiry-date", "--no-type", "--null", "--name-only",
        "--includes", "--no-includes", "--show-origin", "--show-scope", "--fixed-value",
    }
)  # fmt: skip
_CONFIG_VALUED = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment"})
_CONFIG_WRITES = frozenset({"set", "unset", "rename-section", "remove-section", "edit"})


def check_git(tool: str, args: Sequence[str], check: Check) -> None:
    """`ScopeError` if git, given `args`, would start a program that `check` refuses
    or one no check can read, or would run something other than its own command."""
    at = command_at(tool, args)
    if at >= len(args):
        return
    command, rest = _AS_COMMAND.get(args[at], args[at]), args[at + 1 :]
    commands = _own_commands()
    if "--" in command or (commands is not None and command not in commands):
        raise ad.ScopeError(
            f"{tool}: {command[:60]!r} is not one of git's own commands (an alias, an "
            "extension or an internal helper can run any program): name git's own "
            "command; nothing was run"
        )
    first = next((word for word in rest if not word.startswith("-")), None)
    if command in _RUNS or (command in _RUNS_WITH and first == _RUNS_WITH[command]):
        refuse(tool, "git", command if command in _RUNS else f"{command} {first}")
    if command == "bisect" and first in _BISECT_SHOWS:
        # `git bisect view ARGS` runs `git ARGS` (or gitk/tig): ARGS are git's command.
        after = rest[rest.index(first) + 1 :]
        if after and not after[0].startswith("-"):
            refuse(tool, "git", f"bisect {first} {after[0][:60]}")
    if command == "config":
        _config(tool, rest)
    options = {**_ANY, **_OPTIONS.get(command, {})}
    spec = Spec(options, _VALUED.get(command, frozenset()), clusters=True, dash_values=True)
    scan(tool, f"git {command}", rest, spec, check)


def command_at(tool: str, args: Sequence[str]) -> int:
    """Where git's command is in `args`, after its global options (`len(args)` when
    there is none); `ScopeError` for an option that sets configuration or that this
    adapter does not know."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        word = args[i]
        name, eq, _ = word.partition("=")
        if word in _AS_COMMAND:
            return i
        if name in ("-c", "--config-env") or (name == "--exec-path" and eq):
            refuse(tool, "git", name)
        if name in _GLOBAL_VALUED and not (eq and name == "-C"):
            i += 1 if eq else 2
        elif word in _GLOBAL_FLAGS or (name == "--list-cmds" and eq):
            i += 1
        else:
            raise ad.ScopeError(
                f"{tool}: git {name[:60]} is not an option this Shell adapter lets git "
                "take before its command; nothing was run"
            )
    return i


@functools.cache
def _listed(git: str) -> frozenset[str] | None:
    """The commands the git at `git` has (builtins, and programs in its exec-path)."""
    lines = git_lines([git, "--list-cmds=builtins,main"], "/")
    return None if lines is None else frozenset(line.strip() for line in lines)


def _own_commands() -> frozenset[str] | None:
    """git's own commands, asked once of the git on PATH; None when it cannot say
    (no git there: the command cannot run anyway)."""
    git = shutil.which("git")
    return None if git is None else _listed(git)


def _config(tool: str, rest: Sequence[str]) -> None:
    """`ScopeError` unless `git config REST` only reads. git reads its options up to
    the first other word (`git config alias.x '!sh' --list` sets alias.x): a read is
    one read action there, or none and one name (`git config user.name`), or a newer
    git's `get` or `list`."""
    if rest[:1] in (["get"], ["list"]):
        return
    reads, i = 0, 0
    while i < len(rest) and rest[i].startswith("-") and rest[i] != "-":
        word = rest[i]
        i += 1
        if word == "--":
            break
        name, eq, _ = word.partition("=")
        if name in _CONFIG_VALUED and not (eq and name == "-f"):
            i += 0 if eq else 1
        elif not word.startswith("--"):  # short options, maybe in a cluster: -lz, -fFILE
            for at, letter in enumerate(word[1:], 2):
                if letter == "f":
                    i += 0 if word[at:] else 1
                    break
                if letter not in "lz":
                    _not_a_read(tool)
                reads += letter == "l"
        elif word in _CONFIG_READS:
            reads += 1
        elif word not in _CONFIG_FLAGS:
            _not_a_read(tool)
    names = rest[i:]
    if names[:1] and names[0] in _CONFIG_WRITES:
        _not_a_read(tool)
    if not (reads == 1 or (reads == 0 and len(names) <= 1)):
        _not_a_read(tool)


def _not_a_read(tool: str) -> NoReturn:
    raise ad.ScopeError(
        f"{tool}: git config may only be read here (git config NAME, --get NAME, "
        "--list): a value it sets can make git run a program; nothing was run"
    )
