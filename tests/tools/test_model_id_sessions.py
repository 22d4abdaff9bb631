"""An id a model gives is read by one rule wherever it goes (`replay_result`, a state
document's citations, an Api VERIFY): a full id names any record, a prefix only what
the model's own session has seen. Another session's records are not found by guessing
prefixes, nor is their existence told.

Real kits on diskcache, and a real payments server on 127.0.0.1.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

import addressable as ad
from addressable.adapters import Api, Identity, Scope
from tests.helpers.httpserver import LocalServer, Reply


@pytest.fixture
def alice_and_bob(disk_kit: ad.Toolkit) -> tuple[ad.Toolkit, ad.Toolkit]:
    alice = ad.Toolkit(disk_kit.store, session="alice")
    bob = ad.Toolkit(disk_kit.store, session="bob")
    return alice, bob


def test_a_state_document_finds_no_other_session_s_record_by_prefix(
    alice_and_bob: tuple[ad.Toolkit, ad.Toolkit],
) -> None:
    alice, bob = alice_and_bob
    private = alice.record(
        "lookup", {"who": "alice"}, b"ACCOUNT=4242", determinism="nondeterministic"
    ).id
    guess = private[:6]
    document = ad.StateDocument(
        task=ad.Task(text="t", items=[]),
        actions=[
            ad.StateAction(
                id=guess, operation="x", outcome="unknown", observed_at="2026-03-11T09:00:00+00:00"
            )
        ],
    )
    found = document.problems(store=bob.store, session="bob")
    assert [p.kind for p in found] == ["action_mismatch"]
    assert "not in the store" in found[0].message and "lookup" not in found[0].message
    # Merged by bob's kit, the prefix stays as written: it is not made alice's full id.
    merged = bob.state(task=ad.Task(text="t", items=[]), document=document)
    assert private not in merged.model_dump_json()
    # Alice's own session reads her prefix as before.
    mine = document.problems(store=alice.store, session="alice")
    assert [p.kind for p in mine] == ["action_mismatch"] and "cites a 'lookup'" in mine[0].message


def test_api_verify_from_a_model_finds_no_other_session_s_action(
    alice_and_bob: tuple[ad.Toolkit, ad.Toolkit],
    server: LocalServer,
    secret_env: Callable[[str], str],
) -> None:
    alice, bob = alice_and_bob
    secret_env("PAY_TOKEN")
    server.routes[("POST", "/orders/alice-private")] = lambda request: Reply(
        201, b"{}", {"Content-Type": "application/json"}
    )
    identity = Identity(name="me", headers={"Authorization": "Bearer secret:env:PAY_TOKEN"})
    scope = Scope(origins=(server.url(),), actions=frozenset({"read", "write"}))
    Api(alice, identities=[identity], scope=scope)
    Api(bob, identities=[identity], scope=scope)
    written = alice.handle(
        "api", {"method": "POST", "url": server.url("/orders/alice-private"), "identity": "me"}
    )
    action = next(r for r in alice.store.records() if r.is_action)
    assert action.id[:8] in written
    server.requests.clear()
    asked = {"method": "VERIFY", "action_id": action.id[:6], "identity": "me"}
    answer = bob.handle("api", json.dumps(asked))
    assert answer.startswith("error:") and "no result id starts with" in answer
    assert "alice-private" not in answer and action.id not in answer
    assert server.requests == []  # nothing was read on bob's say-so
