"""Ctrl-C stops a command with one line and exit code 130, not a Python traceback."""

from __future__ import annotations

import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers import FIXTURES
from tests.helpers.mcp_client import process_env


def _interrupted(command: list[str], ready: str | None, wait: float) -> tuple[int, str]:
    """Start `addressable COMMAND`, send it SIGINT once it has said `ready` on stderr (or
    after `wait` seconds), and give its exit code and the rest of its stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "addressable", *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=process_env(),
    )
    assert proc.stderr is not None
    said = ""
    if ready is not None:
        assert select.select([proc.stderr], [], [], 30)[0], "nothing said at start"
        said = proc.stderr.readline()
        assert ready in said
    time.sleep(wait)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, said + err


def test_ctrl_c_stops_the_benchmark_in_one_line(tmp_path: Path) -> None:
    code, err = _interrupted(["bench", "--out", str(tmp_path / "out")], None, 4.0)
    assert code == 130, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == "addressable: interrupted (exit 130)"


def test_ctrl_c_stops_the_http_server_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = ["mcp", "serve", "memory", "--http", str(port), "--store", str(tmp_path / "s")]
    command += ["--memory-dir", str(tmp_path / "mem")]
    code, err = _interrupted(command, "serving MCP at", 2.0)
    assert "Traceback" not in err
    assert code in (0, 130), err


def test_ctrl_c_swallowed_by_code_the_benchmark_runs_still_stops_it(tmp_path: Path) -> None:
    # Code the benchmark runs may catch a KeyboardInterrupt and go on (pydoc, which
    # renders the bundled scenario's pages, takes reprs under a bare `except:`). Here
    # the first strategy run always does.
    trace = tmp_path / "one.jsonl"
    trace.write_text((FIXTURES / "sessions.jsonl").read_text().splitlines(keepends=True)[0])
    code = (
        "import os, signal, sys, time\n"
        "import addressable.bench.engine as engine\n"
        "simulate = engine.simulate\n"
        "def swallowing(*args, **kwargs):\n"
        "    try:\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "        time.sleep(1)\n"
        "    except KeyboardInterrupt:\n"
        "        pass\n"
        "    return simulate(*args, **kwargs)\n"
        "engine.simulate = swallowing\n"
        "from addressable.cli import main\n"
        f"out = {str(tmp_path / 'out')!r}\n"
        f"sys.exit(main(['bench', '--trace', {str(trace)!r}, '--out', out]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=process_env(), timeout=120
    )
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "addressable: interrupted (exit 130)"
    assert not (tmp_path / "out" / "report.json").exists()
