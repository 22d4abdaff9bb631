"""The token-savings benchmark, as a script: the same as `addressable bench`.

    python benchmarks/token_savings.py                       # the bundled scenario
    python benchmarks/token_savings.py --trigger 16000 --out benchmarks/latest-16k
    python benchmarks/token_savings.py --trace sessions.jsonl --out DIR --plot out.png

The engine lives in the package (`addressable.bench`), so that `addressable bench`
works from a plain install; the latest outputs are kept beside this script.
"""

from __future__ import annotations

import runpy
import sys

if __name__ == "__main__":
    sys.argv[1:1] = ["bench"]
    runpy.run_module("addressable", run_name="__main__", alter_sys=True)  # python -m addressable
