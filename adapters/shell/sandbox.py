"""The sandbox a Shell command runs in: on Linux, bubblewrap (`bwrap`).

Whatever a command's options say, the operating system holds it to this: it sees the
system's programs and libraries read-only, the working folder read-write (but for the
repository's config and hooks and the store, read-only or hidden), a private `/tmp`,
no home folder, no network unless asked, no other process, and it ends with the call,
daemons included (a PID namespace of its own, which dies with `bwrap`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import select
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import addressable as ad

# What a program needs to start: the system's programs, libraries and settings. The
# home folder, /root, /home, /var, /srv, /mnt and /media are not among them.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
# Secrets of the system under those folders: not readable (a process that is root outside
# is root inside, and could read them).
SYSTEM_SECRETS = (
    *("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers"),
    *("/etc/sudoers.d", "/etc/ssh", "/etc/ssl/private"),
)
# Inside a repository's .git, what makes the next git run code: read-only in the sandbox.
GIT_GUARDED = ("config", "config.worktree", "hooks", "info")
_PROBE_TIMEOUT = 10.0  # seconds
_TEARDOWN = 5.0  # seconds the system may take to end what was left in a sandbox


class NoSandbox(ad.AddressableError):
    """Shell cannot make a sandbox on this machine (`why`); nothing was run."""

    def __init__(self, why: str) -> None:
        self.why = why
        super().__init__(
            f"Shell: {why}; pass sandbox=False to run commands with the rights of this process"
        )


@functools.cache
def bwrap() -> str:
    """The path of a `bwrap` that can make the namespaces a sandbox needs; `NoSandbox`,
    one line, when there is none or the system refuses it (user namespaces off)."""
    if not sys.platform.startswith("linux"):
        raise NoSandbox(
            "no sandbox is made on this system (bubblewrap runs on Linux; for macOS see "
            "docs/security.md)"
        )
    found = shutil.which("bwrap")
    if found is None:
        raise NoSandbox(
            "bwrap is not installed (Debian and Ubuntu: apt install bubblewrap), so no "
            "sandbox can be made"
        )
    probe = [found, "--unshare-all", "--die-with-parent", *_system(), "--", "true"]
    try:
        proc = subprocess.run(probe, capture_output=True, timeout=_PROBE_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        why = str(exc)
    else:
        if proc.returncode == 0:
            return found
        lines = proc.stderr.decode(errors="replace").strip().splitlines()
        why = lines[-1] if lines else f"exit {proc.returncode}"
    raise NoSandbox(f"bwrap cannot make a sandbox here ({why[:200]}; user namespaces may be off)")


def _system(read_only: Iterable[Path] = ()) -> list[str]:
    """Options that mount the system's folders (and `read_only`) read-only, with a
    private /tmp, /dev and /proc."""
    options: list[str] = []
    for folder in SYSTEM:
        path = Path(folder)
        if path.is_symlink():  # /bin -> usr/bin on a merged /usr
            options += ["--symlink", str(path.readlink()), folder]
        elif path.is_dir():
            options += ["--ro-bind", folder, folder]
    for secret in SYSTEM_SECRETS:
        path = Path(secret)
        if path.is_dir() and not path.is_symlink():
            options += ["--tmpfs", secret, "--remount-ro", secret]
        elif path.is_file() and not path.is_symlink():
            options += ["--ro-bind", "/dev/null", secret]
    options += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for path in read_only:  # after /tmp's own, which would hide one under /tmp
        options += ["--ro-bind", str(path), str(path)]
    return options


def enclosing_repository(cwd: Path) -> Path | None:
    """The root of the git repository `cwd` lies below (not at), if any: a command in
    a subfolder sees it read-only, so that git finds its repository there."""
    for folder in cwd.parents:
        if (folder / ".git").exists():
            # Not one that holds the home folder (a repository of dotfiles): all of it
            # would be readable.
            return None if refused_folder(folder) else folder
    return None


def refused_folder(cwd: Path) -> str | None:
    """Why `cwd` cannot be a sandbox's working folder, which it writes in: `/`, the
    home folder, or a folder that holds the system's folders or the home folder."""
    home = Path.home().resolve()
    if cwd == Path("/") or home.is_relative_to(cwd):
        return "it holds the home folder" if cwd != Path("/") else "it is /"
    for folder in SYSTEM:
        if Path(folder).is_relative_to(cwd) or cwd == Path(folder):
            return f"it is or holds {folder}, which commands may only read"
    return None


def sandboxed(
    argv: Sequence[str],
    cwd: Path,
    *,
    network: bool,
    hidden: Iterable[Path] = (),
    read_only: Iterable[Path] = (),
    info_fd: int | None = None,
) -> list[str]:
    """`argv` run by bwrap in a sandbox whose only writable folder is `cwd` (and a
    private /tmp). `hidden`: folders shown empty and read-only (the store); inside
    `cwd`'s `.git`, what makes the next git run code is read-only. `read_only`: more
    folders the command may read (a Python outside /usr, a toolchain). `info_fd`: where
    bwrap says which process is the sandbox's first (see `Ending`)."""
    options = [bwrap(), "--unshare-all", "--die-with-parent", "--new-session"]
    if info_fd is not None:
        options += ["--info-fd", str(info_fd)]
    if network:
        options.append("--share-net")
    read_only = list(read_only)
    repository = enclosing_repository(cwd)
    if repository is not None:  # git in a subfolder reads the whole repository
        read_only.append(repository)
    options += _system(read_only)
    options += ["--bind", str(cwd), str(cwd)]
    git = (cwd if repository is None else repository) / ".git"
    if git.is_dir() and not git.is_symlink() and git.is_relative_to(cwd):
        for name in GIT_GUARDED:
            guarded = git / name
            if guarded.is_symlink():
                continue  # bwrap would follow it, out of the folder
            if name == "hooks" and not guarded.exists():
                # A hooks folder the command could make would run at the next commit.
                options += ["--tmpfs", str(guarded), "--remount-ro", str(guarded)]
            elif guarded.exists():
                options += ["--ro-bind", str(guarded), str(guarded)]
    mounted = [cwd, *read_only, *(Path(folder) for folder in SYSTEM)]
    for folder in hidden:
        if any(folder.is_relative_to(root) for root in mounted) or cwd.is_relative_to(folder):
            options += ["--tmpfs", str(folder), "--remount-ro", str(folder)]
    return [*options, "--chdir", str(cwd), "--", *argv]


class Ending:
    """The wait for a sandbox's last process. bwrap exits as soon as the command does,
    while the system is still ending the rest of the sandbox (a daemon the command left):
    that takes until the sandbox's first process, which bwrap names on a pipe, is gone.

    `fd` goes to bwrap (`sandboxed(info_fd=...)`, `Popen(pass_fds=...)`); `started()`
    after bwrap starts, `wait()` after it exits, `close()` in any case."""

    def __init__(self) -> None:
        self._read, self.fd = os.pipe()
        self._pidfd: int | None = None

    def started(self, limit: float) -> None:
        """Learn the sandbox's first process from bwrap, within `limit` seconds (bwrap
        says it before the command starts; one that fails first says nothing)."""
        os.close(self.fd)
        self.fd = -1
        said = bytearray()
        while select.select([self._read], [], [], limit)[0]:
            chunk = os.read(self._read, 4096)
            if not chunk:
                break
            said.extend(chunk)
        with contextlib.suppress(ValueError, TypeError, KeyError, OSError):
            # OSError: it has ended already (or pidfds are not there, before Linux 5.3)
            self._pidfd = os.pidfd_open(int(json.loads(said)["child-pid"]))

    def wait(self) -> None:
        """Wait, a few seconds at most, until nothing in the sandbox runs."""
        if self._pidfd is not None:
            select.select([self._pidfd], [], [], _TEARDOWN)

    def close(self) -> None:
        for fd in (self._read, self.fd, self._pidfd):
            if fd is not None and fd >= 0:
                os.close(fd)
        self._read = self.fd = -1
        self._pidfd = None
