"""The token-savings benchmark, as a script: the same as `addressable bench`.

    python benchmarks/token_savings.py                       # the bundled scenario
    python benchmarks/token_savings.py --trigger 16000 --out benchmarks/latest-16k
    python benchmarks/token_savings.py --trace sessions.jsonl --out DIR --plot out.png

The engine lives in the package (`addressable._bench`), so that `addressable bench`
works from a plain install; the latest outputs are kept beside this script.
"""

from __future__ import annotations

import sys

from addressable._cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
