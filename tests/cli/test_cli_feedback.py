"""What the `addressable` command says besides its output: that a replayed result was a
tool's error, what a verifying replay found, and how to get the rest of a long payload."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import addressable as ad
from addressable.cli import EPILOG, main
from addressable.core.errors import EXIT_TOOL_ERROR
from tests.helpers.httpserver import LocalServer, Page


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def failed(tmp_path: Path) -> tuple[str, str]:
    path = str(tmp_path / "store")
    with ad.DiskStore(path) as store:
        result = ad.Toolkit(store).record(
            "lookup",
            {"q": "x"},
            b"Traceback: no such thing",
            determinism="deterministic",
            status=ad.Status.ERROR,
            error="LookupError: no such thing",
        )
    return path, result.id


def test_replaying_an_error_says_so_and_exits_with_its_own_code(
    failed: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    path, rid = failed
    code, out, err = run(capsys, "replay", rid, "--store", path)
    assert code == EXIT_TOOL_ERROR == 6
    assert out == "Traceback: no such thing"  # the stored bytes, still exact
    assert err == (
        f"addressable: result {rid} is a tool error: LookupError: no such thing (exit 6)\n"
    )
    code, out, err = run(capsys, "replay", rid, "--store", path, "--json")
    shown = json.loads(out)
    assert code == 6 and shown["status"] == "error"
    assert shown["error"] == "LookupError: no such thing"
    assert "6  replay: the result is a tool's error" in EPILOG


def test_replaying_a_result_that_was_fine_exits_0_and_says_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(tmp_path / "store")
    with ad.DiskStore(path) as store:
        rid = (
            ad.Toolkit(store).record("lookup", {"q": "y"}, b"fine", determinism="deterministic").id
        )
    code, out, err = run(capsys, "replay", rid, "--store", path)
    assert (code, out, err) == (0, "fine", "")
    code, out, _ = run(capsys, "replay", rid, "--store", path, "--json")
    assert code == 0 and json.loads(out)["status"] == "ok"


def test_a_verifying_replay_says_whether_it_changed_and_the_new_id(
    tmp_path: Path, server: LocalServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from addressable.adapters import Fetch

    path = str(tmp_path / "store")
    server.pages["/page"] = Page(b"<p>v1</p>")
    with ad.DiskStore(path) as store:
        first = Fetch(ad.Toolkit(store))(server.url("/page"))
    code, out, err = run(capsys, "replay", first.id, "--verify", "--store", path)
    assert code == 0 and out == "<p>v1</p>"
    assert err == (
        f"addressable: unchanged: the re-run gave the same content, id {first.id} "
        f"(was {first.id})\n"
    )
    server.pages["/page"] = Page(b"<p>v2</p>")
    code, out, err = run(capsys, "replay", first.id, "--verify", "--store", path)
    with ad.DiskStore(path) as store:
        (newest,) = store.records(newest_first=True, limit=1)
    assert code == 0 and out == "<p>v2</p>" and newest.id != first.id
    assert err == (
        f"addressable: changed: the re-run gave new content, new id {newest.id} (was {first.id})\n"
    )
    code, out, err = run(capsys, "replay", first.id, "--verify", "--json", "--store", path)
    shown = json.loads(out)
    assert shown["changed"] is True and shown["verified"] is True  # v2 against v1
    assert shown["new_id"] == newest.id and shown["previous_id"] == first.id


def long_record(path: str, payload: bytes) -> str:
    with ad.DiskStore(path) as store:
        kit = ad.Toolkit(store)
        return kit.record("dump", {"n": len(payload)}, payload, determinism="deterministic").id


def test_show_prints_the_head_of_many_lines_and_says_how_to_get_the_rest(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = str(tmp_path / "store")
    payload = "".join(f"line {n}\n" for n in range(5000)).encode()
    rid = long_record(path, payload)
    assert main(["show", rid, "--store", path]) == 0
    captured = capsysbinary.readouterr()
    content = captured.out.split("┘\n".encode(), 1)[1]
    assert content == "".join(f"line {n}\n" for n in range(100)).encode()
    err = captured.err.decode()
    assert err.count("\n") == 1 and "showed the first 100 lines" in err
    assert f"addressable show {rid} --raw" in err and f"addressable replay {rid}" in err
    assert main(["show", rid, "--store", path, "--raw"]) == 0
    assert capsysbinary.readouterr().out == payload  # --raw stays exact


def test_show_prints_at_most_64_kb_of_long_lines(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = str(tmp_path / "store")
    payload = ("é" * 50_000 + "\n").encode() * 8  # 8 lines of 100 KB
    rid = long_record(path, payload)
    assert main(["show", rid, "--store", path]) == 0
    captured = capsysbinary.readouterr()
    content = captured.out.split("┘\n".encode(), 1)[1]
    assert 60_000 < len(content) <= 64_001 and content.endswith(b"\n")
    assert payload.startswith(content[:-1])  # a prefix, cut between characters
    assert "--raw" in captured.err.decode()


def test_show_prints_a_short_payload_whole_and_says_nothing(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = str(tmp_path / "store")
    payload = "".join(f"line {n}\n" for n in range(100)).encode()
    rid = long_record(path, payload)
    assert main(["show", rid, "--store", path]) == 0
    captured = capsysbinary.readouterr()
    assert captured.out.split("┘\n".encode(), 1)[1] == payload and captured.err == b""
