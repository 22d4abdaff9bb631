"""Shell: commands run as subprocesses; a Claim unless pure, an Action when writing."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import addressable as ad

from ._base import Adapter, schema
from ._git import ENV_ALLOW, clean_at_head, commit_of

DEFAULT_TIMEOUT = 60.0  # seconds
DEFAULT_ENV = ENV_ALLOW  # also the only variables the git the project starts may see
_GIT_SHOW = re.compile(r"^git\s+show\s+([^\s:]+):(\S+)$")
_CAT = re.compile(r"^cat\s+(?:--\s+)?(\S+)$")


class Shell(Adapter):
    """Runs commands with a timeout, a working directory and an allow-list of
    environment variables; no shell unless asked.

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
        "Run a command in the working folder and return its output and exit code. "
        "Commands run without a shell: no pipes or redirections."
    )
    input_schema = schema({"command": {"type": "string"}}, ["command"])

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
        name: str | None = None,
    ) -> None:
        super().__init__(kit, name)
        self.cwd = Path(cwd).resolve()
        self.timeout = timeout
        self.env_allow = tuple(env_allow)
        self.env = dict(env or {})
        self.pure = tuple(pure)  # command prefixes whose output is a function of the command
        self.writes = tuple(writes)  # command prefixes that change the world
        self.allow_shell = allow_shell
        kit.on_rerun(self.name, self._rerun)
        if allow_shell:
            self.description = "Run a shell command in the working folder and return its output."

    def __call__(
        self,
        command: str | Sequence[str],
        *,
        pure: bool | None = None,
        writes: bool | None = None,
        shell: bool = False,
        timeout: float | None = None,
    ) -> ad.Result:
        """Run `command` (a string split like a shell would, or an argument list)."""
        if shell and not self.allow_shell:
            raise ad.ScopeError("this Shell adapter runs no shell: create it with allow_shell=True")
        text = command if isinstance(command, str) else shlex.join(command)
        argv = (
            ["/bin/sh", "-c", text]
            if shell
            else (shlex.split(command) if isinstance(command, str) else list(command))
        )
        determinism, key = self._classify(text, pure, writes)
        args: dict[str, Any] = {"command": text, "cwd": str(self.cwd)}
        if shell:
            args["shell"] = True
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
            raise
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
        return self.render(self(arguments["command"], shell=self.allow_shell))

    def render(self, result: ad.Result) -> str:
        """The output as stored: stdout, stderr, and how it ended."""
        return result.text

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
