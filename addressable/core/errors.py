"""The exceptions addressable raises, under one root.

    AddressableError
    ├── AmbiguousId                      a prefix that matches several ids
    ├── NotFound (also KeyError)         no record with that id (or no checkpoint)
    │   ├── BadId (also ValueError)      malformed result id or prefix: none has it
    │   └── Expired                      the record existed and was garbage-collected
    ├── IntegrityError                   stored bytes do not hash to what the record says
    ├── ArgumentError (also ValueError)  arguments that are not JSON, or that ask for
    │   │                                what cannot be done (an unknown format)
    │   ├── adapters.BadPath (also OSError)  a path with no file there to read or write
    │   └── adapters.MemoryCommandError  a memory command that cannot be done as asked
    ├── MalformedMessages (also ValueError)  a message list that is not well formed
    ├── NotReplayable                    verify=True on a call that cannot be re-run
    ├── ReadOnly (also TypeError)        a change to a record's args or meta
    ├── ScopeError                       a call outside the configured scope
    ├── Stale                            an action that depends on stale facts
    ├── DeadlineExceeded (also TimeoutError)  a call that ran past its overall deadline
    ├── EventLoopError (also RuntimeError)  a sync call made where an event loop runs
    ├── StoreError                       the store's backend failed
    │   └── NoStore                      no store where one was to be opened, not created
    ├── BundleError                      an export bundle that cannot be imported
    ├── ConfigError (also ValueError)    a config file that cannot be read or does not fit
    ├── MissingDependency (also ImportError)  an optional extra is not installed
    ├── adapters.ResponseTooLarge        an answer or output over an adapter's max_bytes
    ├── adapters.PartlyChanged           a file change that failed after changing something
    ├── adapters.NoSandbox               Shell cannot make its sandbox on this machine
    └── adapters.BadAnswer               a server's answer that cannot be read as it says

The adapters' errors live with their adapters; all are exported from `addressable`
(and `addressable.errors`) or `addressable.adapters`, and a test walks the whole tree.
Errors of the libraries underneath (diskcache, sqlite3, redis) are translated into
`StoreError` at the store boundary, with the original chained as `__cause__`.
A tool that fails is not an addressable error: it is recorded and re-raised as is
(httpx's own errors from Fetch and Api among them: a refused connection, a reset).

The exit codes of the `addressable` command are here too, for every face of it (the
store commands, the benchmark, the MCP commands); the CLI's help lists what each means.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


class AddressableError(Exception):
    """Root of every exception raised by addressable itself."""


class AmbiguousId(AddressableError):
    """A prefix that matches more than one stored id."""

    def __init__(self, prefix: str, candidates: Sequence[str]) -> None:
        self.prefix = prefix
        self.candidates = sorted(candidates)
        shown = ", ".join(self.candidates[:10])
        more = f" and {len(self.candidates) - 10} more" if len(self.candidates) > 10 else ""
        super().__init__(
            f"id prefix {prefix!r} is ambiguous: it matches {shown}{more}; give more characters"
        )


class NotFound(AddressableError, KeyError):
    """No record has this id."""

    def __str__(self) -> str:
        # KeyError's str() wraps the message in quotes; keep it readable.
        return str(self.args[0]) if self.args else "not found"


class BadId(NotFound, ValueError):
    """A string that is not a result id, nor a prefix of one: no record has it, so
    `except NotFound` catches it too (and `except ValueError`, as before)."""


class Expired(NotFound):
    """The record existed but was removed by garbage collection."""


class IntegrityError(AddressableError):
    """Stored bytes that no longer hash to the content hash their record names."""


class ArgumentError(AddressableError, ValueError):
    """Arguments that cannot be written as canonical JSON, or that ask for what cannot be
    done as given (an unknown format or strategy, a write that is not one)."""


class NotReplayable(AddressableError):
    """`verify=True` on a call that cannot be re-run. `kind` says why, for a face that
    says it in its own words: "action", "nondeterministic", "unregistered", or ""."""

    def __init__(self, message: str, kind: str = "") -> None:
        super().__init__(message)
        self.kind = kind


class ReadOnly(AddressableError, TypeError):
    """A change to a record (a field, its args or meta), a result or a stub item: none
    changes once made."""


class ScopeError(AddressableError):
    """A call outside the scope its adapter was given; nothing was sent."""


class DeadlineExceeded(AddressableError, TimeoutError):
    """A call that was still running when its overall deadline passed: stopped there."""


class EventLoopError(AddressableError, RuntimeError):
    """A synchronous call made from inside a running event loop: use the async form."""


class StoreError(AddressableError):
    """The store's backend failed (disk, database or server)."""


class NoStore(StoreError):
    """`open_store(..., create=False)` found no store where it was pointed."""

    def __init__(self, path: Path, why: str) -> None:
        self.path = path
        self.why = why
        super().__init__(f"no store at {path}: {why}; nothing was created")


class BundleError(AddressableError):
    """An export bundle that is malformed or does not match its own hashes."""


class ConfigError(AddressableError, ValueError):
    """A config file (of `addressable mcp`) that cannot be read or does not fit."""


class MissingDependency(AddressableError, ImportError):
    """An optional feature whose extra is not installed."""

    def __init__(self, feature: str, extra: str, package: str) -> None:
        super().__init__(
            f"{feature} needs the {package!r} package, from the {extra!r} extra: "
            f"pip install '{package}'"
        )


EXIT_OK = 0
EXIT_DAMAGE = 1  # verify found damage
EXIT_USAGE = 2  # bad usage: an option, a value, an id
EXIT_NOT_FOUND = 3  # no result with that id, or it expired
EXIT_INTEGRITY = 4  # a payload no longer matches its hash
EXIT_FAILURE = 5  # no store, or the store, a bundle, a trace or a re-run failed
EXIT_TOOL_ERROR = 6  # replay: the result is a tool's error (its bytes are still written)


class MalformedMessages(AddressableError, ValueError):
    """A message list that is not well formed, or an item that is no message (neither a
    dict, an SDK message object nor a LangChain message); `index` names the offending
    message and the message says what was expected."""

    def __init__(self, index: int, why: str) -> None:
        self.index = index
        super().__init__(f"message {index}: {why}")


class Stale(AddressableError):
    """An action that depends on facts that may no longer hold; re-read them first
    (`kit.revalidate`)."""

    def __init__(self, ids: list[str]) -> None:
        self.ids = ids
        super().__init__(
            f"refused: it depends on stale facts {', '.join(ids)}; re-read them "
            "with kit.revalidate([...]) before acting"
        )


class StaleWarning(UserWarning):
    """An action went ahead on stale facts (the kit's stale policy is "warn")."""
