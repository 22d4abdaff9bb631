"""Values a later call reuses stay whole in a stub's names: an email is one value, and a
name another one holds only in part (`usr_12` in `usr_123`) is still kept."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import addressable as ad
from addressable.context.summarize import Known
from tests.helpers import modelloop


def test_an_email_is_one_value() -> None:
    text = "A refund will be issued to jane.doe@example.com by Friday.\n" + "filler\n" * 20
    assert Known("").names(text) == ["jane.doe@example.com"]


def test_a_name_another_holds_only_in_part_is_kept() -> None:
    names = Known("").names("Created users: usr_12, usr_123, usr_1234 in src/app/main.py")
    assert {"usr_12", "usr_123", "usr_1234", "src/app/main.py"} <= set(names)
    assert "main.py" not in names  # a file its path holds whole is left to the path


def test_hyphenated_ids_and_uuids_are_values() -> None:
    text = (
        "Order ORD-55812 is billed on INV-2025-00042 (case A-1029384), trace "
        "3f2b8c9e-1a2b-4c3d-8e9f-0a1b2c3d4e5f; a well-known x-ray of it is attached."
    )
    names = Known("").names(text)
    for value in (
        "ORD-55812",
        "INV-2025-00042",
        "A-1029384",
        "3f2b8c9e-1a2b-4c3d-8e9f-0a1b2c3d4e5f",
    ):
        assert value in names
    assert not any("well" in n or "ray" in n for n in names)  # words joined by a hyphen


def test_a_stub_keeps_the_order_ids_of_prose() -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    text = "Order ORD-55812 shipped to customer cus_AbC123 on 2025-01-04. " * 3
    rows = "\n".join(f"row {i}" for i in range(50))
    record = kit.record(
        "lookup", {"q": "x"}, (text + rows).encode(), determinism="nondeterministic"
    )
    stub = ad.evict(record.record, store=kit.store)
    assert "ORD-55812" in stub.text and "cus_AbC123" in stub.text


def test_a_search_keeps_its_first_three_urls_though_they_are_long() -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    long = "https://www.google.com/url?sa=t&source=web&cd={i}&ved=2ahUKEwiQ{i}8x7zQAhXKD&url=https%3A%2F%2Fexample{i}.com%2Fdocs%2Fguide%2Fsection-{i}&usg=AOvVaw3kZ{i}qRtYhJ"
    hits = [{"title": f"Result {i}", "url": long.format(i=i)} for i in range(10)]
    body = json.dumps({"query": "rust async", "hits": hits}).encode()
    record = kit.record("search", {"query": "rust async"}, body, determinism="nondeterministic")
    stub = ad.evict(record.record, store=kit.store)
    shown = [hit["url"] for hit in hits if hit["url"] in stub.text]
    assert shown[:3] == [hit["url"] for hit in hits[:3]]  # the first three, in rank order
    assert "rust async" in stub.text


def test_a_value_the_conversation_shows_only_inside_a_longer_one_is_new() -> None:
    known = Known("Checked out feature/login-v2 and user usr_123; see src/app/main.py.")
    names = known.names("Branches: feature/login, feature/login-v2; users usr_12, usr_123")
    assert "feature/login" in names and "usr_12" in names
    assert "feature/login-v2" not in names and "usr_123" not in names
    assert not known.new("main.py")  # shown whole, as the end of a path


def test_a_list_whose_first_value_is_too_long_keeps_the_values_that_fit() -> None:
    from addressable.context.summarize import Items, fit

    long = "https://docs.python.org/3/library/" + "very-long-section-name/" * 6 + "x.html"
    gist = fit([Items("", [long, "ORD-55812", "cus_AbC123"], " ")], budget=12)
    assert gist == "ORD-55812 cus_AbC123"  # before: nothing at all


USER = {
    "user_id": "aarav_garcia_1177",
    "payment_methods": {
        f"certificate_{n}": {"source": "certificate", "amount": 250, "id": f"certificate_{n}"}
        for n in (8544743, 1234567, 7654321)
    },
    "reservations": ["4BMN53", "Q0ZF0J", "M05KNL"],
    "membership": "gold",
}


def test_json_a_tool_wrapped_in_a_label_or_a_fence_keeps_its_ids_in_the_stub() -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    raw = json.dumps(USER)
    forms = {
        "as is": raw,
        "labelled": f"Result: {raw}",
        "fenced": f"```json\n{json.dumps(USER, indent=2)}\n```",
        "labelled and fenced": f"Here is the user:\n```\n{raw}\n```",
        "another script's label": f"结果\uff1a{raw}",  # a full-width colon
    }
    for form, text in forms.items():
        record = kit.record(
            "get_user", {"form": form}, text.encode(), determinism="nondeterministic"
        )
        stub = ad.evict(record.record, store=kit.store)
        for value in ("4BMN53", "Q0ZF0J", "M05KNL", "certificate_8544743"):
            assert value in stub.text, (form, stub.text)


RESERVATION = {
    "reservation_id": "4BMN53",
    "flights": [
        {"origin": "JFK", "flight_number": "HAT080", "date": "2024-05-28", "price": 120},
        {"origin": "SEA", "flight_number": "HAT249", "date": "2024-05-29", "price": 98},
    ],
    "passengers": [
        {"first_name": "Ivan", "dob": "1973-08-20"},
        {"first_name": "Mia", "dob": "1955-02-01"},
    ],
    "payment_history": [
        {"payment_id": "gift_card_8190333", "amount": 161},
        {"payment_id": "gift_card_8190333", "amount": 209},
    ],
}


def _reservation() -> tuple[ad.Toolkit, ad.Result]:
    kit = ad.Toolkit(ad.open_store("memory://"))
    body = json.dumps(RESERVATION).encode()
    args = {"reservation_id": "4BMN53"}
    return kit, kit.record("get_reservation", args, body, determinism="nondeterministic")


def test_the_objects_of_a_list_keep_their_values_together() -> None:
    kit, res = _reservation()
    text = ad.evict(res.record, store=kit.store).text  # type: ignore[union-attr]
    # a flight's number beside its own date, not in a list of numbers beside a list of
    # dates; a value all the objects share is said once
    assert "flights (flight_number date): HAT080 2024-05-28 | HAT249 2024-05-29" in text
    assert "passengers (dob): 1973-08-20 | 1955-02-01" in text
    assert "payment_history, payment_id=gift_card_8190333" in text


def test_a_row_the_conversation_already_shows_is_left_out() -> None:
    _, res = _reservation()
    summarize = ad.DefaultSummarizer(known="we fly HAT080 on 2024-05-28")
    text = summarize(res.record, res.payload, 120)
    assert "HAT249 2024-05-29" in text and "HAT080" not in text


def _grep_then_more(output: str) -> list[dict[str, Any]]:
    """A session that ran `grep -n` in one file, then three more commands."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "make __eq__ defer"}]
    steps = [
        ('grep -n "def __eq__" numbers.py', output),
        ("python -c 'print(1)'", "1\n"),
        ("git status --short", " M numbers.py\n"),
        ("python -c 'print(2)'", "2\n"),
    ]
    for k, (command, text) in enumerate(steps):
        messages += modelloop.assistant("flat", k, "bash", {"command": command})
        messages.append(modelloop.result("flat", k, "bash", text))
    return messages


def test_a_grep_in_one_file_keeps_the_numbers_of_the_lines_it_matched(tmp_path: Path) -> None:
    # What the lines say, the call shows; where they are is what the next view needs.
    body = [f"    value_{n} = {n}" for n in range(400)]
    for at in (87, 148, 231, 302):
        body[at] = "    def __eq__(self, other):"
    (tmp_path / "numbers.py").write_text("\n".join(body) + "\n")
    grep = ["grep", "-n", "def __eq__", "numbers.py"]
    output = subprocess.run(grep, cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    kit = ad.Toolkit(ad.open_store("memory://"))
    done = ad.compact(_grep_then_more(output), kit=kit, keep_last=1)
    stub = done.messages[2]["content"]
    assert stub.startswith("[claim:")
    assert stub.endswith("lines 88 149 232 303")


def test_a_log_that_leads_with_times_is_not_read_as_line_numbers() -> None:
    log = "".join(f"12:{m:02d}:07 worker_{m} finished batch_{m}\n" for m in range(30))
    kit = ad.Toolkit(ad.open_store("memory://"))
    done = ad.compact(_grep_then_more(log), kit=kit, keep_last=1)
    stub = done.messages[2]["content"]
    assert "lines" not in stub and "worker_" in stub
