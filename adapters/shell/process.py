"""Running a program to its end, its timeout or its output limit, whatever its
descendants do: what `Shell` starts.

Both pipes are read together as output comes (a program that fills one pipe while the
other is read would otherwise wait for ever), at most one byte past the limit. A program
stopped is stopped with its process group; its pipes are then closed, even when a
descendant that left the group still holds them, so that a call ends within its timeout
and a moment's grace.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

_GRACE = 1.0  # seconds to read what a stopped program left in its pipes
_CHUNK = 65_536  # bytes read from a pipe at a time
_LONGEST_WAIT = 3600.0  # seconds one select waits at most (weeks overflow epoll and poll)


@dataclass(frozen=True)
class Ran:
    """How a program ended: its output (at most `max_bytes` and a little, unless `over`),
    its exit code, and whether it was stopped for its timeout or its output."""

    out: bytes
    err: bytes
    code: int
    timed_out: bool
    over: bool


def run(proc: subprocess.Popen[bytes], limit: float, max_bytes: int) -> Ran:
    """Read `proc`'s output until it ends, `limit` seconds pass or the output goes over
    `max_bytes`; in the last two cases stop its process group, read for a moment what is
    left (after a timeout), and close the pipes, which a descendant that left the group
    may still hold."""
    output = _Output([p for p in (proc.stdout, proc.stderr) if p is not None], max_bytes)
    ended = False
    try:
        deadline = time.monotonic() + limit
        ended = output.read_until(deadline) and _exits_by(proc, deadline)
        if not ended:
            _stop(proc)
            if not output.over:  # timed out: what it wrote before it was stopped
                output.read_until(time.monotonic() + _GRACE)
    except BaseException:  # interrupted: the program does not outlive the call
        _stop(proc)
        raise
    finally:
        output.close()
        proc.wait()
    out, err = output.data()
    return Ran(out, err, proc.returncode, not ended and not output.over, output.over)


def _exits_by(proc: subprocess.Popen[bytes], deadline: float) -> bool:
    """Whether `proc` exits by `deadline` (its output may end before it does)."""
    try:
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return False
    return True


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Kill `proc`'s process group, its children too. The group is named by `proc`'s
    pid, which names no other process's group while `proc` is not reaped (after that,
    it is not killed)."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):  # the group has ended
            os.killpg(proc.pid, signal.SIGKILL)


class _Output:
    """A program's stdout and stderr, read together as they come, up to a size limit."""

    def __init__(self, pipes: Sequence[IO[bytes]], max_bytes: int) -> None:
        self._pipes = pipes
        self._data = {pipe.fileno(): bytearray() for pipe in pipes}
        self._selector = selectors.DefaultSelector()
        for fd in self._data:
            self._selector.register(fd, selectors.EVENT_READ)
        self._max_bytes = max_bytes
        self._size = 0
        self.over = False  # more than max_bytes came

    def read_until(self, deadline: float) -> bool:
        """Read until both pipes end (True), or `deadline` passes or the output goes over
        the limit (False, and `over` set)."""
        while self._selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            for key, _ in self._selector.select(min(left, _LONGEST_WAIT)):
                # At most one byte past the limit is read: that byte says it is over.
                chunk = os.read(key.fd, min(_CHUNK, self._max_bytes + 1 - self._size))
                if not chunk:
                    self._selector.unregister(key.fd)
                    continue
                self._data[key.fd].extend(chunk)
                self._size += len(chunk)
                if self._size > self._max_bytes:
                    self.over = True
                    return False
        return True

    def data(self) -> list[bytes]:
        """What came on each pipe, in the order given."""
        return [bytes(data) for data in self._data.values()]

    def close(self) -> None:
        self._selector.close()
        for pipe in self._pipes:
            pipe.close()
