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


def _page(form: str) -> str:
    return (
        f"<html><head><title>Key {form}</title></head><body><h1>{form}</h1>"
        f"<p>{'Lorem ipsum dolor sit amet. ' * 200}</p></body></html>"
    )


@pytest.fixture
def kit(monkeypatch: pytest.MonkeyPatch, disk_kit: ad.Toolkit) -> ad.Toolkit:
    """A kit that has resolved SECRET."""
    monkeypatch.setenv("LIVE_KEY", SECRET)
    disk_kit.secrets.resolve("secret:env:LIVE_KEY")
    return disk_kit


@pytest.mark.parametrize("form", FORMS.values(), ids=FORMS.keys())
def test_no_secret_reaches_a_stub(form: str, kit: ad.Toolkit) -> None:
    done = ad.compact(_conversation(_page(form)), kit=kit, keep_last=1)
    stub = done.messages[2]["content"][0]["content"]
    assert "[claim:" in stub or "[ref:" in stub, stub
    assert SECRET not in stub
    assert all(SECRET not in str(s) for s in done.messages)


@pytest.mark.parametrize("form", FORMS.values(), ids=FORMS.keys())
def test_no_secret_reaches_the_state_document(form: str, kit: ad.Toolkit) -> None:
    # The state document lists the newest reads with a gist of each, made the way a
    # stub is: it must be masked the same way.
    page = _page(form).encode()
    kit.record(
        "fetch", {"n": 1}, page, determinism="deterministic", key="k", media_type="text/html"
    )
    document = kit.state(task=ad.Task(text="find the key", items=["key"]))
    (observation,) = document.observations
    assert observation.value  # a gist was made
    assert SECRET not in document.model_dump_json()


def test_evict_masks_what_the_kit_resolved(kit: ad.Toolkit) -> None:
    page = _page(FORMS["spans"]).encode()
    made = kit.record(
        "fetch", {"n": 1}, page, determinism="deterministic", key="k", media_type="text/html"
    )
    bare = ad.evict(made.record, store=kit.store)
    assert isinstance(bare, ad.Reference) and SECRET in bare.gist  # nothing to mask with
    masked = ad.evict(made.record, store=kit.store, secrets=kit.secrets)
    assert isinstance(masked, ad.Reference) and "Key" in masked.gist
    assert SECRET not in masked.model_dump_json()
