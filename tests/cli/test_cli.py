"""The `addressable` command, run in-process through `main` and once as `python -m`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import addressable as ad
from addressable.cli import main
from addressable.cli.listing import cells
from tests import helpers
from tests.helpers import FakeClock
from tests.helpers.httpserver import LocalServer, Page


@pytest.fixture
def filled(tmp_path: Path, clock: FakeClock) -> tuple[str, dict[str, ad.Result]]:
    path = str(tmp_path / "store")
    with ad.DiskStore(path) as store:
        kit = ad.Toolkit(store, session="one", clock=clock)
        fetch = kit.tool(
            lambda url: f"<p>{url}</p>",
            name="page",
            determinism="deterministic",
            key=lambda url: url,
        )
        results = {"a": fetch("https://x/a")}
        clock.advance(hours=2)
        results["bin"] = kit.record(
            "files",
            {"path": "logo.png"},
            b"\x89PNG\x00\xff",
            determinism="deterministic",
            media_type="image/png",
        )
        clock.advance(minutes=1)
        other = ad.Toolkit(store, session="two", clock=clock)
        results["search"] = other.tool(lambda q: f"hits {q}", name="search")("q")
    return path, results


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_with_json_a_failure_is_one_json_document_too(
    filled: tuple[str, dict[str, ad.Result]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = filled
    missing = str(tmp_path / "nowhere")
    for args, code in (
        (["ls", "--store", missing], 5),
        (["replay", "0123456789abcdef", "--store", path], 3),
        (["gc", "--max-age", "0s", "--store", path], 2),  # a usage error
    ):
        try:
            got, out, err = run(capsys, *args, "--json")
        except SystemExit as exc:  # argparse's way out, as the command's exit code
            (got, (out, err)) = exc.code, capsys.readouterr()
        shown = json.loads(out)
        assert got == code and shown["exit"] == code, (args, out, err)
        assert err == f"addressable: error: {shown['error']}\n"


def test_ls_tells_apart_keys_that_share_a_long_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # a terminal wide enough for a line a record
    path = str(tmp_path / "store")
    base = "http://127.0.0.1:8765/docs/library/reference/"
    with ad.DiskStore(path) as store:
        kit = ad.Toolkit(store)
        kit.record("fetch", {"n": 0}, b"x", determinism="deterministic", key=base + "only.html")
        code, out, _ = run(capsys, "ls", "--store", path)
        assert code == 0 and out.rstrip().endswith("\n1 record")
        for n in (1, 2):
            key = base + "deep/" * 8 + f"page-{n}.html"  # longer than the column keeps
            kit.record("fetch", {"n": n}, b"x", determinism="deterministic", key=key)
    code, out, _ = run(capsys, "ls", "--store", path)
    assert "page-1.html" in out and "page-2.html" in out and "http://127.0.0.1:8765/" in out
    assert out.rstrip().endswith("3 records")


@pytest.mark.parametrize("columns", [None, 120, 100])
def test_ls_folds_a_long_key_within_the_width_and_keeps_a_line_a_record_in_a_pipe(
    columns: int | None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)  # and stdout is no terminal
    else:
        monkeypatch.setenv("COLUMNS", str(columns))
    path = str(tmp_path / "store")
    key = "http://127.0.0.1:8765/文書/" + "deep/" * 3 + "page.html"
    with ad.DiskStore(path) as store:
        ad.Toolkit(store).record("fetch", {}, b"x", determinism="deterministic", key=key)
    code, out, _ = run(capsys, "ls", "--store", path)
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("id") and "key or args" in lines[0]
    start = lines[0].index("key or args")
    record = lines[1:-1]  # the record's lines, before the count
    assert lines[-1] == "1 record"
    pieces = [line[start:].split("  ")[0] for line in record]
    assert "".join(pieces) == key
    if columns is None:
        assert len(record) == 1
    else:
        assert len(record) > 1 and all(cells(line) <= columns for line in lines)


def test_ls_with_filters(
    filled: tuple[str, dict[str, ad.Result]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, res = filled
    code, out, _ = run(capsys, "ls", "--store", path, "--json")
    assert code == 0
    assert [r["id"] for r in json.loads(out)] == [res["a"].id, res["bin"].id, res["search"].id]
    _, out, _ = run(capsys, "ls", "--store", path, "--json", "--tool", "page")
    assert [r["id"] for r in json.loads(out)] == [res["a"].id]
    _, out, _ = run(capsys, "ls", "--store", path, "--json", "--session", "two")
    assert [r["id"] for r in json.loads(out)] == [res["search"].id]
    _, out, _ = run(capsys, "ls", "--store", path, "--json", "--key", "https://x/a")
    assert [r["id"] for r in json.loads(out)] == [res["a"].id]
    _, out, _ = run(capsys, "ls", "--store", path, "--json", "--since", "2026-03-11T10:00")
    assert [r["id"] for r in json.loads(out)] == [res["bin"].id, res["search"].id]
    _, out, _ = run(capsys, "ls", "--store", path, "--json", "--limit", "1")
    assert [r["id"] for r in json.loads(out)] == [res["search"].id]
    code, out, _ = run(capsys, "ls", "--store", path)
    assert code == 0 and res["a"].id in out and "3 records" in out


def test_show_and_raw(
    filled: tuple[str, dict[str, ad.Result]], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path, res = filled
    assert main(["show", res["bin"].id[:7], "--store", path, "--raw"]) == 0
    assert capsysbinary.readouterr().out == b"\x89PNG\x00\xff"
    assert main(["show", res["bin"].id, "--store", path]) == 0
    out = capsysbinary.readouterr().out.decode()
    assert "image/png" in out and "6 bytes of binary content: use --raw" in out
    assert main(["show", res["a"].id, "--store", path, "--json"]) == 0
    shown = json.loads(capsysbinary.readouterr().out)
    assert shown["content"] == "<p>https://x/a</p>"
    assert shown["record"]["key"] == "https://x/a" and shown["pinned"] is False


def test_replay_writes_exact_bytes(
    filled: tuple[str, dict[str, ad.Result]], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path, res = filled
    assert main(["replay", res["bin"].id, "--store", path]) == 0
    assert capsysbinary.readouterr().out == b"\x89PNG\x00\xff"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        pytest.param(["replay", "nothex"], 2, "is not a result id", id="malformed"),
        pytest.param(["replay", "abc"], 2, "too short", id="short"),
        pytest.param(["show", "0123456789abcdef"], 3, "no result with id", id="unknown"),
        pytest.param(["replay", "{search}", "--verify"], 2, "nondeterministic", id="refused"),
        pytest.param(
            ["replay", "{a}", "--verify"], 2, "only public fetches and shell", id="unregistered"
        ),
        pytest.param(["import", "/nonexistent/bundle"], 5, "no bundle file", id="no-bundle"),
    ],
)
def test_errors_and_exit_codes(
    filled: tuple[str, dict[str, ad.Result]],
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    code: int,
    message: str,
) -> None:
    path, res = filled
    args = [a.format(**{k: v.id for k, v in res.items()}) for a in args]
    got, out, err = run(capsys, *args, "--store", path)
    assert got == code
    assert err.startswith("addressable: error: ") and message in err
    assert "verify=" not in err and "kit.tool" not in err  # the command line's words
    assert out == ""


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["gc", "--max-age", "soon"])
    assert info.value.code == 2
    assert "is not a duration" in capsys.readouterr().err


def test_help_documents_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for line in (
        "0  success",
        "1  verify found damage",
        "3  no result with that id",
        "4  a payload no longer matches",
        "ADDRESSABLE_HOME",
    ):
        assert line in out


def test_verify_stats_gc_pin(
    filled: tuple[str, dict[str, ad.Result]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, res = filled
    code, out, _ = run(capsys, "verify", "--store", path, "--json")
    assert code == 0 and json.loads(out)["ok"] is True
    code, out, _ = run(capsys, "stats", "--store", path, "--json")
    stats = json.loads(out)
    assert (stats["records"], stats["sessions"]) == (3, 2)
    assert stats["by_tool"] == {"files": 1, "page": 1, "search": 1}
    assert run(capsys, "pin", res["a"].id[:8], "--store", path)[0] == 0
    code, out, _ = run(capsys, "gc", "--store", path, "--max-age", "1s", "--json")
    report = json.loads(out)
    assert code == 0
    assert sorted(report["removed_records"]) == sorted([res["bin"].id, res["search"].id])
    assert report["kept_pinned"] == 1
    code, _, err = run(capsys, "show", res["search"].id, "--store", path)
    assert code == 3 and "expired" in err


def test_a_refused_import_leaves_no_store_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"not": "a bundle"}\n')
    target = tmp_path / "new" / "store"
    code, _, err = run(capsys, "import", str(bad), "--store", str(target))
    assert code == 5 and "not an addressable bundle" in err
    code, _, err = run(capsys, "import", str(tmp_path / "missing.jsonl"), "--store", str(target))
    assert code == 5 and "no bundle file" in err
    assert not (tmp_path / "new").exists()  # the folders it made, the outer one too
    # A folder that was there stays, and so does a store that was there.
    kept = tmp_path / "kept"
    kept.mkdir()
    assert run(capsys, "import", str(bad), "--store", str(kept))[0] == 5
    assert kept.is_dir()


def test_export_import_export_gives_the_same_bytes(
    filled: tuple[str, dict[str, ad.Result]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, res = filled
    with ad.DiskStore(path) as store:
        store.pin(res["a"].id)
        again = ad.Toolkit(store, session="three").tool(
            lambda url: f"<p>{url}</p>",
            name="page",
            determinism="deterministic",
            key=lambda url: url,
        )("https://x/a")
        assert again.id == res["a"].id
        ad.Toolkit(store).tokens(res["a"].id)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    assert run(capsys, "export", "--store", path, "-o", str(first))[0] == 0
    empty = str(tmp_path / "empty")
    code, out, _ = run(capsys, "import", str(first), "--store", empty, "--json")
    assert code == 0 and json.loads(out) == {"records": 3, "blobs": 3, "skipped": 0}
    assert run(capsys, "export", "--store", empty, "-o", str(second))[0] == 0
    assert first.read_bytes() == second.read_bytes()
    with ad.DiskStore(empty) as store:
        assert store.is_pinned(res["a"].id)
        assert len(store.observations(res["a"].id)) == 2
    # Importing again adds nothing, and says so.
    code, out, _ = run(capsys, "import", str(first), "--store", empty, "--json")
    assert json.loads(out) == {"records": 0, "blobs": 0, "skipped": 3}
    code, out, _ = run(capsys, "import", str(first), "--store", empty)
    assert out.startswith("imported 0 records and 0 payloads; 3 records")


def test_python_dash_m_and_console_script(filled: tuple[str, dict[str, ad.Result]]) -> None:
    path, res = filled
    proc = subprocess.run(
        [sys.executable, "-m", "addressable", "replay", res["a"].id, "--store", path],
        capture_output=True,
        check=True,
    )
    assert proc.stdout == b"<p>https://x/a</p>"
    script = Path(sys.executable).with_name("addressable")
    proc = subprocess.run(
        [str(script), "stats", "--store", path, "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(proc.stdout)["records"] == 3


def test_replay_verify_re_runs_a_public_fetch(
    tmp_path: Path, server: LocalServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from addressable.adapters import Fetch

    path = str(tmp_path / "store")
    server.pages["/page"] = Page(b"<p>v1</p>")
    with ad.DiskStore(path) as store:
        first = Fetch(ad.Toolkit(store))(server.url("/page"))
    code, out, _ = run(capsys, "replay", first.id, "--verify", "--json", "--store", path)
    assert code == 0 and json.loads(out)["changed"] is False
    server.pages["/page"] = Page(b"<p>v2</p>")
    code, out, _ = run(capsys, "replay", first.id, "--verify", "--json", "--store", path)
    shown = json.loads(out)
    assert code == 0 and shown["changed"] is True and shown["content"] == "<p>v2</p>"


def test_a_fetch_that_came_in_a_bundle_is_run_again_only_when_asked_and_never_inward(
    tmp_path: Path, server: LocalServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from addressable.adapters import Fetch

    made, bundle, path = str(tmp_path / "made"), tmp_path / "b.jsonl", str(tmp_path / "here")
    server.pages["/admin"] = Page(b"<p>inside</p>")
    with ad.DiskStore(made) as store:
        first = Fetch(ad.Toolkit(store))(server.url("/admin"))
    assert run(capsys, "export", "--store", made, "-o", str(bundle))[0] == 0
    assert run(capsys, "import", "--store", path, str(bundle))[0] == 0
    seen = len(server.requests)
    code, _, err = run(capsys, "replay", first.id, "--verify", "--store", path)
    assert code == 2 and "came in a bundle" in err and "--run" in err
    code, _, err = run(capsys, "replay", first.id, "--verify", "--run", "--store", path)
    assert code == 2 and "an address of this machine or its network" in err
    assert len(server.requests) == seen  # nothing was sent
    assert len(err.strip().splitlines()) == 1
    # where it was recorded, the fetch is the user's own: re-run as before
    code, _, _ = run(capsys, "replay", first.id, "--verify", "--store", made)
    assert code == 0 and len(server.requests) == seen + 1


def test_replay_verify_shows_a_shell_command_and_runs_it_only_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A record's command is data: a model chose it, and a bundle may come from anyone.
    from addressable.adapters import Shell

    path, work = str(tmp_path / "store"), tmp_path / "work"
    work.mkdir()
    with ad.DiskStore(path) as store:
        made = Shell(ad.Toolkit(store), cwd=work, pure=["touch"])("touch planted")
    assert made.record.determinism is ad.Determinism.DETERMINISTIC
    (work / "planted").unlink()
    code, _, err = run(capsys, "replay", made.id, "--verify", "--store", path)
    assert code == 2 and "'touch planted'" in err and "--run" in err
    assert not (work / "planted").exists()
    code, _, err = run(capsys, "replay", made.id, "--verify", "--run", "--store", path)
    assert code == 0 and (work / "planted").exists(), err
    # A long command is not shown cut: the whole of it is one `show` away.
    long = "touch planted" + " ok" * 200 + "; rm -rf ~"
    with ad.DiskStore(path) as store:
        hidden = ad.Toolkit(store).record(
            "shell",
            {"command": long, "cwd": str(work), "shell": True},
            b"",
            determinism="deterministic",
        )
    code, _, err = run(capsys, "replay", hidden.id, "--verify", "--store", path)
    assert code == 2 and f"of {len(long):,} characters" in err and "through /bin/sh" in err
    assert f"addressable show {hidden.id}" in err and "rm -rf" not in err


@pytest.mark.parametrize(
    "order",
    [
        pytest.param(["--store", "{path}", "--json", "ls"], id="before"),
        pytest.param(["ls", "--store", "{path}", "--json"], id="after"),
        pytest.param(["--json", "ls", "--store", "{path}"], id="json-before"),
        pytest.param(["--store", "{path}", "ls", "--json"], id="store-before"),
    ],
)
def test_global_options_go_before_or_after_the_command(
    filled: tuple[str, dict[str, ad.Result]], capsys: pytest.CaptureFixture[str], order: list[str]
) -> None:
    path, res = filled
    code, out, err = run(capsys, *[a.format(path=path) for a in order])
    assert (code, err) == (0, "")
    assert [r["id"] for r in json.loads(out)] == [res["a"].id, res["bin"].id, res["search"].id]


def test_the_store_given_after_the_command_wins(
    filled: tuple[str, dict[str, ad.Result]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path, _ = filled
    code, _, err = run(capsys, "--store", path, "stats", "--store", str(tmp_path / "none"))
    assert code == 5 and "no store at" in err
    code, out, _ = run(capsys, "--store", str(tmp_path / "none"), "stats", "--store", path)
    assert code == 0 and "records" in out


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["ls"], id="ls"),
        pytest.param(["show", "{a}"], id="show"),
        pytest.param(["replay", "{a}"], id="replay"),
        pytest.param(["verify"], id="verify"),
        pytest.param(["stats"], id="stats"),
        pytest.param(["gc"], id="gc"),
        pytest.param(["pin", "{a}"], id="pin"),
        pytest.param(["unpin", "{a}"], id="unpin"),
        pytest.param(["export", "-o", "{tmp}/bundle.jsonl"], id="export"),
    ],
)
@pytest.mark.parametrize("where", ["before", "after"])
def test_every_json_is_one_json_document_on_stdout(
    filled: tuple[str, dict[str, ad.Result]],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: list[str],
    where: str,
) -> None:
    path, res = filled
    args = [a.format(a=res["a"].id, tmp=tmp_path) for a in args]
    argv = ["--json", *args] if where == "before" else [*args, "--json"]
    code, out, _ = run(capsys, "--store", path, *argv)
    assert code == 0
    json.loads(out)  # one document, nothing else


def test_pin_and_unpin_say_so_in_json(
    filled: tuple[str, dict[str, ad.Result]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, res = filled
    rid = res["a"].id
    code, out, _ = run(capsys, "--json", "--store", path, "pin", rid[:8])
    assert (code, json.loads(out)) == (0, {"id": rid, "pinned": True})
    code, out, _ = run(capsys, "unpin", rid[:8], "--store", path, "--json")
    assert (code, json.loads(out)) == (0, {"id": rid, "pinned": False})


@pytest.mark.parametrize("where", ["before", "after"])
def test_bench_json_prints_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    trace = helpers.FIXTURES / "sessions.jsonl"
    options = ["--trace", str(trace), "--trigger", "4000", "--out", str(tmp_path)]
    argv = ["--json", "bench", *options] if where == "before" else ["bench", *options, "--json"]
    code, out, _ = run(capsys, *argv)
    assert code == 0
    assert json.loads(out) == json.loads((tmp_path / "report.json").read_text())


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("1000", 1000),
        ("1KB", 1000),
        ("1.5 kb", 1500),
        ("500MB", 500_000_000),
        ("1GB", 10**9),
        ("1KiB", 1024),
        ("2MiB", 2 * 1024**2),
        ("1GiB", 1024**3),
    ],
)
def test_sizes_parse_kb_as_1000_and_kib_as_1024(text: str, size: int) -> None:
    from addressable.cli.values import size as parse_size

    assert parse_size(text) == size


@pytest.mark.parametrize(
    ("size", "shown"),
    [
        (999, "999 B"),
        (1000, "1.0 KB"),
        (1500, "1.5 KB"),
        (2_500_000, "2.5 MB"),
        (3 * 10**9, "3.0 GB"),
        (4 * 10**12, "4.0 TB"),
    ],
)
def test_sizes_print_in_the_units_they_parse_in(size: int, shown: str) -> None:
    from addressable.cli.output import size_text
    from addressable.cli.values import size as parse_size

    assert size_text(size) == shown
    assert parse_size(shown.replace(" ", "")) == size  # what is printed reads back the same


def test_stats_shows_sizes_in_kb_of_1000(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(tmp_path / "store")
    with ad.DiskStore(path) as store:
        ad.Toolkit(store).record("t", {}, b"x" * 1_000_000, determinism="deterministic")
    code, out, _ = run(capsys, "stats", "--store", path)
    assert code == 0 and "1 (1.0 MB)" in out  # not 976.6 KB
