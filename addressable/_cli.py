"""The `addressable` command: look into a store, replay, verify, collect garbage, move it."""

from __future__ import annotations

import argparse
import base64
import importlib
import json
import math
import os
import re
import sys
import tempfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NoReturn

import httpx
from rich.console import Console
from rich.table import Column, Table
from rich.text import Text

from . import __version__
from ._bundle import export_bundle, import_bundle
from ._errors import (
    AddressableError,
    AmbiguousId,
    ArgumentError,
    BadId,
    BundleError,
    IntegrityError,
    NoStore,
    NotFound,
    NotReplayable,
)
from ._exitcodes import (
    EXIT_DAMAGE,
    EXIT_FAILURE,
    EXIT_INTEGRITY,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_TOOL_ERROR,
    EXIT_USAGE,
)
from ._models import Record, Status
from ._payload import payload_text
from ._stores import Store, open_store
from ._tokens import DEFAULT_ENCODING, ENCODINGS
from ._toolkit import Toolkit

EPILOG = """\
store:
  --store URL, or $ADDRESSABLE_STORE: memory://, disk:///path, or a directory.
  The default is a disk store in $ADDRESSABLE_HOME, or ./.addressable when unset.
  Only import and mcp create a store; every other command needs one that exists.

output:
  What tools and models wrote (names, keys, arguments, errors, content) is printed as
  plain text, with control characters shown escaped (\\x1b, \\u202e). To a pipe or a
  file, replay and show --raw write the exact stored bytes; to a terminal they escape
  control characters too, and leave binary content out.

options:
  --store and --json go before the command or after it (after it wins if given twice).
  --json prints one JSON document on stdout, for every command; export without -o,
  whose stdout is the bundle, prints it on stderr.

sizes:
  Powers of 1000, parsed and printed alike: 500MB is 500,000,000 bytes (B, KB, MB, GB,
  TB). Powers of 1024 are parsed when named so: 1KiB is 1,024 bytes (KiB, MiB, GiB).

ids:
  A result id is 16 hex characters; any unique prefix of 6 or more works, as in git.

exit codes:
  0  success
  1  verify found damage: corrupt or missing payloads, unreadable records
  2  bad usage: unknown option, a bad value (a limit, size, duration or store URL),
     malformed or ambiguous id, a re-run that is refused
  3  no result with that id, or it expired (removed by gc)
  4  a payload no longer matches its hash: it is not served
  5  no store at that path (nothing is created), the store or a bundle failed (disk,
     database, malformed file), or a re-run could not reach its source
  6  replay: the result is a tool's error (the tool raised); its stored bytes are
     still written, and stderr (or --json's "status" and "error") says so

Errors go to stderr as one line: "addressable: error: <what was wrong and what to do>".
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "bench":
        from ._bench.cli import run_bench

        try:
            return run_bench(args, Console(highlight=False, soft_wrap=True))
        except (AddressableError, OSError) as exc:
            return _fail(exc, EXIT_FAILURE)
    # Nothing printed here is markup: what tools wrote must show as written.
    out = Console(highlight=False, soft_wrap=True, markup=False, emoji=False)
    try:
        store = open_store(args.store, create=args.creates)
        try:
            code: int = args.run(store, args, out)
            return code
        finally:
            store.close()
    except NoStore as exc:
        return _fail(
            f"no store at {_visible(str(exc.path))}: {exc.why}; only import and mcp create "
            "a store: check --store and $ADDRESSABLE_STORE",
            EXIT_FAILURE,
        )
    except (BadId, AmbiguousId, NotReplayable, ArgumentError) as exc:
        return _fail(exc, EXIT_USAGE)
    except NotFound as exc:
        return _fail(exc, EXIT_NOT_FOUND)
    except IntegrityError as exc:
        return _fail(exc, EXIT_INTEGRITY)
    except BrokenPipeError:  # output piped into `head` and the like
        return EXIT_OK
    except (AddressableError, OSError, httpx.HTTPError) as exc:
        return _fail(exc, EXIT_FAILURE)  # a re-run that could not reach its source, too


def _fail(exc: BaseException | str, code: int) -> int:
    print(f"addressable: error: {_one_line(str(exc)) or type(exc).__name__}", file=sys.stderr)
    return code


class _Parser(argparse.ArgumentParser):
    """argparse with the house's one-line errors, and values such as ``-1d`` given to the
    option they follow (to be refused there, by name) rather than read as options."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-\.?\d")

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"addressable: error: {_one_line(message)}; see {self.prog} --help\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="addressable",
        description="Inspect and maintain a store of addressable tool results.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"addressable {__version__}")
    _global_options(parser, after=False)
    common = _Parser(add_help=False)
    _global_options(common, after=True)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, run: Callable[..., int], help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name,
            parents=[common],
            help=help,
            description=help,
            epilog=EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        p.set_defaults(run=run, creates=False)
        return p

    p = command("ls", _ls, "list records, oldest first")
    p.add_argument("--tool", help="only this tool")
    p.add_argument("--key", help="only this key")
    p.add_argument("--session", help="only records seen in this session")
    p.add_argument(
        "--since",
        type=_when,
        help="only records seen since: a duration ago (30m, 2h, 7d) or an ISO time",
    )
    p.add_argument("--limit", type=_count, help="show only the newest N (1 or more)")

    p = command(
        "show",
        _show,
        "show a record's metadata and content (of a long one, the first 100 lines or 64 KB; "
        "--raw or replay for all of it)",
    )
    p.add_argument("id")
    p.add_argument("--raw", action="store_true", help="write the exact stored bytes to stdout")

    p = command("replay", _replay, "write a result's exact stored bytes to stdout")
    p.add_argument("id")
    p.add_argument(
        "--verify",
        action="store_true",
        help="re-run a deterministic call and report change (public fetches and shell "
        "commands re-run from here; other tools only in the process that registers them)",
    )

    command("verify", _verify, "re-hash every payload; exit 1 naming each damaged record")
    command("stats", _stats, "counts and sizes of what the store holds")

    p = command("gc", _gc, "remove old unpinned records and unreferenced payloads")
    p.add_argument("--max-age", type=_duration, help="remove records last seen longer ago (7d)")
    p.add_argument(
        "--max-bytes",
        type=_size,
        help="then remove the oldest until payloads take at most this (500MB)",
    )

    p = command("export", _export, "write the whole store as a self-contained bundle")
    p.add_argument("-o", "--output", help="file to write (default: stdout)")

    p = command("import", _import, "add a bundle's records and payloads to the store")
    p.add_argument("bundle", help="bundle file, or - for stdin")
    p.set_defaults(creates=True)  # the one command that may create the store

    from ._bench.cli import DESCRIPTION as BENCH
    from ._bench.cli import add_arguments as bench_arguments

    p = sub.add_parser(
        "bench",
        parents=[common],
        help="the token-savings benchmark (the bundled scenario by default)",
        description=BENCH,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(run=None)
    bench_arguments(p, encodings=ENCODINGS, default_encoding=DEFAULT_ENCODING)

    from ._mcp.cli import DESCRIPTION as MCP
    from ._mcp.cli import add_arguments as mcp_arguments

    p = sub.add_parser("mcp", help="serve the toolkit, or proxy a server, over MCP")
    p.description = MCP
    mcp_arguments(p, common)

    p = command("pin", _pin, "keep a record through every gc")
    p.add_argument("id")
    p = command("unpin", _unpin, "let gc remove a record again")
    p.add_argument("id")
    return parser


def _global_options(parser: argparse.ArgumentParser, *, after: bool) -> None:
    """--store and --json, on the main parser and (`after`) on every command's. After the
    command their default is to set nothing, so that they never undo what was given
    before it."""
    parser.add_argument(
        "--store",
        # set but empty: unset
        default=argparse.SUPPRESS if after else os.environ.get("ADDRESSABLE_STORE") or None,
        help="store URL or directory (default: $ADDRESSABLE_STORE, "
        "else $ADDRESSABLE_HOME, else ./.addressable)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS if after else False,
        help="print one JSON document on stdout, for scripts",
    )


# -- commands ----------------------------------------------------------------------------


def _ls(store: Store, args: argparse.Namespace, out: Console) -> int:
    filters = {"tool": args.tool, "key": args.key, "session": args.session, "since": args.since}
    if args.limit is None:
        records = list(store.records(**filters))
    else:  # the newest, found from the newest down rather than by listing all
        records = list(store.records(**filters, newest_first=True, limit=args.limit))[::-1]
    if args.json:
        _print_json([r.model_dump(mode="json") for r in records])
        return EXIT_OK
    table = Table("tool", "key or args", "kind", "status", "size", "observed")
    table.columns.insert(0, Column("id", no_wrap=True, min_width=16))
    for r in records:
        status = r.outcome.value if r.outcome else r.status.value
        table.add_row(
            _cell(r.id),
            _cell(_shorten(_visible(r.tool), 50)),
            _cell(_shorten(_visible(r.key or json.dumps(r.args, ensure_ascii=False)), 60)),
            r.determinism.value,
            status,
            _bytes(r.size),
            _time(r.observed_at),
        )
    out.print(table)
    out.print(f"{len(records)} records")
    return EXIT_OK


def _show(store: Store, args: argparse.Namespace, out: Console) -> int:
    record = store.get(store.resolve(args.id))
    payload = store.read(record)
    if args.raw:
        _write_payload(payload, record.media_type)
        return EXIT_OK
    observations = store.observations(record.id)
    if args.json:
        _print_json(
            {
                "record": record.model_dump(mode="json"),
                "observations": [o.model_dump(mode="json") for o in observations],
                "pinned": store.is_pinned(record.id),
                **_head_json(payload, record.media_type),
            }
        )
        return EXIT_OK
    table = Table("field", "value", show_header=False)
    for name, value in record.model_dump(mode="json", exclude_none=True).items():
        if not isinstance(value, str):
            value = json.dumps(value, ensure_ascii=False)
        table.add_row(_cell(name), _cell(_visible(value, lines=True)))
    table.add_row("observations", str(len(observations)))
    table.add_row("last seen", _time(max(o.at for o in observations)))
    table.add_row("pinned", "yes" if store.is_pinned(record.id) else "no")
    out.print(table)
    text = payload_text(payload, record.media_type)
    if text is None:
        out.print(f"[{len(payload)} bytes of binary content: use --raw]")
        return EXIT_OK
    head = _head(text)
    if head is not None:  # a long payload: its head, and how to get the rest
        _write_text(_visible(head, lines=True) if _terminal() else head)
        lines = head.count("\n")
        print(
            f"addressable: showed the first {lines:,} lines ({_bytes(len(head.encode()))}) "
            f"of {_bytes(len(payload))}: for all of it, use `addressable show {record.id} "
            f"--raw` or `addressable replay {record.id}`",
            file=sys.stderr,
        )
    elif _terminal():
        _write_text(_visible(text, lines=True))
    else:  # to a pipe or a file: as stored, ended by a newline
        _write_bytes(payload if payload.endswith(b"\n") else payload + b"\n")
    return EXIT_OK


HEAD_LINES = 100  # show prints at most this many lines of a payload
HEAD_BYTES = 64_000  # and at most this many bytes (64 KB)


def _head(text: str) -> str | None:
    """The first HEAD_LINES lines or HEAD_BYTES bytes of `text`, whichever is shorter,
    ended by a newline; None when that is all of it."""
    parts = text.split("\n", HEAD_LINES)
    head = "\n".join(parts[:HEAD_LINES]) + "\n" if len(parts) > HEAD_LINES else text
    encoded = head.encode()
    if len(encoded) > HEAD_BYTES:  # cut at a character's boundary
        head = encoded[:HEAD_BYTES].decode("utf-8", "ignore")
        head = head[: head.rfind("\n") + 1] or head  # at a line's end, if there is one
        head = head if head.endswith("\n") else head + "\n"
    elif head == text:
        return None
    return head


def _replay(store: Store, args: argparse.Namespace, out: Console) -> int:
    kit = Toolkit(store, session="cli")
    if args.verify:
        _adapters_for(kit, store.get(store.resolve(args.id)))
    result = kit.replay(args.id, verify=args.verify)
    record = result.record
    failed = record.status is Status.ERROR
    if args.json:
        verified = {"verified": True, "new_id": result.id} if args.verify else {}
        _print_json(
            {
                "id": result.id,
                "changed": result.changed,
                "previous_id": result.previous_id,
                **verified,
                "status": record.status.value,
                "error": record.error,
                **_content_json(result.payload, record.media_type),
            }
        )
    else:
        _write_payload(result.payload, record.media_type)
        if args.verify:  # stdout is the bytes: what the re-run found goes to stderr
            if result.changed:
                said = f"changed: the re-run gave new content, new id {result.id}"
            else:
                said = f"unchanged: the re-run gave the same content, id {result.id}"
            print(f"addressable: {said} (was {result.previous_id})", file=sys.stderr)
    if failed:
        why = f": {_one_line(record.error)}" if record.error else ""
        print(
            f"addressable: result {result.id} is a tool error{why} (exit {EXIT_TOOL_ERROR})",
            file=sys.stderr,
        )
        return EXIT_TOOL_ERROR
    return EXIT_OK


def _adapters_for(kit: Toolkit, record: Record) -> None:
    """Register the adapters that can re-run `record` with no configuration: fetch of a
    public URL (no identity), and shell commands in the folder they ran in."""
    adapters: Any = importlib.import_module("addressable.adapters")
    if record.tool == "fetch" and "identity" not in record.args:
        adapters.Fetch(kit)
    elif record.tool == "shell" and isinstance(record.args.get("cwd"), str):
        adapters.Shell(kit, cwd=record.args["cwd"], allow_shell=bool(record.args.get("shell")))


def _verify(store: Store, args: argparse.Namespace, out: Console) -> int:
    report = store.verify()
    if args.json:
        _print_json(report.model_dump(mode="json") | {"ok": report.ok})
    else:
        if report.damaged:
            table = Table("problem", "detail", title="damaged records")
            table.columns.insert(0, Column("id", no_wrap=True, min_width=16))
            for d in report.damaged:
                table.add_row(_cell(d.id), _cell(_visible(d.problem)), _cell(_visible(d.detail)))
            out.print(table)
        verdict = "ok" if report.ok else f"DAMAGED: {len(report.damaged)} records"
        out.print(
            f"{verdict}; {report.records} records, {report.blobs_checked} payloads "
            f"re-hashed; {report.orphan_blobs} unreferenced payloads "
            f"({_bytes(report.orphan_bytes)}) reclaimable by gc"
        )
    return EXIT_OK if report.ok else EXIT_DAMAGE


def _stats(store: Store, args: argparse.Namespace, out: Console) -> int:
    stats = store.stats()
    if args.json:
        _print_json(stats.model_dump(mode="json"))
        return EXIT_OK
    table = Table("", "", show_header=False)
    table.add_row("store", _cell(_visible(stats.location)))
    table.add_row("records", str(stats.records))
    table.add_row("payloads", f"{stats.blobs} ({_bytes(stats.blob_bytes)})")
    why = ", ".join(f"{n} {reason}" for reason, n in stats.pinned_by_reason.items())
    table.add_row("pinned", f"{stats.pinned} ({why})" if why else str(stats.pinned))
    table.add_row("sessions", str(stats.sessions))
    table.add_row("oldest", _time(stats.oldest))
    table.add_row("newest", _time(stats.newest))
    for tool, n in stats.by_tool.items():
        table.add_row(_cell(f"tool {_shorten(_visible(tool), 60)}"), str(n))
    out.print(table)
    return EXIT_OK


def _gc(store: Store, args: argparse.Namespace, out: Console) -> int:
    report = store.gc(max_age=args.max_age, max_bytes=args.max_bytes)
    if args.json:
        _print_json(report.model_dump(mode="json"))
    else:
        out.print(
            f"removed {len(report.removed_records)} records and {report.removed_blobs} "
            f"payloads ({_bytes(report.freed_bytes)}); kept {report.kept_pinned} pinned; "
            f"{_bytes(report.blob_bytes_after)} of payloads remain"
        )
    return EXIT_OK


def _export(store: Store, args: argparse.Namespace, out: Console) -> int:
    if args.output:
        with open(args.output, "wb") as f:
            summary = export_bundle(store, f)
    elif _terminal():
        raise ArgumentError(
            "export writes a bundle, not text for a terminal: give -o FILE, or redirect "
            "stdout to a file or a pipe"
        )
    else:
        summary = export_bundle(store, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    message = f"exported {summary.records} records and {summary.blobs} payloads"
    if args.json:
        print(json.dumps(summary.model_dump()), file=sys.stderr if not args.output else sys.stdout)
    else:
        print(message, file=sys.stderr)
    return EXIT_OK


def _import(store: Store, args: argparse.Namespace, out: Console) -> int:
    if args.bundle == "-":
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bundle.jsonl"
            path.write_bytes(sys.stdin.buffer.read())
            summary = import_bundle(store, path)
    else:
        if not Path(args.bundle).is_file():
            raise BundleError(f"no bundle file at {args.bundle}")
        summary = import_bundle(store, args.bundle)
    if args.json:
        _print_json(summary.model_dump())
    else:
        out.print(
            f"imported {summary.records} records and {summary.blobs} payloads; "
            f"{summary.skipped} records were already there"
        )
    return EXIT_OK


def _pin(store: Store, args: argparse.Namespace, out: Console) -> int:
    record_id = store.resolve(args.id)
    store.pin(record_id)
    if args.json:
        _print_json({"id": record_id, "pinned": True})
    else:
        out.print(f"pinned {record_id}")
    return EXIT_OK


def _unpin(store: Store, args: argparse.Namespace, out: Console) -> int:
    record_id = store.resolve(args.id)
    store.unpin(record_id)
    if args.json:
        _print_json({"id": record_id, "pinned": False})
    else:
        out.print(f"unpinned {record_id}")
    return EXIT_OK


# -- parsing and formatting ----------------------------------------------------------------

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_SIZES = {  # powers of 1000, as sizes are printed; powers of 1024 when named so (KiB)
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
}


def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a count: give 1 or more")
    return n


def _span(text: str) -> timedelta | None:
    """`text` as a duration (30s, 15m, 2h, 7d, 1w), or None if it is not one."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text.lower())
    if not match:
        return None
    try:
        return timedelta(seconds=float(match[1]) * _UNITS[match[2]])
    except OverflowError:  # past timedelta's 999,999,999 days, or infinite
        raise argparse.ArgumentTypeError(f"{text!r} is too long a duration") from None


def _duration(text: str) -> timedelta:
    span = _span(text)
    if span is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration: use 30s, 15m, 2h, 7d, 1w")
    if span <= timedelta(0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration above zero")
    return span


def _size(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)\s*", text.lower())
    if not match or match[2] not in _SIZES:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size: use 1048576, 500MB or 1GiB")
    size = float(match[1]) * _SIZES[match[2]]
    if not math.isfinite(size) or size >= 2**63:
        raise argparse.ArgumentTypeError(f"{text!r} is too large a size")
    if int(size) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size of a byte or more")
    return int(size)


def _when(text: str) -> datetime:
    span = _span(text)
    try:
        if span is not None:
            return datetime.now(UTC) - span
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is neither a duration (2h, 7d) nor an ISO time (2026-03-11T09:00)"
            ) from None
        return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    except OverflowError:
        raise argparse.ArgumentTypeError(f"{text!r} is too far back in time") from None


# What a terminal would act on rather than show: C0 controls (escape sequences, carriage
# return, backspace, bell), DEL, C1 controls (0x9b is a CSI of its own), bidirectional
# overrides that reorder what is seen, line and paragraph separators, and lone surrogates
# (which cannot even be encoded).
_UNSEEN = "\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_CONTROL_IN_LINE = re.compile(f"[\x00-\x1f{_UNSEEN}]")
_CONTROL_IN_TEXT = re.compile(f"[\x00-\x08\x0b-\x1f{_UNSEEN}]")  # keeps tab and newline
_JSON_UNSEEN = re.compile(f"[{_UNSEEN}]")  # json.dumps escapes the C0 controls itself
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(match: re.Match[str]) -> str:
    char = match[0]
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def _visible(text: str, *, lines: bool = False) -> str:
    """`text` with every control character written as an escape (``\\x1b``, ``\\u202e``):
    on one line, or (`lines`) keeping line breaks and tabs."""
    if lines:
        return _CONTROL_IN_TEXT.sub(_escaped, text.replace("\r\n", "\n"))
    return _CONTROL_IN_LINE.sub(_escaped, text)


def _one_line(message: str) -> str:
    return _visible(" ".join(part.strip() for part in message.splitlines() if part.strip()))


def _cell(text: str) -> Text:
    """A table cell that is shown as written: never read as markup or emoji codes."""
    return Text(text)


def _terminal() -> bool:
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


def _print_json(value: Any) -> None:
    text = json.dumps(value, indent=2, ensure_ascii=False)
    # Non-ASCII appears only inside JSON strings, where \uXXXX means the same character.
    print(_JSON_UNSEEN.sub(lambda m: f"\\u{ord(m[0]):04x}", text))


def _write_bytes(data: bytes) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _write_text(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


def _write_payload(payload: bytes, media_type: str) -> None:
    """The exact stored bytes to a pipe or a file; to a terminal, text with its control
    characters escaped, and binary content left out (it would drive the terminal)."""
    if not _terminal():
        _write_bytes(payload)
        return
    text = payload_text(payload, media_type)
    if text is None:
        _write_text(
            f"[{len(payload)} bytes of binary content: not written to a terminal; "
            "redirect to a file or a pipe for the bytes]"
        )
    else:
        _write_text(_visible(text, lines=True))


def _content_json(payload: bytes, media_type: str) -> dict[str, Any]:
    text = payload_text(payload, media_type)
    if text is not None:
        return {"content": text}
    return {"content_base64": base64.b64encode(payload).decode("ascii")}


def _head_json(payload: bytes, media_type: str) -> dict[str, Any]:
    """What `show --json` carries of a payload: the head plain `show` prints of text (of
    binary content, the first HEAD_BYTES bytes), its full size, and whether it was cut."""
    text = payload_text(payload, media_type)
    if text is None:
        shown = {"content_base64": base64.b64encode(payload[:HEAD_BYTES]).decode("ascii")}
        cut = len(payload) > HEAD_BYTES
    else:
        head = _head(text)
        shown, cut = {"content": text if head is None else head}, head is not None
    return {**shown, "payload_bytes": len(payload), "payload_truncated": cut}


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _bytes(n: int) -> str:
    """A size in powers of 1000 (KB, MB, GB, TB), as `--max-bytes` reads them."""
    if n < 1000:
        return f"{n:,} B"
    size = float(n)
    for unit in ("KB", "MB", "GB", "TB"):
        size /= 1000
        if round(size, 1) < 1000 or unit == "TB":
            break
    return f"{size:,.1f} {unit}"


def _time(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") if moment else "-"
