"""The wheel holds every module, with `adapters/` installed as `addressable.adapters`, the
encoding files and the license; the sdist holds the license too."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.helpers import ROOT

# Both build in the repository (its build/ and egg-info folders): never at once, under xdist.
pytestmark = pytest.mark.xdist_group("builds-in-the-repository")


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
    # The token encodings ship in the wheel: nothing is downloaded at run time.
    assert {
        "addressable/core/encodings/cl100k_base.tiktoken.gz",
        "addressable/core/encodings/o200k_base.tiktoken.gz",
    } <= names
    (license_file,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    assert zipfile.ZipFile(wheel).read(license_file) == (ROOT / "LICENSE").read_bytes()
    assert not any(n.startswith("adapters/") for n in names)
    metadata = next(n for n in names if n.endswith("METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "Name: addressable-tools" in text
    assert "Provides-Extra: redis" in text and "Requires-Dist: tiktoken" in text
    assert "License-Expression: MIT" in text and "License-File: LICENSE" in text


def test_the_license_is_mit_and_in_the_sdist(tmp_path: Path) -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n\nCopyright (c) 2026 addressable developers\n")
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text
    code = (
        "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout.split()[-1]
    with tarfile.open(tmp_path / out) as sdist:
        names = sdist.getnames()
        (license_file,) = [n for n in names if n.count("/") == 1 and n.endswith("/LICENSE")]
        member = sdist.extractfile(license_file)
        assert member is not None and member.read() == (ROOT / "LICENSE").read_bytes()
        assert any(n.endswith("addressable/core/encodings/o200k_base.tiktoken.gz") for n in names)
