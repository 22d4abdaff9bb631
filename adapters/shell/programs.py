"""What Shell makes of a command before and after it runs: whether the model may run its
program (`allow=`, and the shells and command runners refused without `allow_shell`), and
its determinism and key (`pure=`, `writes=`, `git show REV:path`, a `cat` of a file as
it is at HEAD)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

import addressable as ad

from .._git import clean_at_head, commit_of
from .launchers import check_git, check_launches, command_at

_GIT_SHOW = re.compile(r"^git\s+show\s+([^\s:]+):(\S+)$")
_CAT = re.compile(r"^cat\s+(?:--\s+)?(\S+)$")
_SHOWN = 60  # characters of a refused program's name an error shows

# Programs whose work is to run another program, or a command line: shells, and the
# runners that take a command as their arguments. Without `allow_shell`, a model may run
# none of them (by name or by path) unless the user named it in `allow`.
RUNNERS = frozenset(
    {
        # shells
        "sh", "ash", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "pdksh", "oksh",
        "yash", "posh", "rbash", "csh", "tcsh", "fish", "elvish", "nu", "xonsh", "rc",
        "pwsh", "powershell", "busybox", "toybox",
        # runners
        "env", "xargs", "nohup", "timeout", "nice", "ionice", "chrt", "taskset",
        "sudo", "doas", "su", "runuser", "pkexec", "sg", "newgrp", "setsid", "setpriv",
        "stdbuf", "unbuffer", "chroot", "unshare", "nsenter", "flock", "time", "watch",
        "script", "strace", "ltrace", "prlimit", "systemd-run", "parallel", "expect",
        "run-parts", "start-stop-daemon", "firejail", "bwrap", "exec", "command",
        "setarch", "linux32", "linux64", "i386", "x86_64", "ld.so", "ld-linux.so.2",
        "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "ld-musl-x86_64.so.1",
        "eval", "builtin", "ssh-agent", "dbus-run-session", "dbus-launch", "valgrind",
        "gdb", "lldb", "tmux", "screen", "byobu", "catchsegv", "faketime", "fakeroot",
        "fakechroot", "proot", "torsocks", "proxychains", "proxychains4", "numactl",
        "cgexec", "xvfb-run", "perf", "systemd-inhibit", "chpst", "daemonize", "sshpass",
        "gosu", "su-exec", "setuidgid", "chronic", "ifne", "sem", "hyperfine",
        "watchexec", "entr", "rlwrap", "tini", "dumb-init", "at", "batch", "cpulimit",
        "trickle", "capsh", "schroot", "nsjail", "minijail0", "catatonit",
    }
)  # fmt: skip


def allowed_programs(allow: Iterable[str] | None) -> tuple[str, ...] | None:
    """The program names `allow` gives, checked; None for any program."""
    if allow is None:
        return None
    names = tuple(dict.fromkeys(listed(allow, "allow")))
    if not names:
        raise ad.ArgumentError("Shell: allow= names no program: give one, or None for any")
    for name in names:
        if any(c.isspace() for c in name):
            raise ad.ArgumentError(
                f"Shell: {name!r} in allow= is not a program name (allow= names programs,"
                " not the command prefixes pure= and writes= take)"
            )
    return names


def _starts(prefixes: tuple[str, ...], *forms: str) -> bool:
    """Whether any form of a command starts with one of `prefixes`."""
    return any(form.startswith(prefixes) for form in forms)


def listed(values: Iterable[str], what: str) -> tuple[str, ...]:
    """`values` (a Shell option that lists words: `pure=`, `writes=`, `env_allow=`) as a
    tuple, each a non-empty str; `ArgumentError` for a bare str, which would be read as
    its letters (`writes="rm"` would make every command starting with r or m a write)."""
    try:
        found = tuple(ad.ids.listed(values, f"{what}= entries"))
    except ad.ArgumentError as exc:
        raise ad.ArgumentError(f"Shell: {exc}") from None
    for value in found:
        if not isinstance(value, str) or not value or "\0" in value:
            raise ad.ArgumentError(f"Shell: {value!r} in {what}= is not a non-empty str")
        if what == "env_allow" and "=" in value:
            raise ad.ArgumentError(
                f"Shell: {value!r} in env_allow= is not a variable's name (names only; "
                "values go in env=)"
            )
    return found


def check_program(
    tool: str, program: str, allow: tuple[str, ...] | None, allow_shell: bool
) -> None:
    """`ScopeError` unless the model may run `program`: one of `allow` when that is
    given, else any but a shell or a command runner (`RUNNERS`) unless `allow_shell`."""
    shown = repr(program if len(program) <= _SHOWN else program[:_SHOWN] + "...")
    if allow is not None:
        if program not in allow:
            raise ad.ScopeError(
                f"{tool}: {shown} is not an allowed program (allowed: "
                f"{', '.join(allow)}); nothing was run"
            )
    elif not allow_shell and PurePosixPath(program).name.lower() in RUNNERS:
        raise ad.ScopeError(
            f"{tool}: {shown} is a shell or a command runner, which this Shell "
            "adapter does not run; nothing was run"
        )


def check_command(
    tool: str, argv: Sequence[str], allow: tuple[str, ...] | None, allow_shell: bool
) -> None:
    """`ScopeError` unless the model may run `argv`: its program (`check_program`), and
    each program its options make it start (`find -exec`, `git -c`: see `launchers`)."""
    check_program(tool, argv[0], allow, allow_shell)
    if allow_shell:
        return

    def nested(words: Sequence[str]) -> None:
        check_command(tool, words, allow, allow_shell)

    if PurePosixPath(argv[0]).name.lower() == "git":
        check_git(tool, argv[1:], nested)
    else:
        check_launches(tool, argv, nested)


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


def command_forms(text: str, argv: Sequence[str], shell: bool) -> tuple[str, ...]:
    """The forms of a command that `pure=` and `writes=` prefixes are matched against:
    its words as they run (`'rm'  x` is `rm x`), its text as written (for a prefix with
    a quote or `>` in it), and for git, its words without git's options before its
    command (`git -C sub --no-pager commit` is `git commit`)."""
    forms = [words(text, list(argv), shell), text.lstrip()]
    run = list(argv)
    if shell:
        try:
            run = shlex.split(text)  # the words of a shell command, as `words` reads them
        except ValueError:  # an unclosed quote: /bin/sh will say so
            run = []
    if run and PurePosixPath(run[0]).name.lower() == "git":
        try:
            at = command_at("", run[1:])
        except ad.ScopeError:  # an option git's checks refuse (with allow_shell): as written
            at = 0
        if at:
            forms.append(shlex.join(["git", *run[1 + at :]]))
    return tuple(forms)


def classify(
    cwd: Path,
    forms: Sequence[str],
    text: str,
    pure: tuple[bool | None, tuple[str, ...]],
    writes: tuple[bool | None, tuple[str, ...]],
) -> tuple[ad.Determinism, str | None]:
    """The determinism and key of a command run in `cwd`. `pure` and `writes` are each
    what the call said (True, False, or None for "by the prefixes") and the adapter's
    prefixes, matched against the command's `forms` (`command_forms`); a `git show` is
    matched against its text."""
    said, prefixes = writes
    if said or (said is None and prefixes and _starts(prefixes, *forms)):
        return ad.Determinism.SIDE_EFFECT, None
    if match := _GIT_SHOW.match(text):
        commit = commit_of(cwd, match[1])
        if commit:
            return ad.Determinism.DETERMINISTIC, f"{match[2]}@{commit}"
    said, prefixes = pure
    if said or (said is None and prefixes and _starts(prefixes, *forms)):
        return ad.Determinism.DETERMINISTIC, None
    return ad.Determinism.NONDETERMINISTIC, None


def cat_key(cwd: Path, text: str, out: bytes) -> str | None:
    """`path@commit` when `text` is `cat FILE` and what it printed is, byte for byte,
    FILE's blob at HEAD (decided after the run, so the key names the output stored, not
    the file as it was a moment before)."""
    match = _CAT.match(text)
    if match is None:
        return None
    clean = clean_at_head((cwd / match[1]).resolve(), out)
    return None if clean is None else f"{clean[0]}@{clean[1]}"
