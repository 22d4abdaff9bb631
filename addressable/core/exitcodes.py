"""The exit codes of the `addressable` command, in one place for every face of it (the
store commands, the benchmark, the MCP commands). The CLI's help lists what each means."""

EXIT_OK = 0
EXIT_DAMAGE = 1  # verify found damage
EXIT_USAGE = 2  # bad usage: an option, a value, an id
EXIT_NOT_FOUND = 3  # no result with that id, or it expired
EXIT_INTEGRITY = 4  # a payload no longer matches its hash
EXIT_FAILURE = 5  # no store, or the store, a bundle, a trace or a re-run failed
EXIT_TOOL_ERROR = 6  # replay: the result is a tool's error (its bytes are still written)
