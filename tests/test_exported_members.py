"""The public API is one sorted __all__, and it stays in step with what is exported."""

from __future__ import annotations

import subprocess
import sys

import addressable as ad


def test_all_lists_every_public_name_once_and_sorted() -> None:
    public = {name for name in dir(ad) if not name.startswith("_")}
    modules = {"ids", "adapters"}  # public submodules, reached as addressable.ids etc.
    assert set(ad.__all__) == public - modules
    assert ad.__all__ == sorted(ad.__all__)
    assert len(ad.__all__) == len(set(ad.__all__))


def test_every_exported_error_derives_from_the_root() -> None:
    errors = [getattr(ad, n) for n in ad.__all__ if isinstance(getattr(ad, n), type)]
    errors = [e for e in errors if issubclass(e, Exception) and not issubclass(e, Warning)]
    assert len(errors) >= 10
    assert all(issubclass(e, ad.AddressableError) for e in errors)


def test_adapters_install_under_addressable_and_not_at_top_level(tmp_path: object) -> None:
    # From a directory outside the checkout, `adapters` must not resolve to this project.
    code = (
        "import importlib.util, addressable.adapters as a; "
        "print(a.__name__); print(importlib.util.find_spec('adapters'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=str(tmp_path), capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[0] == "addressable.adapters"
    assert out[1] == "None"
