"""What bounds a Shell call: its timeout holds though a descendant keeps the pipes open,
its output has a size limit, and the program reads no input of the caller's.

Real subprocesses; the program shows what happened by the files it makes.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import addressable as ad
from addressable.adapters import ResponseTooLarge, Shell

# A program that leaves its process group (setsid) in a child holding stdout and stderr,
# which writes its pid, then, once it has slept, the file `ended`.
ESCAPES = (
    "import os, sys, time\n"
    "print('started', flush=True)\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    open('escaped.pid', 'w').write(str(os.getpid()))\n"
    "    time.sleep(20)\n"
    "    open('ended', 'w').close()\n"
)
# A program that writes 5 MB in 100 KB pieces, then makes the file `finished`.
FLOODS = (
    "import sys\n"
    "for _ in range(50):\n"
    "    sys.stdout.write('x' * 100_000)\n"
    "    sys.stdout.flush()\n"
    "open('finished', 'w').close()\n"
)
LIMIT = 100_000  # bytes of output the tests' adapters take


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


@pytest.fixture
def escaped(tmp_path: Path) -> Iterator[Path]:
    """The file the escaping child writes its pid to; the child is killed after the test."""
    pid_file = tmp_path / "escaped.pid"
    yield pid_file
    if pid_file.exists() and pid_file.read_text():
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


# -- the timeout -----------------------------------------------------------------------


def test_a_timeout_ends_the_call_though_a_descendant_holds_the_pipes(
    kit: ad.Toolkit, tmp_path: Path, escaped: Path
) -> None:
    # Out of the sandbox, where a descendant can outlive its parent (in it, it cannot:
    # test_shell_sandbox.py).
    shell = Shell(kit, cwd=tmp_path, timeout=1.0, sandbox=False)
    res = shell(["python3", "-c", ESCAPES])
    # The call came back while the descendant still slept: it had not ended.
    assert escaped.exists() and not (tmp_path / "ended").exists()
    assert res.text.startswith("started\n") and "[timed out after 1 s" in res.text
    assert res.record.meta["timed_out"] is True and res.record.status is ad.Status.ERROR


def test_a_timed_out_write_whose_descendant_escaped_is_unknown(
    kit: ad.Toolkit, tmp_path: Path, escaped: Path
) -> None:
    shell = Shell(kit, cwd=tmp_path, timeout=1.0, writes=("python3",), sandbox=False)
    res = shell(["python3", "-c", ESCAPES])
    assert not (tmp_path / "ended").exists()
    assert res.record.determinism is ad.Determinism.SIDE_EFFECT
    assert res.record.outcome is ad.Outcome.UNKNOWN


# -- the size of the output ------------------------------------------------------------


def test_output_over_the_limit_stops_the_program_and_is_refused(
    kit: ad.Toolkit, tmp_path: Path
) -> None:
    Shell(kit, cwd=tmp_path, max_bytes=LIMIT)
    text = kit.handle("shell", {"command": f"python3 -c {shlex.quote(FLOODS)}"})
    assert text.startswith("error: ResponseTooLarge: shell: ") and "\n" not in text
    assert f"over the limit of {LIMIT:,} bytes" in text
    assert not (tmp_path / "finished").exists()  # stopped before it wrote it all
    (record,) = kit.store.records()
    assert record.status is ad.Status.ERROR and record.size < LIMIT
    assert record.determinism is ad.Determinism.NONDETERMINISTIC


def test_a_direct_call_over_the_limit_raises(kit: ad.Toolkit, tmp_path: Path) -> None:
    shell = Shell(kit, cwd=tmp_path, max_bytes=LIMIT)
    with pytest.raises(ResponseTooLarge, match="raise max_bytes on the Shell adapter"):
        shell(["head", "-c", str(LIMIT + 1), "/dev/zero"])
    assert [r.status for r in kit.store.records()] == [ad.Status.ERROR]


def test_stderr_counts_toward_the_limit(kit: ad.Toolkit, tmp_path: Path) -> None:
    shell = Shell(kit, cwd=tmp_path, max_bytes=LIMIT)
    both = "import sys; sys.stdout.write('o' * 60_000); sys.stderr.write('e' * 60_000)"
    with pytest.raises(ResponseTooLarge):
        shell(["python3", "-c", both])


def test_output_at_the_limit_is_kept_whole(kit: ad.Toolkit, tmp_path: Path) -> None:
    shell = Shell(kit, cwd=tmp_path, max_bytes=LIMIT)
    res = shell(["head", "-c", str(LIMIT), "/dev/zero"])
    assert res.ok and res.text == "\0" * LIMIT + "\n[exit 0]"


def test_a_write_over_the_limit_is_recorded_with_its_outcome_unknown(
    kit: ad.Toolkit, tmp_path: Path
) -> None:
    shell = Shell(kit, cwd=tmp_path, max_bytes=LIMIT, writes=("python3",))
    res = shell(["python3", "-c", FLOODS])
    assert not (tmp_path / "finished").exists()
    record = res.record
    assert record.determinism is ad.Determinism.SIDE_EFFECT
    assert record.outcome is ad.Outcome.UNKNOWN  # it ran, and was stopped part way
    assert record.status is ad.Status.ERROR and record.size < LIMIT
    assert record.meta["output_over"] == LIMIT
    assert f"over the limit of {LIMIT:,} bytes" in res.text and "x" * 100 not in res.text


def test_the_limit_is_ten_megabytes_unless_given(kit: ad.Toolkit, tmp_path: Path) -> None:
    assert Shell(kit, cwd=tmp_path).max_bytes == 10 * 1024 * 1024


@pytest.mark.parametrize("bad", [0, -1, 1.5, "10", True, None])
def test_a_bad_limit_is_refused_when_made(kit: ad.Toolkit, tmp_path: Path, bad: object) -> None:
    with pytest.raises(ad.ArgumentError, match="max_bytes") as caught:
        Shell(kit, cwd=tmp_path, max_bytes=bad)  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)


# -- input -----------------------------------------------------------------------------


def test_a_program_reads_no_input_of_the_callers(kit: ad.Toolkit, tmp_path: Path) -> None:
    # The caller's standard input is a pipe holding a line: the program must not take it.
    read, write = os.pipe()
    os.write(write, b"the caller's line\n")
    os.close(write)
    saved = os.dup(0)
    sys.stdout.flush()
    os.dup2(read, 0)
    try:
        res = Shell(kit, cwd=tmp_path)(["head", "-n", "1"])
        left = os.read(0, 100)
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(read)
    assert res.text == "[exit 0]"
    assert left == b"the caller's line\n"


def test_a_write_stopped_for_its_output_is_not_said_to_have_timed_out(
    kit: ad.Toolkit, tmp_path: Path
) -> None:
    res = Shell(kit, cwd=tmp_path, max_bytes=LIMIT, writes=("python3",))(["python3", "-c", FLOODS])
    assert res.record.meta["output_over"] == LIMIT and res.record.meta["timed_out"] is False


def test_a_write_interrupted_while_it_runs_is_recorded_unknown(
    kit: ad.Toolkit, tmp_path: Path
) -> None:
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    shell = Shell(kit, cwd=tmp_path, allow_shell=True, writes=("touch",))
    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            shell("touch made && sleep 5", shell=True)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert (tmp_path / "made").exists()  # it did begin
    (record,) = kit.store.records()
    assert record.determinism is ad.Determinism.SIDE_EFFECT
    assert record.outcome is ad.Outcome.UNKNOWN and record.status is ad.Status.ERROR
