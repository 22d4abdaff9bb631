"""Shell: commands run as subprocesses; a Claim unless pure, an Action when writing.

A command, as a model or a caller gives it, is checked and split before anything runs
(`split_command`, `timeout_seconds`). What it leaves in the store (`ShellCall`) is its
output as the model sees it and how it ended, or the failure that stopped it; for a
write, the outcome that is known.
"""

from __future__ import annotations

import contextlib
import math
import os
import shlex
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeGuard
from urllib.parse import quote

import addressable as ad
from addressable.core.credentials import REDACTED, redact_urls
from addressable.recording.argerrors import shown

from .._base import Adapter, schema
from .._git import ENV_ALLOW
from .._http import DEFAULT_MAX_BYTES, ResponseTooLarge
from .._rootfs import store_folders
from .process import Ran, run
from .programs import allowed_programs, cat_key, check_command, classify, command_forms, listed
from .sandbox import Ending, bwrap, refused_folder, sandboxed

DEFAULT_TIMEOUT = 60.0  # seconds
DEFAULT_ENV = ENV_ALLOW  # also the only variables the git the project starts may see
_SHOWN = 60  # characters of a program's name, or of a value, an error shows


class Shell(Adapter):
    """Runs a model's commands as programs, with a timeout, a working folder and an
    allow-list of environment variables; no shell unless `allow_shell=True`.

    `allow=("git", "ls", ...)` names the programs a command may start; with `allow=None`
    (the default) any runs but a shell or a command runner (`RUNNERS`). The options by
    which a program starts another are held to the same rule (`launchers`). A program
    reads the values of `env=`: give it a secret only if the model may read it.

    Output (stdout, stderr and the exit code) is stored as the text the model sees. A
    command is a Claim unless `pure=` or `writes=` (prefixes of its words) make it a
    Reference or an Action, or it reads git-tracked content at a commit (keyed
    `path@commit`). A call ends at its timeout, recorded with the output so far; output
    over `max_bytes` stops it: a read raises `ResponseTooLarge`, a write is recorded
    `unknown`. What it refuses, and what it cannot bound: docs/security.md, "Shell".

    Each command runs in a sandbox (`sandbox.py`; bubblewrap on Linux): it may write only
    in `cwd` and a private /tmp, sees no home folder, no store, no other process and no
    network (unless `network=True`), and ends with the call. `read_only=` names more
    folders it may read. Where no sandbox can be made, `NoSandbox` at once, unless
    `sandbox=False`: then a command runs with every right of this process.
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
        max_bytes: int = DEFAULT_MAX_BYTES,
        env_allow: Iterable[str] = DEFAULT_ENV,
        env: Mapping[str, str] | None = None,
        pure: Iterable[str] = (),
        writes: Iterable[str] = (),
        allow_shell: bool = False,
        allow: Iterable[str] | None = None,
        sandbox: bool = True,
        network: bool = False,
        read_only: Iterable[str | os.PathLike[str]] = (),
        name: str | None = None,
    ) -> None:
        allowed = allowed_programs(allow)
        if sandbox:
            bwrap()  # NoSandbox now, not at the first call
        names = listed(env_allow, "env_allow")
        pure_prefixes, write_prefixes = listed(pure, "pure"), listed(writes, "writes")
        if allowed is not None and allow_shell:
            raise ad.ArgumentError(
                "Shell: allow= cannot bound a shell (allow_shell=True runs the model's "
                "command through /bin/sh): name the programs in allow, or leave allow out"
            )
        timeout = timeout_seconds(timeout, "Shell")
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise ad.ArgumentError(
                f"Shell: max_bytes must be a whole number of bytes over 0, not {max_bytes!r}"
            )
        folder = Path(cwd).resolve()
        if sandbox and (why := refused_folder(folder)) is not None:
            raise ad.ArgumentError(
                f"Shell: commands cannot write in {str(folder)[:_SHOWN]!r} ({why}): "
                "give the folder of the work as cwd"
            )
        super().__init__(kit, name)
        self.cwd = folder
        self.timeout = timeout
        self.max_bytes = max_bytes  # bytes of stdout and stderr together (see above)
        self.env_allow = names
        self.env = dict(env or {})
        self.pure = pure_prefixes  # prefixes of commands whose output is their function
        self.writes = write_prefixes  # prefixes of commands that change the world
        self.allow_shell = allow_shell
        self.allow = allowed  # the programs a command may start; None: any (see above)
        self.sandbox = sandbox
        self.network = network
        self.read_only = tuple(Path(p).resolve() for p in read_only)
        self._hidden = store_folders(kit)  # the store's folder: never seen by a command
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
        unclosed quote, a NUL byte, a command or a timeout of the wrong kind, or text
        that cannot be recorded."""
        if shell and not self.allow_shell:
            raise ad.ScopeError("this Shell adapter runs no shell: create it with allow_shell=True")
        text, argv = split_command(command, shell, self.name)
        if not shell:
            check_command(self.name, argv, self.allow, self.allow_shell)
        limit = self.timeout if timeout is None else timeout_seconds(timeout, self.name)
        # Kept with the credentials written in its URLs redacted, as Fetch keeps a URL;
        # the program gets the command as given.
        args: dict[str, Any] = {"command": redact_urls(text), "cwd": str(self.cwd)}
        if shell:
            args["shell"] = True
        ad.ids.canonical_args(args)  # ArgumentError before anything runs (git included)
        said = (pure, self.pure), (writes, self.writes)
        determinism, key = classify(self.cwd, command_forms(text, argv, shell), text, *said)
        call = ShellCall(self.kit, self.name, args, determinism, key)
        with contextlib.closing(Ending()) if self.sandbox else contextlib.nullcontext() as ending:
            ran = self._run(call, argv, limit, ending)
        if self.sandbox and not ran.out and ran.err.startswith(b"bwrap: execvp "):
            # bwrap could not start the program: what Popen says without a sandbox.
            why = ran.err.decode(errors="replace").split(": ")[-1].strip()
            call.failed(FileNotFoundError(why), ad.Outcome.NOT_APPLIED if call.writes else None)
            raise ad.ArgumentError(f"{self.name}: cannot start {argv[0][:_SHOWN]!r}: {why}")
        if ran.over:
            return call.over(ran, argv[0], self.max_bytes)
        read_ok = ran.code == 0 and not ran.timed_out and not call.writes
        if key is None and read_ok and (cat := cat_key(self.cwd, text, ran.out)) is not None:
            call = replace(call, determinism=ad.Determinism.DETERMINISTIC, key=cat)
        return call.ended(ran, limit)

    def _run(self, call: ShellCall, argv: list[str], limit: float, ending: Ending | None) -> Ran:
        """Start `argv` (in the sandbox when `ending` is given) and run it to its end;
        a command that cannot start, or is interrupted, is recorded as failed."""
        started = argv
        if ending is not None:
            started = sandboxed(
                argv,
                self.cwd,
                network=self.network,
                hidden=self._hidden,
                read_only=self.read_only,
                info_fd=ending.fd,
            )
        try:
            proc = subprocess.Popen(
                started,
                cwd=self.cwd,
                env=self._environment(),
                stdin=subprocess.DEVNULL,  # the caller's input is not the program's
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                pass_fds=() if ending is None else (ending.fd,),
            )
        except OSError as exc:
            call.failed(exc, ad.Outcome.NOT_APPLIED if call.writes else None)
            raise ad.ArgumentError(
                f"{self.name}: cannot start {argv[0][:_SHOWN]!r}: {exc.strerror or exc}"
            ) from exc
        try:
            if ending is not None:
                ending.started(limit)
            ran = run(proc, limit, self.max_bytes)
        except BaseException as exc:  # interrupted (Ctrl-C, a cancelled task): it was stopped
            if call.writes:  # a write may have begun: never lost
                call.failed(exc, ad.Outcome.UNKNOWN)
            raise
        finally:
            if ending is not None:  # the call ends when the sandbox has
                ending.wait()
        return ran

    def handle(self, arguments: dict[str, Any]) -> str:
        # A model may ask to wait less than the adapter's own limit, never longer: a
        # number past it (Infinity, 1e400, 400 nines) is the limit. Any other value is
        # checked where a direct call's is.
        asked = arguments.get("timeout")
        longer = is_number(asked) and asked > self.timeout  # exact, even for a huge int
        limit = self.timeout if asked is None or longer else asked
        return self.render(self(arguments["command"], shell=self.allow_shell, timeout=limit))

    def render(self, result: ad.Result) -> str:
        """The output as stored: stdout, stderr, and how it ended."""
        return result.text

    def _environment(self) -> dict[str, str]:
        env = {k: os.environ[k] for k in self.env_allow if k in os.environ}
        env.update({k: self.kit.secrets.resolve_all(v) for k, v in self.env.items()})
        return env

    def _rerun(self, record: ad.Record) -> ad.Result:
        command = str(record.args["command"])
        if "://" in command and (REDACTED in command or quote(REDACTED) in command):
            raise ad.NotReplayable(
                f"{self.name}: result {record.id} ran a command whose URL held a credential,"
                " which is not kept: it cannot be run again"
            )
        return self(command, pure=True, shell=bool(record.args.get("shell")))


@dataclass(frozen=True)
class ShellCall:
    """One command as it is recorded: the tool, its arguments, and what it is (a Claim,
    a pure read under a key, or an Action)."""

    kit: ad.Toolkit
    tool: str
    args: dict[str, Any]
    determinism: ad.Determinism
    key: str | None

    @property
    def writes(self) -> bool:
        return self.determinism is ad.Determinism.SIDE_EFFECT

    def failed(self, exc: BaseException, outcome: ad.Outcome | None) -> None:
        """Record a call that did not run to its end, as `exc` says."""
        self.kit.record_failure(
            self.tool, self.args, exc, determinism=self.determinism, key=self.key, outcome=outcome
        )

    def ended(self, ran: Ran, limit: float) -> ad.Result:
        """Record a run that ended (or timed out) with its output whole."""
        # Output that quotes a URL with its credentials (git's and curl's errors do) is
        # kept redacted, as the command is.
        payload = redact_urls(render(ran.out, ran.err, ran.code, ran.timed_out, limit))
        outcome = None
        if self.writes:
            # Exit 0 is done; a failure or a timeout may have done part of it: unknown.
            done = ran.code == 0 and not ran.timed_out
            outcome = ad.Outcome.COMPLETED if done else ad.Outcome.UNKNOWN
        return self.kit.record(
            self.tool,
            self.args,
            payload.encode(),
            determinism=self.determinism,
            key=self.key,
            status=ad.Status.ERROR if ran.timed_out else ad.Status.OK,
            error=f"timed out after {limit:g} s" if ran.timed_out else None,
            outcome=outcome,
            meta={ad.Report.EXIT_CODE: ran.code, "timed_out": ran.timed_out},
        )

    def over(self, ran: Ran, program: str, max_bytes: int) -> ad.Result:
        """Record a run stopped for output over `max_bytes`, whose output is not kept.
        A Claim is a failure, raised as `ResponseTooLarge` (as Fetch's); a write has
        run, stopped part way: its Action is returned, with its outcome unknown."""
        exc = ResponseTooLarge(
            f"{self.tool}: the output of {program[:_SHOWN]!r} is over the limit of "
            f"{max_bytes:,} bytes, so it was stopped; raise max_bytes on the Shell "
            "adapter to take it"
        )
        if not self.writes:
            self.failed(exc, None)
            raise exc
        meta = {ad.Report.EXIT_CODE: ran.code, "timed_out": ran.timed_out, "output_over": max_bytes}
        return self.kit.record(
            self.tool,
            self.args,
            f"[{exc}]".encode(),
            determinism=self.determinism,
            status=ad.Status.ERROR,
            error=str(exc),
            outcome=ad.Outcome.UNKNOWN,
            meta=meta,
        )


def render(out: bytes, err: bytes, code: int, timed_out: bool, limit: float) -> str:
    """A run's output as stored and shown: stdout, stderr marked, and how it ended."""
    text = out.decode("utf-8", errors="replace")
    if err:
        text += ("" if not text or text.endswith("\n") else "\n") + "[stderr]\n"
        text += err.decode("utf-8", errors="replace")
    if text and not text.endswith("\n"):
        text += "\n"
    if timed_out:
        return text + f"[timed out after {limit:g} s; the output above is what came before]"
    return text + f"[exit {code}]"


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
