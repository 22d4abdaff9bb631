"""A stub is made from the payload read as text (HTML decoded, markup dropped), which can
spell a secret the kit resolved that the stored bytes held only escaped or split: no
secret reaches a stub, however the page wrote it."""

from __future__ import annotations

from typing import Any

import pytest

import addressable as ad

SECRET = "sk-live-abcdef123456"

FORMS = {
    "entity": "sk-live-&#x61;bcdef123456",
    "all-entities": "".join(f"&#{ord(c)};" for c in SECRET),
    "percent": "sk-live-%61bcdef123456",
    "comment": "sk-live-abc<!-- x -->def123456",
    "spans": "<span>sk-live-</span><span>abcdef123456</span>",
    "wbr": "sk-live-abc<wbr>def123456",
}


def _conversation(page: str) -> list[dict[str, Any]]:
    filler = "Lorem ipsum dolor sit amet. " * 300
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read the page"}]
    for n, text in enumerate([page, filler, filler]):
        messages += [
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": f"c{n}", "name": "fetch", "input": {"n": n}}
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"c{n}", "content": text}],
            },
        ]
    return messages


@pytest.mark.parametrize("form", FORMS.values(), ids=FORMS.keys())
def test_no_secret_reaches_a_stub(
    form: str, monkeypatch: pytest.MonkeyPatch, disk_kit: ad.Toolkit
) -> None:
    monkeypatch.setenv("LIVE_KEY", SECRET)
    disk_kit.secrets.resolve("secret:env:LIVE_KEY")
    page = (
        f"<html><head><title>Key {form}</title></head><body><h1>{form}</h1>"
        f"<p>{'Lorem ipsum dolor sit amet. ' * 200}</p></body></html>"
    )
    done = ad.compact(_conversation(page), kit=disk_kit, keep_last=1)
    stub = done.messages[2]["content"][0]["content"]
    assert "[claim:" in stub or "[ref:" in stub, stub
    assert SECRET not in stub
    assert all(SECRET not in str(s) for s in done.messages)
