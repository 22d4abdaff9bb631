"""Shell and what it makes of a command: the adapter, which checks a command, runs it
and records it (`adapter`); which programs a model may run and what a command is, a
Claim, a keyed read or an Action (`programs`); the options by which a program starts
another (`launchers`); running a program to its end, its timeout or its output limit
(`process`); the sandbox a command runs in (`sandbox`)."""

from .adapter import DEFAULT_ENV, DEFAULT_TIMEOUT, Shell
from .programs import RUNNERS
from .sandbox import NoSandbox

__all__ = ["DEFAULT_ENV", "DEFAULT_TIMEOUT", "RUNNERS", "NoSandbox", "Shell"]
