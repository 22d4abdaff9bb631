"""What a Redis store loses when its server is killed, under each persistence setting.

For each setting: a redis-server in a new folder, and a writer process that records
results through the store as fast as it can, printing each id once the store has
acknowledged it. After a few seconds the server gets SIGKILL; it is started again on the
same folder with the same settings, and every acknowledged id is replayed. The figures
are the records acknowledged, those lost, and those that came back with other bytes.

    python benchmarks/redis_persistence.py [--seconds 3] [--json PATH]

Only a killed server process is measured here: the operating system still holds what
Redis wrote to its files, so a setting that does not fsync every write loses more when
the machine itself stops (with `appendfsync everysec`, about the last second), which
cannot be done on demand. The figures go to benchmarks/redis_persistence.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import addressable as ad

SETTINGS = {
    "appendonly yes, appendfsync always": ["--appendonly", "yes", "--appendfsync", "always"],
    "appendonly yes, appendfsync everysec": ["--appendonly", "yes", "--appendfsync", "everysec"],
    "snapshots every second (save 1 1)": ["--appendonly", "no", "--save", "1 1"],
    "no persistence": ["--appendonly", "no"],
}

_WRITER = """
import sys
import addressable as ad
kit = ad.Toolkit(ad.open_store(sys.argv[1]))
n = 0
try:
    while True:
        res = kit.record("w", {"n": n}, b"written %d " % n * 20, determinism="deterministic")
        print(res.id, n, flush=True)
        n += 1
except ad.AddressableError:
    pass
"""


def _server(binary: str, port: int, folder: Path, setting: list[str]) -> subprocess.Popen[bytes]:
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder)]
    if "--save" not in setting:
        args += ["--save", ""]
    proc = subprocess.Popen([*args, *setting], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while True:  # up, and done loading what it kept
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                if s.recv(64).startswith(b"+PONG"):
                    return proc
        except OSError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError("redis-server did not start")
        time.sleep(0.05)


def measure(binary: str, setting: list[str], seconds: float) -> dict[str, int]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"redis://127.0.0.1:{port}/0"
    with tempfile.TemporaryDirectory(prefix="addressable-persistence-") as tmp:
        server = _server(binary, port, Path(tmp), setting)
        said = Path(tmp) / "acknowledged.txt"  # a file, not a pipe that fills and stalls it
        with said.open("w") as out:
            writer = subprocess.Popen([sys.executable, "-c", _WRITER, url], stdout=out)
            time.sleep(seconds)
            server.send_signal(signal.SIGKILL)
            server.wait(timeout=30)
            writer.wait(timeout=120)
        acknowledged = [line.split() for line in said.read_text().splitlines() if line.strip()]
        server = _server(binary, port, Path(tmp), setting)
        lost = wrong = 0
        try:
            with ad.open_store(url) as store:
                kit = ad.Toolkit(store)
                for record_id, n in acknowledged:
                    try:
                        payload = kit.replay(record_id).payload
                    except ad.NotFound:
                        lost += 1
                        continue
                    wrong += payload != b"written %d " % int(n) * 20
        finally:
            server.terminate()
            server.wait(timeout=30)
    return {"acknowledged": len(acknowledged), "lost": lost, "wrong_bytes": wrong}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="of writing before the kill")
    parser.add_argument("--json", metavar="PATH", help="default: redis_persistence.json here")
    args = parser.parse_args(argv)
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("redis-server is not on the PATH")
    results: dict[str, Any] = {}
    for name, setting in SETTINGS.items():
        results[name] = measure(binary, setting, args.seconds)
        row = results[name]
        print(
            f"{name}: {row['acknowledged']:,} acknowledged, {row['lost']:,} lost, "
            f"{row['wrong_bytes']} with other bytes"
        )
    out = args.json or str(Path(__file__).with_name("redis_persistence.json"))
    figures = {"benchmark": "redis_persistence", "seconds": args.seconds, "results": results}
    Path(out).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
