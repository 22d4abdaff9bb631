"""Which options of which programs start another program, and how (see `_launchers`,
which reads a command's options by these tables)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

# How an option starts another program:
# - "command": the words after it, up to ";", are a command (find -ok, fd -x);
# - "command+": the same, or up to "+" right after "{}" (find -exec);
# - "line": its value is a command line: plain words, checked as a command (tar -I);
# - "program": its value names one program, run without a shell (rg --pre);
# - "refused": its value is run by a shell or reaches a program no check sees;
# - "setting": its value is a setting, `Name=value` or `Name value` (ssh -o), refused
#   when the setting's name is one of `RUNNING_SETTINGS`;
# - "host": its value is jump hosts, which ssh puts in a command line a shell runs.
How = Literal["command", "command+", "line", "program", "refused", "setting", "host"]


@dataclass(frozen=True)
class Spec:
    """How a program reads its options."""

    options: dict[str, How]
    valued: frozenset[str] = frozenset()  # short options that take a value
    clusters: bool = False  # short options bundle (`-xzf`); else whole words only
    dash_values: bool = False  # a value in the next word may start with "-" (getopt)
    whole: bool = False  # find: options are whole words, values skipped, no "--"
    paired: frozenset[str] = frozenset()  # of `valued`, those that take two words
    valued_like: re.Pattern[str] | None = None  # more options that take a value


Check = Callable[[Sequence[str]], None]

# find's tests and actions that take the next word as their value (-fprintf two).
_FIND_VALUED = frozenset(
    {
        "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex",
        "-iregex", "-lname", "-ilname", "-newer", "-anewer", "-cnewer", "-samefile",
        "-user", "-group", "-perm", "-type", "-xtype", "-size", "-links", "-inum", "-uid",
        "-gid", "-atime", "-ctime", "-mtime", "-amin", "-cmin", "-mmin", "-used",
        "-maxdepth", "-mindepth", "-fstype", "-context", "-printf", "-fprintf", "-fprint",
        "-fprint0", "-fls", "-files0-from", "-regextype",
    }
)  # fmt: skip
_FIND = Spec(
    {"-exec": "command+", "-execdir": "command+", "-ok": "command", "-okdir": "command"},
    _FIND_VALUED,
    dash_values=True,
    whole=True,
    paired=frozenset({"-fprintf"}),  # -fprintf FILE FORMAT
    valued_like=re.compile(r"-newer[aBcmt][aBcmt]"),
)
_FD = Spec(
    {"-x": "command", "--exec": "command", "-X": "command", "--exec-batch": "command"},
    frozenset({"-d", "-E", "-t", "-e", "-S", "-o", "-c", "-j", "-C"}),
    clusters=True,
)
_TAR = Spec(
    {
        "--to-command": "refused",
        "--checkpoint-action": "refused",
        "--info-script": "refused",
        "--new-volume-script": "refused",
        "-F": "refused",
        # Run by /bin/sh -c when tar compresses, split by tar when it decompresses.
        "--use-compress-program": "line",
        "-I": "line",
        # Run as a path, given the archive's host and the remote command as arguments.
        "--rsh-command": "refused",
        "--rmt-command": "refused",
    },
    frozenset({"-b", "-C", "-f", "-g", "-H", "-K", "-L", "-N", "-T", "-V", "-X"}),
    clusters=True,
    dash_values=True,
)
_INSTALL = Spec(
    {"--strip-program": "program"}, frozenset({"-g", "-m", "-o", "-S", "-t"}), clusters=True
)
_SPLIT = Spec({"--filter": "line"}, frozenset({"-a", "-b", "-C", "-l", "-n", "-t"}), clusters=True)
# ssh settings that run a local command line or load code: ProxyCommand and the like,
# and those that read more settings (a file the model wrote, or `Match exec`).
RUNNING_SETTINGS = frozenset(
    {
        "proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand",
        "pkcs11provider", "smartcarddevice", "securitykeyprovider", "include", "match",
        "host", "xauthlocation",
    }
)  # fmt: skip


def _ssh(valued: str, **more: How) -> Spec:
    """How ssh, scp and sftp read their options: `-o` a setting, `-F` a settings file
    (refused: it can hold any setting), and `more` of each program's own; `valued`
    are the letters of its other options that take a value."""
    options: dict[str, How] = {"-o": "setting", "-F": "refused"}
    options |= {f"-{letter}": how for letter, how in more.items()}
    return Spec(options, frozenset("-" + letter for letter in valued), clusters=True)


SPECS: dict[str, Spec] = {
    "find": _FIND,
    "fd": _FD,
    "fdfind": _FD,
    "rg": Spec({"--pre": "program", "--hostname-bin": "program"}),
    "tar": _TAR,
    "gtar": _TAR,
    "sort": Spec({"--compress-program": "program"}),
    # rsync splits -e into words itself; the remote shell runs --rsync-path.
    "rsync": Spec(
        {"-e": "line", "--rsh": "line", "--rsync-path": "refused"},
        frozenset({"-B", "-T", "-f", "-M"}),
        clusters=True,
    ),
    # install -s runs the program --strip-program names on each file it installs.
    "install": _INSTALL,
    "ginstall": _INSTALL,
    # split pipes each piece to the command line --filter gives, through $SHELL -c.
    "split": _SPLIT,
    "gsplit": _SPLIT,
    # diff3 and sdiff compare through the program --diff-program names.
    "diff3": Spec({"--diff-program": "program"}, frozenset({"-L"}), clusters=True),
    "sdiff": Spec({"--diff-program": "program"}, frozenset({"-I", "-o", "-w"}), clusters=True),
    # man runs its pager's command line through a shell, and -H a browser; a config
    # file (-C) can name any of the programs it runs.
    "man": Spec(
        {
            "-P": "line",
            "--pager": "line",
            "-H": "refused",
            "--html": "refused",
            "-C": "refused",
            "--config-file": "refused",
        },
        frozenset({"-E", "-L", "-M", "-R", "-S", "-e", "-m", "-p", "-r", "-s"}),
        clusters=True,
    ),
    # Mercurial's --config can set a hook or an alias, which run shell commands.
    "hg": Spec({"--config": "refused", "--config-file": "refused"}),
    # zip runs -TT through system(); it is a two-letter option, found in any cluster.
    "zip": Spec({"-TT": "line", "--unzip-command": "line"}, clusters=True),
    # wget asks the program --use-askpass names for a password; -e runs a wgetrc line,
    # which can name that program too, as can the file --config names.
    "wget": Spec(
        {
            "--use-askpass": "program",
            "-e": "refused",
            "--execute": "refused",
            "--config": "refused",
        },
        frozenset("-" + c for c in "oaiBtOTwQPUlARDIX"),
        clusters=True,
    ),
    # ssh -I loads a PKCS#11 library; scp and sftp run -S's program in ssh's place and
    # -D's as their server; sftp runs a batch file's `!command` lines (-b).
    "ssh": _ssh("BbcDEeiLlmOPpQRSWw", I="refused", J="host"),
    "slogin": _ssh("BbcDEeiLlmOPpQRSWw", I="refused", J="host"),
    "scp": _ssh("cilPX", S="program", D="refused", J="host"),
    "sftp": _ssh("BcilPRsX", S="program", D="refused", b="refused", J="host"),
}
