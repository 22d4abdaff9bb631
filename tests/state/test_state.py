"""The state document: checked by program, filled by the harness, carried across
compactions and restarts."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from anthropic.types import OutputConfigParam
from openai.types.shared_params import ResponseFormatJSONSchema
from pydantic import TypeAdapter

import addressable as ad
from addressable.adapters import Api, Identity, LocalIndex, Scope, Search
from tests.helpers import FakeClock
from tests.helpers.httpserver import LocalServer, Reply

ITEMS = [f"module{i:02}" for i in range(11)]
TASK = ad.Task(text="Does each module's documentation say whether it is thread-safe?", items=ITEMS)


def doc(found: list[str], open_: list[str], **extra: Any) -> ad.StateDocument:
    return ad.StateDocument(
        task=TASK,
        findings=[ad.Finding(item=i, status="found", established=f"{i} says so") for i in found],
        open=[ad.OpenItem(item=i, blocked_on="not read yet") for i in open_],
        **extra,
    )


def kinds(problems: list[ad.Problem]) -> list[str]:
    return [p.kind for p in problems]


def test_a_sound_document_has_no_problems() -> None:
    assert doc(ITEMS[:6], ITEMS[6:]).problems() == []


def test_an_item_missing_is_named() -> None:
    problems = doc(ITEMS[:6], ITEMS[6:10]).problems()
    assert [str(p) for p in problems] == [
        "missing_item: item 'module10' is in neither findings nor open"
    ]


def test_an_item_in_both_is_named() -> None:
    problems = doc(ITEMS[:6], ITEMS[5:]).problems()
    assert [str(p) for p in problems] == [
        "duplicate_item: item 'module05' is in both findings and open"
    ]


def test_fewer_resolved_findings_name_those_that_vanished() -> None:
    previous = doc(ITEMS[:9], ITEMS[9:])
    now = doc(ITEMS[:7], ITEMS[7:])
    problems = now.problems(previous=previous)
    assert [str(p) for p in problems] == [
        "regression: 7 resolved findings after 9: 2 vanished ('module07', 'module08')"
    ]


def test_items_not_in_the_task_and_doubled_findings() -> None:
    extra = doc(ITEMS, [])
    extra.findings.append(ad.Finding(item="module99", status="found", established="?"))
    extra.findings.append(ad.Finding(item="module00", status="found", established="again"))
    assert sorted(kinds(extra.problems())) == ["duplicate_item", "unknown_item"]


def test_evidence_must_resolve_in_the_store(kit: ad.Toolkit) -> None:
    res = kit.record(
        "fetch", {"url": "https://d/a"}, b"a page", determinism="deterministic", key="https://d/a"
    )
    good = doc(ITEMS, [])
    good.findings[0].evidence = [res.id, res.id[:8], "https://d/a"]
    assert good.problems(store=kit.store) == []
    bad = doc(ITEMS, [])
    bad.findings[1].evidence = ["0123456789abcdef", "not-an-id"]
    problems = bad.problems(store=kit.store)
    assert [str(p) for p in problems] == [
        "unresolved_evidence: evidence '0123456789abcdef' of finding 'module01' is not in "
        "the store",
        "unresolved_evidence: evidence 'not-an-id' of finding 'module01' is not in the store",
    ]


def test_an_action_must_agree_with_the_store(kit: ad.Toolkit) -> None:
    act = kit.record(
        "api",
        {"method": "PATCH"},
        b"timeout",
        determinism="side_effect",
        outcome=ad.Outcome.UNKNOWN,
    )
    wrong = doc(
        ITEMS,
        [],
        actions=[
            ad.StateAction(
                id=act.id,
                operation="PATCH /x",
                outcome=ad.Outcome.COMPLETED,
                observed_at=act.record.observed_at.isoformat(),
            )
        ],
    )
    assert [str(p) for p in wrong.problems(store=kit.store)] == [
        f"action_mismatch: action {act.id!r} says completed, the store says unknown"
    ]
    kit.record(
        "api_verify",
        {"action": act.id},
        b"seen",
        determinism="nondeterministic",
        outcome=ad.Outcome.COMPLETED,
        meta={"verifies": act.id},
    )
    assert wrong.problems(store=kit.store) == []  # the verification settled it


def test_a_confirmed_hypothesis_needs_an_observation_after_its_action() -> None:
    action = ad.StateAction(
        id="a1",
        operation="deploy",
        outcome=ad.Outcome.COMPLETED,
        observed_at="2026-03-11T10:00:00+00:00",
    )
    before = ad.StateObservation(
        id="o1", source="health", value="down", observed_at="2026-03-11T09:00:00+00:00"
    )
    after = ad.StateObservation(
        id="o2", source="health", value="up", observed_at="2026-03-11T10:05:00+00:00"
    )
    claim = ad.Hypothesis(
        id="h1", claim="the deploy fixed it", based_on=["o1"], status="confirmed", depends_on="a1"
    )
    document = doc(ITEMS, [], actions=[action], observations=[before, after], hypotheses=[claim])
    assert [str(p) for p in document.problems()] == [
        "unsupported_hypothesis: hypothesis 'h1' is confirmed with no observation after action 'a1'"
    ]
    claim.based_on = ["o1", "o2"]
    assert document.problems() == []


def test_a_secret_value_is_a_problem() -> None:
    leaky = doc(ITEMS, [], commitments=["call back with token s3cr3t-v4lue"])
    assert kinds(leaky.problems(secrets=["s3cr3t-v4lue"])) == ["secret"]
    assert "s3cr3t" not in str(leaky.problems(secrets=["s3cr3t-v4lue"])[0])


def test_a_value_any_kit_resolved_is_a_problem_without_being_given(
    kit: ad.Toolkit, server: LocalServer, secret_env: Callable[[str], str]
) -> None:
    """`problems(store=...)`, as DESIGN writes it, finds the value of a secret the kit
    sent, though nobody passed `secrets=`."""
    token = secret_env("STATE_API_TOKEN")
    server.routes[("GET", "/me")] = lambda request: Reply(200, b"{}")
    identity = Identity(name="bot", headers={"Authorization": "Bearer secret:env:STATE_API_TOKEN"})
    api = Api(kit, identities=[identity], scope=Scope(origins=(server.url(),)))
    api.get(server.url("/me"), identity="bot")
    leaky = doc(ITEMS, [], commitments=[f"send the report with {token}"])
    assert kinds(leaky.problems(store=kit.store)) == ["secret"]
    assert token not in str(leaky.problems(store=kit.store))
    assert doc(ITEMS, [], commitments=["send the report"]).problems(store=kit.store) == []


def test_the_schema_is_strict_and_fits_both_apis() -> None:
    schema = ad.state_schema()

    def objects(node: Any) -> list[dict[str, Any]]:
        found = []
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                found.append(node)
            for value in node.values():
                found += objects(value)
        elif isinstance(node, list):
            for value in node:
                found += objects(value)
        return found

    assert len(objects(schema)) == 9  # the document and its eight kinds of entry
    for node in objects(schema):
        assert node["additionalProperties"] is False
        assert set(node["required"]) == set(node["properties"])
    assert "default" not in json.dumps(schema)
    TypeAdapter(OutputConfigParam).validate_python(
        {"format": {"type": "json_schema", "schema": schema}}
    )
    TypeAdapter(ResponseFormatJSONSchema).validate_python(
        {"type": "json_schema", "json_schema": {"name": "state", "strict": True, "schema": schema}}
    )
    # A document written to the schema reads back.
    sound = doc(ITEMS[:3], ITEMS[3:])
    assert ad.StateDocument.model_validate_json(sound.model_dump_json()) == sound


def test_compact_state_retries_with_the_problems_listed(kit: ad.Toolkit) -> None:
    answers = iter(
        [
            "Here is a summary: we looked at eleven modules.",
            doc(ITEMS[:5], ITEMS[5:10]).model_dump_json(),
            "```json\n" + doc(ITEMS[:5], ITEMS[5:]).model_dump_json() + "\n```",
        ]
    )
    prompts: list[str] = []

    def generate(prompt: str) -> str:
        prompts.append(prompt)
        return next(answers)

    result = ad.compact_state(generate, kit=kit, task=TASK)
    assert result.accepted and result.attempts == 3 and not result.keep_results
    assert result.document is not None and len(result.document.findings) == 5
    assert "not a JSON document" in prompts[1]
    assert "item 'module10' is in neither findings nor open" in prompts[2]
    assert "Schema:" in prompts[0] and "module10" in prompts[0]
    assert result.narrative.startswith("state document accepted after 3 attempts: 5 findings")


def test_compact_state_keeps_the_previous_document_when_every_attempt_fails(
    kit: ad.Toolkit,
) -> None:
    previous = doc(ITEMS[:9], ITEMS[9:])
    frozen = previous.model_dump_json()
    result = ad.compact_state(
        lambda prompt: doc(ITEMS[:7], ITEMS[7:]).model_dump(),
        kit=kit,
        task=TASK,
        previous=previous,
        max_attempts=3,
    )
    assert not result.accepted and result.keep_results
    assert result.document is previous and previous.model_dump_json() == frozen
    assert "regression" in result.narrative and "kept the previous document" in result.narrative


def test_the_merge_keeps_every_query_the_session_ran(kit: ad.Toolkit, clock: FakeClock) -> None:
    index = LocalIndex()
    index.add("https://d/queue", "queue", "The queue module is thread-safe.")
    search = Search(kit, index)
    for query in ("queue thread safe", "heapq thread safe", "zeppelin"):
        search(query)
        clock.advance(seconds=1)
    written = doc(ITEMS, [])  # a model-written document that omits queries_run
    merged = kit.state(task=TASK, document=written)
    assert merged.queries_run == [
        "queue thread safe (local)",
        "heapq thread safe (local)",
        "zeppelin (local)",
    ]
    assert merged.findings == written.findings
    answers = iter([written.model_dump_json()])
    result = ad.compact_state(lambda p: next(answers), kit=kit, task=TASK)
    assert result.document is not None and len(result.document.queries_run) == 3


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


def test_after_recover_a_write_on_an_old_read_waits_for_revalidate(
    disk_store: ad.DiskStore,
    clock: FakeClock,
    server: LocalServer,
    secret_env: Callable[[str], str],
) -> None:
    secret_env("OPS_TOKEN")
    invoice = {"id": 1042, "status": "open"}
    server.routes[("GET", "/invoices/1042")] = lambda r: Reply(
        200, json.dumps(invoice).encode(), {"Content-Type": "application/json"}
    )
    server.routes[("PATCH", "/invoices/1042")] = lambda r: Reply(
        200, json.dumps(invoice).encode(), {"Content-Type": "application/json"}
    )

    def api_for(kit: ad.Toolkit) -> Api:
        return Api(
            kit,
            identities=[
                Identity(name="ops", headers={"Authorization": "Bearer secret:env:OPS_TOKEN"})
            ],
            scope=Scope(origins=(server.url(),), actions=frozenset({"read", "replay", "write"})),
        )

    first = ad.Toolkit(disk_store, session="run-1", clock=clock)
    read = api_for(first).get(server.url("/invoices/1042"), identity="ops")
    document = first.state(task=ad.Task(text="pay invoice 1042", items=["pay 1042"]))
    document.open = [ad.OpenItem(item="pay 1042", blocked_on="nothing: next step")]
    document.checkpoint = ad.Checkpoint(step="pay invoice 1042", refs=[read.id])
    first.checkpoint(document)

    clock.advance(minutes=10)
    later = ad.Toolkit(disk_store, session="run-1", clock=clock)  # a restarted process
    api = api_for(later)
    recovery = later.recover()
    assert recovery.document.checkpoint is not None
    assert recovery.must_reread == [read.id]
    url = server.url("/invoices/1042")
    with pytest.raises(ad.Stale, match=f"depends on stale facts {read.id}"):
        api.patch(url, identity="ops", json_body={"status": "paid"}, depends_on=[read.id])
    assert not any(r.method == "PATCH" for r in server.requests)  # nothing was sent
    report = later.revalidate([read.id])
    assert report.fresh == {read.id: read.id} and report.changed == [] and report.stale == []
    done = api.patch(url, identity="ops", json_body={"status": "paid"}, depends_on=[read.id])
    assert done.record.outcome is ad.Outcome.COMPLETED


def test_stale_by_age_and_the_warn_policy(kit: ad.Toolkit, clock: FakeClock) -> None:
    read = kit.record(
        "api",
        {"url": "https://x"},
        b"{}",
        determinism="deterministic",
        key="GET https://x",
        max_age=timedelta(minutes=5),
    )
    kit.require_fresh([read.id])
    clock.advance(minutes=6)
    with pytest.raises(ad.Stale):
        kit.require_fresh([read.id])
    kit.stale_policy = "warn"
    with pytest.warns(ad.StaleWarning, match="going ahead"):
        kit.require_fresh([read.id])
    claim = kit.record("search", {"q": "x"}, b"hits", determinism="nondeterministic")
    report = kit.revalidate([claim.id])
    assert report.stale == [claim.id] and claim.id in kit.stale_ids


def test_what_any_tool_reports_reaches_the_state_document(kit: ad.Toolkit) -> None:
    # The state document knows no tool family: a tool of the user's own reports a query
    # it ran and an artifact it wrote through `ad.Report`, as the adapters do.
    kit.record(
        "lookup",
        {"q": "heapq"},
        b"3 rows",
        determinism="nondeterministic",
        meta={ad.Report.QUERY: "heapq (catalogue)"},
    )
    kit.record(
        "save",
        {"path": "notes.md", "text": "long text"},
        b"saved",
        determinism="side_effect",
        outcome=ad.Outcome.COMPLETED,
        meta={ad.Report.ARTIFACT: {"path": "notes.md", "rev": "1"}, ad.Report.WRITTEN: ["text"]},
    )
    merged = kit.state(task=TASK)
    assert merged.queries_run == ["heapq (catalogue)"]
    assert [(a.path, a.rev) for a in merged.artifacts] == [("notes.md", "1")]
    (action,) = merged.actions
    assert "notes.md" in action.operation and "long text" not in action.operation
