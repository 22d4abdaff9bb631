"""The wheel holds every module, with `adapters/` installed as `addressable.adapters`."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_maps_adapters_under_addressable(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("addressable_tools-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        f"addressable/{p.relative_to(ROOT / 'addressable')}"
        for p in (ROOT / "addressable").rglob("*.py")
    }
    expected |= {
        f"addressable/adapters/{p.relative_to(ROOT / 'adapters')}"
        for p in (ROOT / "adapters").rglob("*.py")
    }
    assert expected <= names
    assert "addressable/py.typed" in names
    assert not any(n.startswith("adapters/") for n in names)
    metadata = next(n for n in names if n.endswith("METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "Name: addressable-tools" in text
    assert "Provides-Extra: tokens" in text and "Provides-Extra: redis" in text
