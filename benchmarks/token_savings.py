"""The token-savings benchmark, as a script: the same as `addressable bench`.

    python benchmarks/token_savings.py                       # the bundled scenario
    python benchmarks/token_savings.py --trigger 16000 --out benchmarks/latest-16k
    python benchmarks/token_savings.py --trace sessions.jsonl --out DIR --plot out.png

The engine lives in the package (`addressable._bench`), so that `addressable bench`
works from a plain install; the latest outputs are kept beside this script.
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points

if __name__ == "__main__":
    (command,) = entry_points(group="console_scripts", name="addressable")  # as installed
    sys.exit(command.load()(["bench", *sys.argv[1:]]))
