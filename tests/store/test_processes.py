"""What must hold across processes: stable ids, crash safety, concurrent writers, damage."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import addressable as ad
from tests import helpers
from tests.helpers import run_writers

WRITER = str(helpers.WRITER)

SAME_CALL = """
import sys, addressable as ad
kit = ad.Toolkit(ad.DiskStore(sys.argv[1]))
fetch = kit.tool(lambda url, limit=3: f"page {url}"[:99], name="fetch",
                 determinism="deterministic", key=lambda url, limit=3: url)
print(fetch("https://example.test/doc", limit=5).id)
"""


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "addressable", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_the_same_call_in_two_processes_gets_the_same_id(tmp_path: Path) -> None:
    ids = [
        subprocess.run(
            [sys.executable, "-c", SAME_CALL, str(tmp_path / f"store{i}")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for i in range(2)
    ]
    assert len(ids[0]) == 16
    assert ids[0] == ids[1]


def _payload_file(store_dir: Path, size: int) -> Path:
    # diskcache keeps large values in files of their own; find the one of this payload.
    files = [p for p in store_dir.rglob("*.val") if p.stat().st_size == size]
    assert len(files) == 1, files
    return files[0]


def test_one_flipped_byte_in_a_1mb_payload_is_caught(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    payload = os.urandom(1 << 20)
    with ad.DiskStore(store_dir) as store:
        kit = ad.Toolkit(store)
        big = kit.record("fetch", {"url": "https://x/big"}, payload, determinism="deterministic")
        small = kit.record("fetch", {"url": "https://x/small"}, b"ok", determinism="deterministic")
    path = _payload_file(store_dir, 1 << 20)
    data = bytearray(path.read_bytes())
    data[500_000] ^= 0x01
    path.write_bytes(bytes(data))

    with ad.DiskStore(store_dir) as store:
        kit = ad.Toolkit(store)
        with pytest.raises(ad.IntegrityError, match=f"payload of result {big.id} is corrupt"):
            kit.replay(big.id)
        assert kit.replay(small.id).payload == b"ok"

    verify = cli("verify", "--store", str(store_dir))
    assert verify.returncode == 1
    assert big.id in verify.stdout
    assert small.id not in verify.stdout
    replay = cli("replay", big.id, "--store", str(store_dir))
    assert replay.returncode == 4
    assert replay.stdout == ""
    assert "is corrupt" in replay.stderr


def test_a_writer_killed_mid_write_leaves_a_sound_store(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    written = []
    with subprocess.Popen(
        # Paced (2 ms a write) so that the kill lands mid-run however busy the machine.
        [sys.executable, WRITER, str(store_dir), "victim", "1000", "0.002"],
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            written.append(line.strip())
            if len(written) == 250:
                break
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    verify = cli("verify", "--store", str(store_dir), "--json")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    with ad.DiskStore(store_dir) as store:
        kit = ad.Toolkit(store)
        records = list(store.records())
        assert 250 <= len(records) < 1000
        assert set(written) <= {r.id for r in records}
        for record in records:
            assert kit.replay(record.id).record.content_hash == record.content_hash


def test_four_processes_write_into_one_store_at_once(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    ad.DiskStore(store_dir).close()  # create it before the writers race to
    outputs = run_writers(str(store_dir), 4, 500)
    with ad.DiskStore(store_dir) as store:
        kit = ad.Toolkit(store)
        records = list(store.records())
        assert len(records) == 2000
        assert {r.id for r in records} == {i for out in outputs for i in out}
        assert {r.session for r in records} == {"w0", "w1", "w2", "w3"}
        for record in records:
            res = kit.replay(record.id)
            writer, i = record.args["writer"], record.args["i"]
            assert res.payload.startswith(f"{writer}:{i}:".encode())
        assert store.verify().ok
