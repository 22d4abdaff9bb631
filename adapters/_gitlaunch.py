"""git's routes to another program, for Shell (the other programs are in `_launchers`).

git runs programs many ways: an alias (`!sh ...`), a setting (`core.pager`,
`core.fsmonitor`, `core.sshCommand`), an option whose value is a command (`rebase -x`,
`--upload-pack`), a command that exists to run one (`bisect run`, `submodule foreach`,
`filter-branch`). A command is read as git reads it: global options, each one git
documents (others are refused, so none can hide the command), then the command, which
must be one of git's own (an alias or an extension could run anything), then its
options. Settings are only read: `-c`, `--config-env` and a `git config` that is not a
read are refused.

The repository's own hooks and config are not seen: git runs them in any command that
reaches them (`commit` runs hooks, `status` may run `core.fsmonitor`, `diff` a diff
driver). A program that writes files there (git itself, find, tar) can put them there;
these checks stop only the direct routes.
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import Sequence
from typing import NoReturn

import addressable as ad

from ._git import git_lines
from ._launchers import refuse, scan
from ._launchspecs import Check, How, Spec

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
