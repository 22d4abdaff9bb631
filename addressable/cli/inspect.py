"""The commands that look into a record or a store: show, replay, verify and stats
(`ls` is in `cli.listing`)."""

from __future__ import annotations

import argparse
import base64
import importlib
import ipaddress
import json
import socket
import sys
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from rich.table import Column, Table

from ..core.counts import counted
from ..core.errors import EXIT_DAMAGE, EXIT_OK, EXIT_TOOL_ERROR, NotReplayable
from ..core.payload import payload_text
from ..core.records import Record, Status
from ..store import Store
from .output import (
    Printer,
    cell,
    content_json,
    one_line,
    print_json,
    shorten,
    size_text,
    terminal,
    time_text,
    visible,
    write_bytes,
    write_payload,
    write_text,
)

if TYPE_CHECKING:
    from ..kit import Toolkit


def run_show(store: Store, args: argparse.Namespace, out: Printer) -> int:
    """`show`: a record's metadata and the head of its content (all of it with --raw)."""
    record = store.get(store.resolve(args.id))
    payload = store.read(record)
    if args.raw:
        write_payload(payload, record.media_type)
        return EXIT_OK
    observations = store.observations(record.id)
    if args.json:
        print_json(
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
        table.add_row(cell(name), cell(visible(value, lines=True)))
    table.add_row("observations", str(len(observations)))
    table.add_row("last seen", time_text(max(o.at for o in observations)))
    table.add_row("pinned", "yes" if store.is_pinned(record.id) else "no")
    out.print(table)
    text = payload_text(payload, record.media_type)
    if text is None:
        out.print(f"[{len(payload)} bytes of binary content: use --raw]")
        return EXIT_OK
    head = _head(text)
    if head is not None:  # a long payload: its head, and how to get the rest
        write_text(visible(head, lines=True) if terminal() else head)
        lines = head.count("\n")
        print(
            f"addressable: showed the first {lines:,} lines ({size_text(len(head.encode()))}) "
            f"of {size_text(len(payload))}: for all of it, use `addressable show {record.id} "
            f"--raw` or `addressable replay {record.id}`",
            file=sys.stderr,
        )
    elif terminal():
        write_text(visible(text, lines=True))
    else:  # to a pipe or a file: as stored, ended by a newline
        write_bytes(payload if payload.endswith(b"\n") else payload + b"\n")
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


def run_replay(store: Store, args: argparse.Namespace, out: Printer) -> int:
    """`replay`: a result's exact stored bytes; with --verify, re-run and say what changed."""
    from ..kit import Toolkit  # what a replay runs with, loaded by the command that needs it

    kit = Toolkit(store, session="cli")
    if args.verify:
        record = store.get(store.resolve(args.id))
        if store.imported(record.id):
            _may_run_imported(record, run=args.run_command)
        _adapters_for(kit, record, run=args.run_command)
    try:
        result = kit.replay(args.id, verify=args.verify)
    except NotReplayable as exc:
        raise _in_cli_words(exc, args.id) from None
    record = result.record
    failed = record.status is Status.ERROR
    if args.json:
        verified = {"verified": True, "new_id": result.id} if args.verify else {}
        print_json(
            {
                "id": result.id,
                "changed": result.changed,
                "previous_id": result.previous_id,
                **verified,
                "status": record.status.value,
                "error": record.error,
                **content_json(result.payload, record.media_type),
            }
        )
    else:
        write_payload(result.payload, record.media_type)
        if args.verify:  # stdout is the bytes: what the re-run found goes to stderr
            if result.changed:
                said = f"changed: the re-run gave new content, new id {result.id}"
            else:
                said = f"unchanged: the re-run gave the same content, id {result.id}"
            print(f"addressable: {said} (was {result.previous_id})", file=sys.stderr)
    if failed:
        why = f": {one_line(record.error)}" if record.error else ""
        print(
            f"addressable: result {result.id} is a tool error{why} (exit {EXIT_TOOL_ERROR})",
            file=sys.stderr,
        )
        return EXIT_TOOL_ERROR
    return EXIT_OK


_COMMAND_SHOWN = 300  # characters of a command `replay --verify` shows in full


def _in_cli_words(exc: NotReplayable, given: str) -> NotReplayable:
    """`exc` as the command line says it: its options, not the library's arguments."""
    if exc.kind == "action":
        why = "it is an action (a side effect), and actions are never run again"
    elif exc.kind == "nondeterministic":
        why = "it is nondeterministic: running it again would not reproduce it"
    elif exc.kind == "unregistered":
        why = (
            "only public fetches and shell commands run again from the command line; "
            "others run again only in the program that set up their tool"
        )
    else:
        return exc
    return NotReplayable(
        f"result {given} cannot be verified: {why}; `addressable replay {given}` without "
        "--verify writes what was recorded",
        exc.kind,
    )


def _may_run_imported(record: Record, *, run: bool) -> None:
    """`NotReplayable` unless a record that came in a bundle may be run again: only with
    --run, as a side effect is, and never a fetch of an address of this machine or its
    network (loopback, private, link-local), which the bundle's maker chose."""
    url = record.args.get("url")
    if not run:
        what = f"a fetch of {url}" if isinstance(url, str) else f"a call of {record.tool}"
        raise NotReplayable(
            f"result {record.id} came in a bundle: re-running it makes {what}, which "
            "someone else chose; add --run to run it"
        )
    if record.tool == "fetch" and isinstance(url, str):
        host = urlsplit(url).hostname or ""
        try:
            found = {str(info[4][0]) for info in socket.getaddrinfo(host, None)}
        except (OSError, UnicodeError):
            found = set()
        for address in sorted(found):
            if not ipaddress.ip_address(address.split("%", 1)[0]).is_global:
                raise NotReplayable(
                    f"result {record.id} came in a bundle and fetches {host}, at {address}, "
                    "an address of this machine or its network: it is not run again"
                )


def _adapters_for(kit: Toolkit, record: Record, *, run: bool) -> None:
    """Register the adapters that can re-run `record` with no configuration: fetch of a
    public URL (no identity), and, when `run` says so, shell commands in the folder
    they ran in. A record's command is data (a model chose it; a bundle may come from
    anyone): without `run` it is shown, not run."""
    adapters: Any = importlib.import_module("addressable.adapters")
    if record.tool == "fetch" and "identity" not in record.args:
        adapters.Fetch(kit)
    elif record.tool == "shell" and isinstance(record.args.get("cwd"), str):
        if not run:
            command = str(record.args.get("command"))
            how = "through /bin/sh " if record.args.get("shell") else ""
            shown = (
                repr(command)
                if len(command) <= _COMMAND_SHOWN
                else f"of {len(command):,} characters (read it whole with `addressable show "
                f"{record.id}`)"
            )
            raise NotReplayable(
                f"re-running result {record.id} runs the command {shown} {how}in "
                f"{record.args['cwd']}: add --run to run it"
            )
        adapters.Shell(kit, cwd=record.args["cwd"], allow_shell=bool(record.args.get("shell")))


def run_verify(store: Store, args: argparse.Namespace, out: Printer) -> int:
    """`verify`: re-hash every payload and check the indexes; EXIT_DAMAGE when any record
    is damaged or an index is wrong. With --repair, wrong indexes are built again from
    the records first, and the store verified again."""
    report = store.verify()
    repaired: list[str] = []
    if args.repair and report.indexes:
        repaired = report.indexes
        store.reindex()
        report = store.verify()
    if args.json:
        print_json(report.model_dump(mode="json") | {"ok": report.ok, "repaired": repaired})
    else:
        if report.damaged:
            table = Table("problem", "detail", title="damaged records")
            table.columns.insert(0, Column("id", no_wrap=True, min_width=16))
            for d in report.damaged:
                table.add_row(cell(d.id), cell(visible(d.problem)), cell(visible(d.detail)))
            out.print(table)
        for line in repaired:
            out.print(f"repaired: {visible(line)}")
        for line in report.indexes:
            out.print(f"index damaged: {visible(line)}")
        if report.ok:
            verdict = "ok"
        else:
            said = [counted(len(report.damaged), "record")] if report.damaged else []
            said += [counted(len(report.indexes), "index problem")] if report.indexes else []
            verdict = "DAMAGED: " + ", ".join(said)
        mend = "; run verify --repair to rebuild the indexes" if report.indexes else ""
        out.print(
            f"{verdict}; {counted(report.records, 'record')}, "
            f"{counted(report.blobs_checked, 'payload')} re-hashed; "
            f"{counted(report.orphan_blobs, 'unreferenced payload')} "
            f"({size_text(report.orphan_bytes)}) reclaimable by gc{mend}"
        )
    return EXIT_OK if report.ok else EXIT_DAMAGE


def run_stats(store: Store, args: argparse.Namespace, out: Printer) -> int:
    """`stats`: counts and sizes of what the store holds."""
    stats = store.stats()
    if args.json:
        print_json(stats.model_dump(mode="json"))
        return EXIT_OK
    table = Table("", "", show_header=False)
    table.add_row("store", cell(visible(stats.location)))
    table.add_row("records", str(stats.records))
    table.add_row("payloads", f"{stats.blobs} ({size_text(stats.blob_bytes)})")
    why = ", ".join(f"{n} {reason}" for reason, n in stats.pinned_by_reason.items())
    table.add_row("pinned", f"{stats.pinned} ({why})" if why else str(stats.pinned))
    table.add_row("sessions", str(stats.sessions))
    table.add_row("oldest", time_text(stats.oldest))
    table.add_row("newest", time_text(stats.newest))
    for tool, n in stats.by_tool.items():
        table.add_row(cell(f"tool {shorten(visible(tool), 60)}"), str(n))
    out.print(table)
    return EXIT_OK
