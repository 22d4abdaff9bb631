"""The config file of `addressable mcp serve` and `addressable mcp proxy`: TOML, checked
by pydantic, every mistake one line naming the file and the field.

    timeout = 60                    # proxy: seconds an upstream call may take
    restarts = 3                    # proxy: tries to start an upstream that exited again
    max_result_tokens = 8000        # the first-sight cap of a result a client is handed; 0: off

    [[tools]]                       # how a tool's results are kept
    match = "read_*"                # a glob on the tool name; the first rule that matches wins
    determinism = "deterministic"   # proxy: deterministic | nondeterministic | side_effect
    key = "{path}"                  # proxy, optional: the addressable key, from the arguments
    max_result_tokens = 20000       # optional: this tool's own first-sight cap; 0: off

    [serve]                         # serve: the adapters, and how each is set up
    adapters = ["fetch", "files", "memory", "search", "shell"]
    files = { root = ".", writable = false }
    memory = { root = "./memories" }
    search = { index = "index.sqlite" }     # or { searxng = "http://127.0.0.1:8888" }
    shell = { cwd = ".", allow = ["git", "ls"], pure = ["git log"], writes = ["git commit"] }

Where no rule names a tool, the hints the upstream declares decide: `destructiveHint`
true, or `readOnlyHint` false, make it a side effect (an Action, never re-run);
`readOnlyHint` true makes it nondeterministic (a read of a world that may change: a
Claim). A tool with neither, or unknown, is nondeterministic. Only a rule makes a tool
deterministic: no hint says that the same arguments give the same content.
"""

from __future__ import annotations

import fnmatch
import string
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from ..core.errors import ConfigError
from ..core.records import Determinism
from ..tools.firstsight import DEFAULT_MAX_RESULT_TOKENS, checked_cap

AdapterName = Literal["fetch", "search", "shell", "files", "memory"]
ADAPTERS: tuple[str, ...] = ("fetch", "search", "shell", "files", "memory")
DEFAULT_TIMEOUT = 60.0
DEFAULT_RESTARTS = 3


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolRule(_Strict):
    """How the results of the upstream tools whose name matches `match` are kept."""

    match: str = Field(min_length=1)
    determinism: Determinism | None = None  # None: the upstream's hints decide
    key: str | None = None
    max_result_tokens: int | None = None  # None: the config's; 0: no cap

    @field_validator("max_result_tokens")
    @classmethod
    def _cap(cls, value: int | None) -> int | None:
        return _checked_cap(value)

    @field_validator("key")
    @classmethod
    def _template(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Only plain fields, as {path}: a format spec or a conversion ({path:d},
        {path!r}) would fail, or change the key, on the values a call gives."""
        if value is not None:
            match = info.data.get("match")  # absent when it was refused itself
            rule = f"the rule for {match!r}" if match else "the rule"
            rule = f"{rule}: key template {value!r}"
            try:
                fields = [
                    (name, spec, conversion)
                    for _, name, spec, conversion in string.Formatter().parse(value)
                    if name is not None
                ]
            except ValueError as exc:
                raise ValueError(f"{rule} is malformed: {exc}") from None
            if any(
                not name.isidentifier() or spec or conversion for name, spec, conversion in fields
            ):
                raise ValueError(
                    f"{rule}: name arguments only, as {{path}}, with no format spec or conversion"
                )
        return value

    def key_of(self, arguments: Mapping[str, Any]) -> str | None:
        """The key for a call, or None when the template names an argument not given."""
        if self.key is None:
            return None
        try:
            return self.key.format_map({k: _plain(v) for k, v in arguments.items()})
        except (KeyError, IndexError):
            return None


class FilesConfig(_Strict):
    root: str = "."
    writable: bool = False


class MemoryConfig(_Strict):
    root: str = "./memories"


class SearchConfig(_Strict):
    index: str | None = None  # an SQLite FTS5 index file (LocalIndex)
    searxng: str | None = None  # a SearXNG instance's base URL


class ShellConfig(_Strict):
    cwd: str = "."
    allow: list[str] | None = None  # the programs a model may run (Shell's `allow=`)
    pure: list[str] = Field(default_factory=list)
    writes: list[str] = Field(default_factory=list)
    env_allow: list[str] | None = None
    timeout: float = Field(default=60.0, gt=0, allow_inf_nan=False)
    max_bytes: int = Field(default=10 * 1024 * 1024, gt=0)  # output kept, stdout and stderr
    sandbox: bool = True  # false: commands run with the server's own rights
    network: bool = False  # commands may reach the network
    read_only: list[str] = Field(default_factory=list)  # more folders commands may read


class FetchConfig(_Strict):
    timeout: float = Field(default=30.0, gt=0, allow_inf_nan=False)
    max_bytes: int = Field(default=5_000_000, gt=0)
    origins: list[str] | None = None  # where it may GET; None: anywhere


class ServeConfig(_Strict):
    adapters: list[AdapterName] = Field(default_factory=list)
    fetch: FetchConfig = Field(default_factory=FetchConfig)
    files: FilesConfig = Field(default_factory=FilesConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    shell: ShellConfig = Field(default_factory=ShellConfig)


class McpConfig(_Strict):
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0)
    restarts: int = Field(default=DEFAULT_RESTARTS, ge=0)  # starts again in a row, at most
    max_result_tokens: int = DEFAULT_MAX_RESULT_TOKENS  # 0: no cap
    tools: list[ToolRule] = Field(default_factory=list)
    serve: ServeConfig = Field(default_factory=ServeConfig)

    @field_validator("max_result_tokens")
    @classmethod
    def _cap(cls, value: int) -> int:
        return _checked_cap(value) or 0

    def rule_for(self, tool: str) -> ToolRule | None:
        return next((r for r in self.tools if fnmatch.fnmatchcase(tool, r.match)), None)

    def cap_of(self, tool: str) -> int | None:
        """The first-sight cap of `tool`'s results: its rule's, else the config's; None
        where either says 0 (off)."""
        rule = self.rule_for(tool)
        if rule is not None and rule.max_result_tokens is not None:
            return rule.max_result_tokens or None
        return self.max_result_tokens or None

    def determinism_of(self, tool: str, annotations: Any) -> tuple[Determinism, str]:
        """The determinism of an upstream tool's results, and what decided it."""
        rule = self.rule_for(tool)
        if rule is not None and rule.determinism is not None:
            return rule.determinism, f"rule {rule.match!r}"
        read_only = getattr(annotations, "read_only_hint", None)
        destructive = getattr(annotations, "destructive_hint", None)
        if destructive is True or read_only is False:
            return Determinism.SIDE_EFFECT, "its hints (writes)"
        if read_only is True:
            return Determinism.NONDETERMINISTIC, "its hints (read-only)"
        return Determinism.NONDETERMINISTIC, "no rule or hint"


def load_config(path: str | Path | None) -> McpConfig:
    """The config in the TOML file at `path` (defaults when None); `ConfigError`, one
    line naming the file and the field, when it cannot be read or does not fit."""
    if path is None:
        return McpConfig()
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"config {path}: cannot read it: {exc.strerror or exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config {path}: not TOML: {exc}") from exc
    try:
        return McpConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        message = first["msg"].removeprefix("Value error, ")
        raise ConfigError(f"config {path}: {where}: {message}{more}") from None


def _checked_cap(value: int | None) -> int | None:
    """A cap as a config gives it: 0 (off), or at least `MIN_RESULT_TOKENS`."""
    if value is None or value == 0:
        return value
    return checked_cap(value, off="0")  # an ArgumentError: a ValueError, for pydantic


def _plain(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool) else str(value)
