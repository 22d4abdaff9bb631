"""What adapters report for the state document, through one declared interface.

A tool call's record carries, in `Record.meta`, what the state document needs to know of
it, under these keys: the library below the adapters reads them and never needs to know
which tool family made the record.
"""

from __future__ import annotations


class Report:
    """The keys of `Record.meta` through which an adapter reports what a call did."""

    # str: a query this call ran, as the state document lists it ("text (backend)")
    QUERY = "query_run"
    # {"path": str, "rev": str}: what a change wrote, at which revision
    ARTIFACT = "artifact"
    # str: the id of the Action this read verifies
    VERIFIES = "verifies"
    # str: a marker a side effect wrote into what it changed, so a later read can
    # tell whether it was applied
    MARKER = "marker"
    # int: how a command ended, shown first in its stub's gist
    EXIT_CODE = "exit_code"
    # [str]: the arguments that carry written content (a file's text, a request's body),
    # left out where an Action's operation is summarised
    WRITTEN = "written"
