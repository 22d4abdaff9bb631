"""The commands that keep a store or move it: gc, pin and unpin, export and import."""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import sys
import tempfile
from contextlib import suppress
from pathlib import Path

from ..core.counts import counted
from ..core.errors import EXIT_OK, ArgumentError, BundleError
from ..recording.bundle import BundleSummary, export_bundle, import_bundle
from ..store import DiskStore, Store
from .output import Printer, print_json, size_text, terminal, visible

_CHUNK = 1 << 20  # bytes of a bundle from stdin copied at a time


def run_gc(store: Store, args: argparse.Namespace, out: Printer) -> int:
    """`gc`: remove old unpinned records, then the oldest past --max-bytes."""
    report = store.gc(max_age=args.max_age, max_bytes=args.max_bytes)
    if args.json:
        print_json(report.model_dump(mode="json"))
    else:
        out.print(
            f"removed {counted(len(report.removed_records), 'record')} and "
            f"{counted(report.removed_blobs, 'payload')} ({size_text(report.freed_bytes)}); "
            f"kept {report.kept_pinned} pinned; "
            f"{size_text(report.blob_bytes_after)} of payloads remain"
        )
    return EXIT_OK


def run_rm(store: Store, args: argparse.Namespace, out: Printer) -> int:
    """`rm`: remove records by id or prefix, pinned or not; all or none (an id not
    found removes nothing)."""
    ids = [store.resolve(given) for given in args.ids]
    report = store.remove(ids)
    if args.json:
        print_json(
            {
                "removed": report.removed_records,
                "removed_payloads": report.removed_blobs,
                "freed_bytes": report.freed_bytes,
            }
        )
    else:
        out.print(
            f"removed {counted(len(report.removed_records), 'record')} and "
            f"{counted(report.removed_blobs, 'payload')} ({size_text(report.freed_bytes)})"
        )
    return EXIT_OK


def run_export(store: Store, args: argparse.Namespace, out: Printer) -> int:
    """`export`: the whole store as a bundle, to -o FILE or to a stdout that is not a
    terminal."""
    to_file = bool(args.output) and args.output != "-"  # "-": stdout, as import reads it
    skip = bool(args.skip_damaged)
    if to_file:
        summary = _export_to(store, Path(args.output), skip)
    elif terminal():
        raise ArgumentError(
            "export writes a bundle, not text for a terminal: give -o FILE, or redirect "
            "stdout to a file or a pipe"
        )
    else:
        summary = export_bundle(store, sys.stdout.buffer, skip_damaged=skip)
        sys.stdout.buffer.flush()
    if summary.left_out:
        print(
            f"addressable: left out {len(summary.left_out)} damaged records: "
            f"{', '.join(summary.left_out)} (run `addressable verify`)",
            file=sys.stderr,
        )
    message = f"exported {summary.records} records and {summary.blobs} payloads"
    if args.json:
        shown = summary.model_dump(exclude=set() if skip else {"left_out"})
        print(json.dumps(shown), file=sys.stdout if to_file else sys.stderr)
    else:
        print(message, file=sys.stderr)
    return EXIT_OK


def _export_to(store: Store, output: Path, skip_damaged: bool) -> BundleSummary:
    """Write the bundle to `output` whole or not at all: to a new file beside it, renamed
    onto it only once the end line is written, so that an export that fails (a damaged
    payload, a full disk) leaves the file that was there. A pipe or a device (-o
    /dev/stdout) cannot be renamed onto and is written to directly."""
    target = output.resolve()  # through a symlink: the file it names is replaced
    _refuse_inside(store, output, target)
    if output.exists() and not output.is_file():
        if output.is_dir():
            raise ArgumentError(f"-o {visible(str(output))} is a directory: give a file to write")
        with open(output, "wb") as f:
            return export_bundle(store, f, skip_damaged=skip_damaged)
    partial = target.with_name(f".{target.name}.{secrets.token_hex(4)}.partial")
    # 0o666 less the umask, as open() would make it; an existing file's mode is kept.
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except PermissionError as exc:
        raise ArgumentError(
            f"-o {visible(str(output))}: cannot write in {visible(str(target.parent))} "
            f"({exc.strerror}): the bundle is written to a new file there, then renamed "
            "onto it; give -o a file in a folder you can write to"
        ) from None
    except OSError as exc:  # its own message would name the partial file, not -o's
        raise BundleError(_unwritable(output, target, exc)) from None
    try:
        with open(fd, "wb") as f:
            summary = export_bundle(store, f, skip_damaged=skip_damaged)
            f.flush()
            os.fsync(f.fileno())
        if target.exists():
            shutil.copymode(target, partial)
        os.replace(partial, target)
    except BaseException:
        with suppress(OSError):
            partial.unlink()
        raise
    return summary


def _unwritable(output: Path, target: Path, exc: OSError) -> str:
    """Why -o `output` cannot be written, naming it and its directory (through a
    symlink, the directory of the file it names)."""
    folder = target.parent if output.is_symlink() else output.parent
    if not folder.exists():
        why = f"the directory {visible(str(folder))} does not exist"
    elif not folder.is_dir():
        why = f"{visible(str(folder))} is not a directory"
    else:
        why = exc.strerror or type(exc).__name__
    return f"cannot write {visible(str(output))}: {why}"


def _refuse_inside(store: Store, output: Path, target: Path) -> None:
    """A bundle written among a disk store's own files would overwrite or disturb them
    (-o STORE/cache.db emptied the database): refused before anything is opened."""
    if isinstance(store, DiskStore) and target.is_relative_to(store.directory):
        raise ArgumentError(
            f"-o {visible(str(output))} is inside the store being exported "
            f"({visible(str(store.directory))}): write "
            "the bundle outside the store's directory"
        )


def run_import(store: Store, args: argparse.Namespace, out: Printer) -> int:
    """`import`: a bundle's records and payloads, from a file or stdin (-)."""
    if args.bundle == "-":
        # Kept in a file a chunk at a time (the bundle is read twice: checked, then
        # written), never whole in memory; its errors name it as given.
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bundle.jsonl"
            with path.open("wb") as kept:
                shutil.copyfileobj(sys.stdin.buffer, kept, _CHUNK)
            try:
                summary = import_bundle(store, path)
            except BundleError as exc:
                raise BundleError(str(exc).replace(str(path), "<stdin>")) from exc.__cause__
    else:
        if not Path(args.bundle).is_file():
            raise BundleError(f"no bundle file at {args.bundle}")
        summary = import_bundle(store, args.bundle)
    if args.json:
        print_json(summary.model_dump(exclude={"left_out"}))
    else:
        out.print(
            f"imported {counted(summary.records, 'record')} and "
            f"{counted(summary.blobs, 'payload')}; {counted(summary.skipped, 'record')} "
            f"{'was' if summary.skipped == 1 else 'were'} already there"
        )
    return EXIT_OK


def run_pin(store: Store, args: argparse.Namespace, out: Printer) -> int:
    """`pin`: keep a record through every gc."""
    record_id = store.resolve(args.id)
    store.pin(record_id)
    if args.json:
        print_json({"id": record_id, "pinned": True})
    else:
        out.print(f"pinned {record_id}")
    return EXIT_OK


def run_unpin(store: Store, args: argparse.Namespace, out: Printer) -> int:
    """`unpin`: let gc remove a record again."""
    record_id = store.resolve(args.id)
    store.unpin(record_id)
    if args.json:
        print_json({"id": record_id, "pinned": False})
    else:
        out.print(f"unpinned {record_id}")
    return EXIT_OK
