"""The package passes `mypy --strict`, with the project's own settings: a test, so that
it runs beside the others rather than before them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import ROOT


@pytest.mark.xdist_group("mypy")  # with the docs' check, which reads the same cache
def test_the_package_passes_mypy_strict() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "addressable", "adapters"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("Success: no issues found in ")
