"""The command line as a careless user or a hostile tool meets it: what tools wrote is
shown as text, bad limits are refused, and read-only commands never create a store."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import tempfile
import termios
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import addressable as ad
from addressable.cli import main
from addressable.store.keys import RECORD
from tests.helpers import FakeClock

# Rich markup, and text that looks like it.
MARKUP = [
    "[/bold]",
    "[bold]never closed",
    "[link=https://evil.example/]click here[/link]",
    "[red]x[/]",
    "[",
    "]",
    "[[/]]",
    "\\[not markup]",
    "[/]",
    ":thumbs_up: :smile:",
    "%s {0} {} </td>",
]
# Terminal control: colours, window title, clearing the screen, C1 CSI, a bidi override.
CONTROL = [
    "\x1b[31mRED\x1b[0m",
    "\x1b]0;PWNED\x07",
    "\x1b[2J\x1b[H",
    "over\rwritten",
    "back\x08space",
    "nul\x00byte",
    "\x9b31m c1 csi",
    "\u202eevil\u202c",
    "del\x7f",
    "line\u2028separator",
]
OTHER = ["tab\there", "new\nline", "x" * 100_000, "wide 中文 text"]

# What must never reach a terminal raw: C0 controls but newline, DEL, C1, bidi controls,
# line and paragraph separators.
RAW_CONTROL = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the command in this process; argparse's exits count as exit codes."""
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def record_text(kit: ad.Toolkit, text: str) -> ad.Result:
    """One record carrying `text` in every field a tool or a model writes."""
    return kit.record(
        text,
        {"q": text},
        text.encode("utf-8"),
        determinism="deterministic",
        key=text,
        status="error",
        error=text,
        meta={"note": text},
    )


@pytest.fixture
def nasty(tmp_path: Path) -> tuple[str, dict[str, str]]:
    """A disk store with one record per nasty string; returns its path and string -> id."""
    path = str(tmp_path / "store")
    with ad.DiskStore(path) as store:
        kit = ad.Toolkit(store, session="[bold]session[/bold]")
        ids = {text: record_text(kit, text).id for text in MARKUP + CONTROL + OTHER}
    return path, ids


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wide console, so that no table cell is wrapped across lines."""
    monkeypatch.setenv("COLUMNS", "500")


# -- 9. text from tools is shown as text -------------------------------------------------


@pytest.mark.usefixtures("wide")
def test_ls_shows_markup_in_tool_names_and_keys_literally(
    nasty: tuple[str, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, ids = nasty
    code, out, err = run(capsys, "ls", "--store", path)
    assert (code, err) == (0, "")
    for text in MARKUP:
        assert out.count(text) >= 2, text  # the tool column and the key column
    assert "👍" not in out and "😄" not in out  # :thumbs_up: is not an emoji code here
    assert f"{len(ids)} records" in out


@pytest.mark.usefixtures("wide")
@pytest.mark.parametrize("text", MARKUP)
def test_show_prints_every_field_literally(
    nasty: tuple[str, dict[str, str]], capsys: pytest.CaptureFixture[str], text: str
) -> None:
    path, ids = nasty
    code, out, err = run(capsys, "show", ids[text], "--store", path)
    assert (code, err) == (0, "")
    table, content = out.split("┘\n", 1)
    # tool, key, error, the session's name, and inside args and meta as JSON
    assert table.count(text) >= 3
    assert "[bold]session[/bold]" in table
    assert "👍" not in out
    assert content == text + "\n"


@pytest.mark.usefixtures("wide")
@pytest.mark.parametrize("command", ["ls", "show"])
def test_control_characters_in_fields_are_shown_escaped(
    nasty: tuple[str, dict[str, str]], capsys: pytest.CaptureFixture[str], command: str
) -> None:
    path, ids = nasty
    for text in CONTROL:
        args = ["ls"] if command == "ls" else ["show", ids[text]]
        code, out, err = run(capsys, *args, "--store", path)
        assert (code, err) == (0, ""), text
        table = out.split("┘\n", 1)[0]  # show's content follows the table
        assert not RAW_CONTROL.search(table), (text, RAW_CONTROL.findall(table))
    code, out, _ = run(capsys, "ls", "--store", path)
    assert "\\x1b]0;PWNED\\x07" in out and "\\u202eevil" in out and "nul\\x00byte" in out


def test_show_writes_the_content_to_a_pipe_exactly(
    nasty: tuple[str, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, ids = nasty
    for text in [*CONTROL, "tab\there", "a\r\nb"]:
        if text not in ids:
            with ad.DiskStore(path) as store:
                ids[text] = record_text(ad.Toolkit(store), text).id
        code, out, _ = run(capsys, "show", ids[text], "--store", path)
        assert code == 0
        assert out.split("┘\n", 1)[1] == text + "\n", text


def test_replay_and_raw_show_stay_byte_exact_in_a_pipe(
    nasty: tuple[str, dict[str, str]], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path, ids = nasty
    for text in CONTROL:
        for args in (["replay", ids[text]], ["show", ids[text], "--raw"]):
            # these records are errors: replay says so with exit 6, the bytes still exact
            assert main([*args, "--store", path]) == (6 if args[0] == "replay" else 0)
            assert capsysbinary.readouterr().out == text.encode("utf-8")
    everything = "".join(CONTROL).encode("utf-8") + b"\xff\x00 binary"
    with ad.DiskStore(path) as store:
        result = ad.Toolkit(store).record("t", {}, everything, determinism="deterministic")
    for args in (["replay", result.id], ["show", result.id, "--raw"]):
        proc = subprocess.run(
            [sys.executable, "-m", "addressable", *args, "--store", path],
            capture_output=True,
            check=True,
            timeout=60,
        )
        assert proc.stdout == everything


def in_terminal(*args: str) -> tuple[int, bytes]:
    """Run the command with stdout and stderr on a pseudo-terminal; returns what it wrote."""
    main_fd, tty_fd = pty.openpty()
    # 40 rows of 300 columns: wide enough that no table cell in these tests wraps
    fcntl.ioctl(tty_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 300, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color"}
    env.pop("COLUMNS", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "addressable", *args],
        stdin=subprocess.DEVNULL,
        stdout=tty_fd,
        stderr=tty_fd,
        env=env,
    )
    os.close(tty_fd)
    chunks = []
    while True:
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main_fd)
    return proc.wait(timeout=60), b"".join(chunks)


INJECTED = ("\x1b]0;PWNED\x07" + "\x1b[2J" + "\x9b31m" + "\u202e").encode()


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["replay", "{id}"], id="replay"),
        pytest.param(["show", "{id}", "--raw"], id="show-raw"),
        pytest.param(["show", "{id}"], id="show"),
        pytest.param(["ls"], id="ls"),
        pytest.param(["show", "{id}", "--json"], id="show-json"),
    ],
)
def test_a_terminal_never_gets_control_sequences_from_a_tool(
    tmp_path: Path, args: list[str]
) -> None:
    path = str(tmp_path / "store")
    text = "before " + INJECTED.decode() + " after"
    with ad.DiskStore(path) as store:
        result = record_text(ad.Toolkit(store), text)
    code, shown = in_terminal(*[a.format(id=result.id) for a in args], "--store", path)
    assert code == (6 if args[0] == "replay" else 0), shown  # replay of an error: 6
    for sequence in (b"\x1b]0;PWNED", b"\x1b[2J", b"\xc2\x9b", "\u202e".encode()):
        assert sequence not in shown
    assert b"PWNED" in shown and b"before" in shown


@pytest.mark.parametrize("args", [["replay", "{id}"], ["show", "{id}", "--raw"]])
def test_binary_content_is_not_written_to_a_terminal(tmp_path: Path, args: list[str]) -> None:
    path = str(tmp_path / "store")
    payload = b"\x89PNG\x00\xff\x1b]0;PWNED\x07\x1b[2J"
    with ad.DiskStore(path) as store:
        result = ad.Toolkit(store).record(
            "files", {"path": "x.png"}, payload, determinism="deterministic"
        )
    code, shown = in_terminal(*[a.format(id=result.id) for a in args], "--store", path)
    assert code == 0
    assert b"\x1b]0;PWNED" not in shown and b"\x1b[2J" not in shown
    assert f"{len(payload)} bytes of binary content".encode() in shown


def test_export_does_not_write_a_bundle_to_a_terminal(tmp_path: Path) -> None:
    path = str(tmp_path / "store")
    with ad.DiskStore(path) as store:
        record_text(ad.Toolkit(store), "before " + INJECTED.decode() + " after")
    code, shown = in_terminal("export", "--store", path)
    assert code == 2
    assert shown.startswith(b"addressable: error: ") and shown.count(b"\n") == 1
    assert b"-o FILE" in shown and "\u202e".encode() not in shown and b"\xc2\x9b" not in shown
    bundle = tmp_path / "bundle.jsonl"
    code, _ = in_terminal("export", "--store", path, "-o", str(bundle))
    assert code == 0 and "\u202e".encode() in bundle.read_bytes()  # a file gets it as it is


def test_json_output_escapes_what_a_terminal_would_act_on(
    nasty: tuple[str, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, ids = nasty
    code, out, _ = run(capsys, "ls", "--store", path, "--json")
    assert code == 0
    assert not RAW_CONTROL.search(out.replace("\n", ""))
    listed = {r["id"]: r for r in json.loads(out)}
    for text, record_id in ids.items():
        assert listed[record_id]["tool"] == text and listed[record_id]["args"] == {"q": text}
    code, out, _ = run(capsys, "show", ids["\x9b31m c1 csi"], "--store", path, "--json")
    assert not RAW_CONTROL.search(out.replace("\n", ""))
    assert json.loads(out)["content"] == "\x9b31m c1 csi"


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    tool=st.text(min_size=1, max_size=300),
    key=st.text(max_size=300),
    value=st.text(max_size=300),
    error=st.text(max_size=300),
    payload=st.one_of(st.binary(max_size=2000), st.text(max_size=2000).map(str.encode)),
)
def test_any_stored_text_is_listed_and_shown_without_a_traceback(
    capsys: pytest.CaptureFixture[str],
    tool: str,
    key: str,
    value: str,
    error: str,
    payload: bytes,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        with ad.DiskStore(tmp) as store:
            result = ad.Toolkit(store).record(
                tool,
                {"v": value},
                payload,
                determinism="deterministic",
                key=key,
                status="error",
                error=error,
            )
        code, out, err = run(capsys, "ls", "--store", tmp)
        assert (code, err) == (0, "")
        assert not RAW_CONTROL.search(out)
        code, out, err = run(capsys, "show", result.id, "--store", tmp)
        assert (code, err) == (0, "")
        assert not RAW_CONTROL.search(out.split("┘\n", 1)[0])
        code, out, err = run(capsys, "ls", "--store", tmp, "--json")
        assert code == 0
        (listed,) = json.loads(out)
        assert (listed["tool"], listed["key"], listed["error"]) == (tool, key, error)
        code, out, err = run(capsys, "show", result.id, "--store", tmp, "--json")
        assert code == 0 and json.loads(out)["record"]["args"] == {"v": value}


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b'{"id": "0123456789abcdef", "tool": "\\ud800"', id="lone-surrogate"),
        pytest.param(b"\xff\xfe not json", id="not-utf8"),
        pytest.param(b"[/bold] \x1b]0;PWNED\x07", id="markup-and-control"),
    ],
)
def test_an_unreadable_record_is_one_line_of_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], raw: bytes
) -> None:
    path = tmp_path / "store"
    with ad.DiskStore(path) as store:
        ad.Toolkit(store).record("t", {}, b"fine", determinism="deterministic")
        store._backend.set(RECORD + "0123456789abcdef", raw)  # a record's row, by hand
    for args in (["ls"], ["show", "0123456789abcdef"], ["verify"]):
        code, out, err = run(capsys, *args, "--store", str(path))
        assert code in (1, 4), (args, err)
        if code == 4:
            assert err.startswith("addressable: error: ") and err.count("\n") == 1, err
            assert not RAW_CONTROL.search(err.rstrip("\n"))
            assert "0123456789abcdef" in err
        else:  # verify names the damaged record
            assert "0123456789abcdef" in out and not RAW_CONTROL.search(out)


# -- 10. bad limits are refused, not obeyed ----------------------------------------------


@pytest.fixture
def old(tmp_path: Path, clock: FakeClock) -> tuple[str, list[str]]:
    """A disk store with two records observed long ago: any gc may remove them."""
    path = str(tmp_path / "store")
    with ad.DiskStore(path) as store:
        kit = ad.Toolkit(store, clock=clock)
        ids = []
        for n in (1, 2):
            ids.append(kit.record("t", {"n": n}, b"x" * 100, determinism="deterministic").id)
            clock.advance(minutes=1)
    return path, ids


@pytest.mark.parametrize(
    ("args", "value"),
    [
        (["ls", "--limit", "-1"], "-1"),
        (["ls", "--limit", "0"], "0"),
        (["ls", "--limit", "many"], "many"),
        (["ls", "--since", "99999999999w"], "99999999999w"),
        (["ls", "--since", "9" * 400 + "d"], "9" * 400 + "d"),
        (["ls", "--since", "0001-01-01T00:00+01:00"], "0001-01-01T00:00+01:00"),
        (["gc", "--max-age", "0s"], "0s"),
        (["gc", "--max-age", "0.0000001s"], "0.0000001s"),
        (["gc", "--max-age", "-1d"], "-1d"),
        (["gc", "--max-age=-1d"], "-1d"),
        (["gc", "--max-age", "7"], "7"),
        (["gc", "--max-age", "99999999999w"], "99999999999w"),
        (["gc", "--max-age", "9" * 400 + "d"], "9" * 400 + "d"),
        (["gc", "--max-age", "nan"], "nan"),
        (["gc", "--max-bytes", "0"], "0"),
        (["gc", "--max-bytes", "0MB"], "0MB"),
        (["gc", "--max-bytes", "0.4"], "0.4"),
        (["gc", "--max-bytes", "-5"], "-5"),
        (["gc", "--max-bytes", "-5MB"], "-5MB"),
        (["gc", "--max-bytes", "1e9"], "1e9"),
        (["gc", "--max-bytes", "inf"], "inf"),
        (["gc", "--max-bytes", "9" * 400], "9" * 400),
        (["gc", "--max-bytes", "5 parsecs"], "5 parsecs"),
    ],
)
def test_a_bad_limit_exits_2_naming_it_and_changes_nothing(
    old: tuple[str, list[str]],
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    value: str,
) -> None:
    path, ids = old
    code, out, err = run(capsys, *args, "--store", path)
    assert code == 2
    assert err.startswith("addressable: error: ") and err.count("\n") == 1, err
    assert value in err
    assert out == ""
    with ad.DiskStore(path) as store:
        assert [r.id for r in store.records()] == ids


def test_good_limits_still_work(
    old: tuple[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, ids = old
    code, out, _ = run(capsys, "ls", "--limit", "1", "--store", path, "--json")
    assert code == 0 and [r["id"] for r in json.loads(out)] == ids[1:]
    code, out, _ = run(capsys, "gc", "--max-bytes", "1KiB", "--store", path, "--json")
    assert code == 0 and json.loads(out)["removed_records"] == []
    code, out, _ = run(capsys, "gc", "--max-age", "0.5w", "--store", path, "--json")
    assert code == 0 and sorted(json.loads(out)["removed_records"]) == sorted(ids)


def test_help_is_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (["--help"], ["ls", "--help"], ["show", "--help"]):
        code, out, _ = run(capsys, *args)
        assert code == 0 and not RAW_CONTROL.search(out)
    assert "shown escaped (\\x1b, \\u202e)" in out


def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (["ls", "--bogus"], ["nocommand"], ["show"]):
        code, _, err = run(capsys, *args)
        assert code == 2
        assert err.startswith("addressable: error: ") and err.count("\n") == 1, err


@pytest.mark.parametrize(
    "url",
    [123, 1.5, b"/tmp/store", ["memory://"], {"url": "memory://"}, object()],
    ids=lambda u: type(u).__name__,
)
def test_open_store_refuses_what_is_not_a_url_or_a_path(url: object) -> None:
    with pytest.raises(ad.ArgumentError) as info:
        ad.open_store(url)  # type: ignore[arg-type]
    message = str(info.value)
    assert "\n" not in message and type(url).__name__ in message


def test_open_store_refuses_an_empty_url_and_a_create_that_is_not_a_bool(tmp_path: Path) -> None:
    with pytest.raises(ad.ArgumentError, match="empty"):
        ad.open_store("")
    with pytest.raises(ad.ArgumentError, match="create"):
        ad.open_store(str(tmp_path / "s"), create="no")  # type: ignore[arg-type]
    assert not (tmp_path / "s").exists()


def test_open_store_takes_a_path_object(tmp_path: Path) -> None:
    with ad.open_store(tmp_path / "store") as store:
        assert isinstance(store, ad.DiskStore)
        assert store.directory == (tmp_path / "store").resolve()


def test_an_empty_store_option_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "ls", "--store", "")
    assert code == 2 and "empty" in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


# -- 11. read-only commands never create a store -----------------------------------------

READ_ONLY = [
    ["ls"],
    ["show", "0123456789abcdef"],
    ["replay", "0123456789abcdef"],
    ["replay", "0123456789abcdef", "--verify"],
    ["verify"],
    ["stats"],
    ["export"],
    ["export", "-o", "{tmp}/bundle.jsonl"],
    ["gc"],
    ["gc", "--max-age", "1d"],
    ["pin", "0123456789abcdef"],
    ["unpin", "0123456789abcdef"],
]


@pytest.mark.parametrize("args", READ_ONLY, ids=lambda a: "-".join(a[:1] + a[2:3]))
def test_a_missing_store_is_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    typo = tmp_path / "typo"
    args = [a.format(tmp=tmp_path) for a in args]
    code, out, err = run(capsys, *args, "--store", str(typo))
    assert code == 5
    assert err.startswith("addressable: error: ") and err.count("\n") == 1
    assert str(typo) in err and "no store" in err
    assert out == ""
    assert list(tmp_path.iterdir()) == []


def test_a_missing_store_is_named_on_one_line_whatever_its_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = tmp_path / "typo\n\x1b]0;PWNED\x07[/bold]"
    code, _, err = run(capsys, "ls", "--store", str(typo))
    assert code == 5 and err.count("\n") == 1 and not RAW_CONTROL.search(err.rstrip("\n"))
    assert "typo\\n\\x1b]0;PWNED\\x07[/bold]" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [["ls"], ["stats"], ["gc"], ["verify"]], ids=lambda a: a[0])
def test_a_directory_without_a_store_is_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    for url in (str(tmp_path), f"disk://{tmp_path}"):
        code, _, err = run(capsys, *args, "--store", url)
        assert code == 5 and str(tmp_path) in err and "no store" in err
        assert list(tmp_path.iterdir()) == []


def test_the_default_store_is_not_created_by_ls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ADDRESSABLE_HOME", raising=False)
    for empty in (None, ""):  # an empty $ADDRESSABLE_STORE counts as unset
        if empty is None:
            monkeypatch.delenv("ADDRESSABLE_STORE", raising=False)
        else:
            monkeypatch.setenv("ADDRESSABLE_STORE", empty)
        code, _, err = run(capsys, "ls")
        assert code == 5 and str(tmp_path / ".addressable") in err
        assert list(tmp_path.iterdir()) == []
    monkeypatch.setenv("ADDRESSABLE_HOME", str(tmp_path / "home"))
    code, _, err = run(capsys, "stats")
    assert code == 5 and str(tmp_path / "home") in err
    assert list(tmp_path.iterdir()) == []


def test_import_creates_the_store_and_then_it_reads(
    old: tuple[str, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, ids = old
    bundle = tmp_path / "bundle.jsonl"
    assert run(capsys, "export", "--store", path, "-o", str(bundle))[0] == 0
    fresh = tmp_path / "fresh" / "store"
    code, _, err = run(capsys, "import", str(bundle), "--store", str(fresh))
    assert code == 0, err
    code, out, _ = run(capsys, "ls", "--store", str(fresh), "--json")
    assert code == 0 and sorted(r["id"] for r in json.loads(out)) == sorted(ids)


def test_open_store_create_false(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    for url in (str(missing), f"disk://{missing}", missing):
        with pytest.raises(ad.StoreError, match="no store at") as info:
            ad.open_store(url, create=False)
        assert str(missing) in str(info.value) and "\n" not in str(info.value)
    assert not missing.exists()
    ad.open_store(missing).close()  # creating is still the default
    with ad.open_store(missing, create=False) as store:
        assert isinstance(store, ad.DiskStore)
    with ad.open_store("memory://", create=False) as store:
        assert isinstance(store, ad.MemoryStore)


def test_a_store_on_a_file_is_not_a_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "file"
    file.write_text("not a store")
    code, _, err = run(capsys, "ls", "--store", str(file))
    assert code == 5 and str(file) in err
    assert file.read_text() == "not a store"
