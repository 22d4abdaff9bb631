"""`addressable show ID --json` carries the head plain `show` prints, the payload's full
size and whether it was cut; `--raw` still gives every byte."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import addressable as ad


def stored(path: Path, payload: bytes, media_type: str = "text/plain; charset=utf-8") -> str:
    with ad.DiskStore(str(path)) as store:
        return (
            ad.Toolkit(store)
            .record(
                "dump",
                {"n": len(payload)},
                payload,
                determinism="deterministic",
                media_type=media_type,
            )
            .id
        )


def show(path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "addressable", "show", *args, "--store", str(path)],
        capture_output=True,
        timeout=120,
    )


def test_a_long_payload_is_cut_to_the_head_plain_show_prints(tmp_path: Path) -> None:
    store = tmp_path / "store"
    payload = "".join(f"line {n}\n" for n in range(5000)).encode()
    rid = stored(store, payload)
    plain = show(store, rid)
    assert plain.returncode == 0
    head = plain.stdout.split("┘\n".encode(), 1)[1].decode()  # after the metadata table
    assert head == "".join(f"line {n}\n" for n in range(100))

    proc = show(store, rid, "--json")
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert shown["content"] == head
    assert shown["payload_bytes"] == len(payload) and shown["payload_truncated"] is True
    assert shown["record"]["id"] == rid and shown["record"]["size"] == len(payload)
    assert shown["pinned"] is False and len(shown["observations"]) == 1
    assert len(proc.stdout) < len(payload) // 4  # the document stays small

    raw = show(store, rid, "--raw")
    assert raw.returncode == 0 and raw.stdout == payload  # --raw: all of it


def test_long_lines_are_cut_at_64_kb_as_plain_show_cuts_them(tmp_path: Path) -> None:
    store = tmp_path / "store"
    payload = ("é" * 50_000 + "\n").encode() * 8  # 8 lines of 100 KB
    rid = stored(store, payload)
    plain = show(store, rid).stdout.split("┘\n".encode(), 1)[1].decode()
    shown = json.loads(show(store, rid, "--json").stdout)
    assert shown["content"] == plain
    assert len(shown["content"].encode()) <= 64_001
    assert shown["payload_bytes"] == len(payload) and shown["payload_truncated"] is True


def test_a_short_payload_is_whole_and_says_so(tmp_path: Path) -> None:
    store = tmp_path / "store"
    payload = "".join(f"line {n}\n" for n in range(100)).encode()
    rid = stored(store, payload)
    shown = json.loads(show(store, rid, "--json").stdout)
    assert shown["content"] == payload.decode()
    assert shown["payload_bytes"] == len(payload) and shown["payload_truncated"] is False


def test_long_binary_content_is_cut_to_its_first_64_kb(tmp_path: Path) -> None:
    store = tmp_path / "store"
    payload = bytes(range(256)) * 1000  # 256 KB, not text
    rid = stored(store, payload, "application/octet-stream")
    shown = json.loads(show(store, rid, "--json").stdout)
    assert "content" not in shown
    assert base64.b64decode(shown["content_base64"]) == payload[:64_000]
    assert shown["payload_bytes"] == len(payload) and shown["payload_truncated"] is True
    small = stored(store, b"\x89PNG\x00\xff", "image/png")
    shown = json.loads(show(store, small, "--json").stdout)
    assert base64.b64decode(shown["content_base64"]) == b"\x89PNG\x00\xff"
    assert shown["payload_bytes"] == 6 and shown["payload_truncated"] is False
