"""Shell: commands run as subprocesses; a Claim unless pure, an Action when writing."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

import addressable as ad

from ._base import Adapter, schema
from ._git import ENV_ALLOW, clean_at_head, commit_of

DEFAULT_TIMEOUT = 60.0  # seconds
DEFAULT_ENV = ENV_ALLOW  # also the only variables the git the project starts may see
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
        "eval", "builtin",
    }
)  # fmt: skip


class Shell(Adapter):
    """Runs commands with a timeout, a working directory and an allow-list of
    environment variables; no shell unless asked.

    Which programs a model may run: with `allow=("git", "ls", ...)`, only those, named
    exactly so as the command's first word (`/bin/ls` is refused unless `/bin/ls` itself
    is allowed); they are listed in the tool description the model sees. With
    `allow=None` (the default, kept for compatibility) any program on PATH runs, except,
    unless `allow_shell` is set, a shell or a command runner (`RUNNERS`: sh, bash, env,
    xargs, sudo, timeout, ...) by name or path. That refusal is not a boundary: many
    ordinary programs run others (`python3 -c`, `find -exec`, a git alias, awk's
    `system`); only `allow` bounds what a model can make run. A program not allowed is
    refused with `ScopeError`; an empty command, an unclosed quote or a NUL byte with
    `ArgumentError`. Nothing runs and nothing is recorded for a refused command.
    `allow_shell=True` runs the model's command through `/bin/sh` and cannot be combined
    with `allow` (a shell's first word bounds nothing).

    A program the model may run can read the environment it is given: every variable
    of `env_allow`, and every value of `env=`, secrets resolved from `secret:env:NAME`
    included. Masking hides a resolved secret only in the forms it knows (plain and a few
    escapes), not after the program encodes it (`printenv TOKEN | base64`, `od`): give
    `env=` a secret only if the model may read it.

    Output (stdout, stderr and the exit code) is stored as the text the model sees.
    A command is a Claim (nondeterministic) unless it is declared pure, or reads
    git-tracked content at a commit (`git show REV:path`, or a `cat` whose output is
    the file's blob at HEAD: keyed `path@commit`); a command declared as writing is an
    Action. A timeout is recorded with the output so far. The git the adapter runs by
    itself to compute such keys runs no program the repository names and sees only
    `DEFAULT_ENV`; the model's own command runs as given, with this adapter's
    environment.
    """

    name = "shell"
    description = (
        "Run a program in the working folder and return its output and exit code. The "
        "command is split into words as a shell would, but no shell runs it: no pipes, "
        "redirections, variables, globs or ';'. A shell or a command runner (sh, bash, "
        "env, xargs, sudo, timeout, ...) is refused."
    )
    input_schema = schema(
        {
            "command": {"type": "string"},
            "timeout": {
                "type": "number",
                "minimum": 0.1,
                "description": "seconds to wait before stopping it (at most the tool's own limit)",
            },
        },
        ["command"],
    )

    def __init__(
        self,
        kit: ad.Toolkit,
        *,
        cwd: str | os.PathLike[str] = ".",
        timeout: float = DEFAULT_TIMEOUT,
        env_allow: Iterable[str] = DEFAULT_ENV,
        env: Mapping[str, str] | None = None,
        pure: Iterable[str] = (),
        writes: Iterable[str] = (),
        allow_shell: bool = False,
        allow: Iterable[str] | None = None,
        name: str | None = None,
    ) -> None:
        allowed = _allowed(allow)
        if allowed is not None and allow_shell:
            raise ad.ArgumentError(
                "Shell: allow= cannot bound a shell (allow_shell=True runs the model's "
                "command through /bin/sh): name the programs in allow, or leave allow out"
            )
        super().__init__(kit, name)
        self.cwd = Path(cwd).resolve()
        self.timeout = timeout
        self.env_allow = tuple(env_allow)
        self.env = dict(env or {})
        self.pure = tuple(pure)  # command prefixes whose output is a function of the command
        self.writes = tuple(writes)  # command prefixes that change the world
        self.allow_shell = allow_shell
        self.allow = allowed  # the programs a command may start; None: any (see above)
        kit.on_rerun(self.name, self._rerun)
        if allow_shell:
            self.description = "Run a shell command in the working folder and return its output."
        elif allowed is not None:
            self.description = (
                "Run a program in the working folder and return its output and exit code. "
                "The command is split into words as a shell would, but no shell runs it: "
                "no pipes, redirections, variables, globs or ';'. Its first word must be "
                f"one of these programs: {', '.join(allowed)}."
            )

    def __call__(
        self,
        command: str | Sequence[str],
        *,
        pure: bool | None = None,
        writes: bool | None = None,
        shell: bool = False,
        timeout: float | None = None,
    ) -> ad.Result:
        """Run `command` (a string split like a shell would, or an argument list).

        Refused before anything runs, and not recorded: `ScopeError` for a shell or a
        program this adapter does not allow, `ArgumentError` for an empty command, an
        unclosed quote, a NUL byte or text that cannot be recorded."""
        if shell and not self.allow_shell:
            raise ad.ScopeError("this Shell adapter runs no shell: create it with allow_shell=True")
        text, argv = _split(command, shell, self.name)
        if not shell:
            self._check_program(argv[0])
        args: dict[str, Any] = {"command": text, "cwd": str(self.cwd)}
        if shell:
            args["shell"] = True
        ad.ids.canonical_args(args)  # ArgumentError before anything runs (git included)
        determinism, key = self._classify(text, pure, writes)
        limit = timeout if timeout is not None else self.timeout
        try:
            proc = subprocess.Popen(
                argv,
                cwd=self.cwd,
                env=self._environment(),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            outcome = ad.Outcome.NOT_APPLIED if determinism is ad.Determinism.SIDE_EFFECT else None
            self.kit.record_failure(
                self.name,
                args,
                exc,
                determinism=determinism,
                key=key,
                outcome=outcome,
            )
            raise ad.ArgumentError(
                f"{self.name}: cannot start {argv[0][:_SHOWN]!r}: {exc.strerror or exc}"
            ) from exc
        timed_out = False
        try:
            out, err = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)  # the whole group: children too
            out, err = proc.communicate()
        code = proc.returncode
        read_ok = code == 0 and not timed_out and determinism is not ad.Determinism.SIDE_EFFECT
        if key is None and read_ok and (cat_key := self._cat_key(text, out)) is not None:
            determinism, key = ad.Determinism.DETERMINISTIC, cat_key
        payload = _render(out, err, code, timed_out, limit)
        meta: dict[str, Any] = {"exit_code": code, "timed_out": timed_out}
        outcome = None
        if determinism is ad.Determinism.SIDE_EFFECT:
            # Exit 0 is done; a failure or a timeout may have done part of it: unknown.
            done = code == 0 and not timed_out
            outcome = ad.Outcome.COMPLETED if done else ad.Outcome.UNKNOWN
        status = ad.Status.ERROR if timed_out else ad.Status.OK
        error = f"timed out after {limit:g} s" if timed_out else None
        return self.kit.record(
            self.name,
            args,
            payload.encode(),
            determinism=determinism,
            key=key,
            status=status,
            error=error,
            outcome=outcome,
            meta=meta,
        )

    def handle(self, arguments: dict[str, Any]) -> str:
        # A model may ask to wait less than the adapter's own limit, never longer.
        asked = arguments.get("timeout")
        limit = self.timeout if asked is None else min(float(asked), self.timeout)
        return self.render(self(arguments["command"], shell=self.allow_shell, timeout=limit))

    def render(self, result: ad.Result) -> str:
        """The output as stored: stdout, stderr, and how it ended."""
        return result.text

    def _check_program(self, program: str) -> None:
        """`ScopeError` unless the model may run `program` (see the class)."""
        shown = repr(program if len(program) <= _SHOWN else program[:_SHOWN] + "...")
        if self.allow is not None:
            if program not in self.allow:
                raise ad.ScopeError(
                    f"{self.name}: {shown} is not an allowed program (allowed: "
                    f"{', '.join(self.allow)}); nothing was run"
                )
        elif not self.allow_shell and PurePosixPath(program).name.lower() in RUNNERS:
            raise ad.ScopeError(
                f"{self.name}: {shown} is a shell or a command runner, which this Shell "
                "adapter does not run; nothing was run"
            )

    def _classify(
        self, text: str, pure: bool | None, writes: bool | None
    ) -> tuple[ad.Determinism, str | None]:
        if writes or (writes is None and text.startswith(self.writes) and self.writes):
            return ad.Determinism.SIDE_EFFECT, None
        if match := _GIT_SHOW.match(text):
            commit = commit_of(self.cwd, match[1])
            if commit:
                return ad.Determinism.DETERMINISTIC, f"{match[2]}@{commit}"
        if pure or (pure is None and self.pure and text.startswith(self.pure)):
            return ad.Determinism.DETERMINISTIC, None
        return ad.Determinism.NONDETERMINISTIC, None

    def _cat_key(self, text: str, out: bytes) -> str | None:
        """`path@commit` when `text` is `cat FILE` and what it printed is, byte for
        byte, FILE's blob at HEAD (decided after the run, so the key names the output
        stored, not the file as it was a moment before)."""
        match = _CAT.match(text)
        if match is None:
            return None
        clean = clean_at_head((self.cwd / match[1]).resolve(), out)
        return None if clean is None else f"{clean[0]}@{clean[1]}"

    def _environment(self) -> dict[str, str]:
        env = {k: os.environ[k] for k in self.env_allow if k in os.environ}
        env.update({k: self.kit.secrets.resolve_all(v) for k, v in self.env.items()})
        return env

    def _rerun(self, record: ad.Record) -> ad.Result:
        return self(str(record.args["command"]), pure=True, shell=bool(record.args.get("shell")))


def _allowed(allow: Iterable[str] | None) -> tuple[str, ...] | None:
    """The program names `allow` gives, checked; None for any program."""
    if allow is None:
        return None
    if isinstance(allow, str):
        raise ad.ArgumentError(f"Shell: allow= takes program names, such as ({allow!r},)")
    names = tuple(dict.fromkeys(allow))
    if not names:
        raise ad.ArgumentError("Shell: allow= names no program: give one, or None for any")
    for name in names:
        if not isinstance(name, str) or not name or "\0" in name or any(c.isspace() for c in name):
            raise ad.ArgumentError(
                f"Shell: {name!r} in allow= is not a program name (allow= names programs,"
                " not the command prefixes pure= and writes= take)"
            )
    return names


def _split(command: str | Sequence[str], shell: bool, tool: str) -> tuple[str, list[str]]:
    """(the command as text, the argument list to start); `ArgumentError`, one line,
    for a command that is empty, has an unclosed quote or holds a NUL byte."""
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


def _render(out: bytes, err: bytes, code: int, timed_out: bool, limit: float) -> str:
    text = out.decode("utf-8", errors="replace")
    if err:
        text += ("" if not text or text.endswith("\n") else "\n") + "[stderr]\n"
        text += err.decode("utf-8", errors="replace")
    if text and not text.endswith("\n"):
        text += "\n"
    if timed_out:
        return text + f"[timed out after {limit:g} s; the output above is what came before]"
    return text + f"[exit {code}]"
