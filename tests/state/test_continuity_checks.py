"""Checkpoints, recovery and staleness hold against what a model writes: the newest
checkpoint is the one saved last, what a checkpoint cites is pinned for a while and for
its session only, no credential in a cited URL reaches the store, an action cited by a
prefix of its id is listed once, and a bad id in a list changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

import addressable as ad
from addressable.state.continuity import CHECKPOINT_PIN, CHECKPOINT_PIN_AGE
from tests.helpers import FakeClock, put_two_sharing_a_prefix

TASK = ad.Task(text="t", items=["a"])


def at_step(step: str, **extra: object) -> ad.StateDocument:
    return ad.StateDocument(
        task=TASK,
        open=[ad.OpenItem(item="a", blocked_on=step)],
        checkpoint=ad.Checkpoint(step=step),
        **extra,  # type: ignore[arg-type]
    )


def fetched(kit: ad.Toolkit, url: str) -> ad.Result:
    return kit.record(
        "fetch", {"url": url}, f"page {url}".encode(), determinism="deterministic", key=url
    )


def citing(*evidence: str) -> ad.StateDocument:
    finding = ad.Finding(item="a", status="found", established="x", evidence=list(evidence))
    return ad.StateDocument(task=TASK, findings=[finding])


# -- recover ------------------------------------------------------------------------------


def test_recover_restores_the_checkpoint_saved_last_even_one_saved_before(
    kit: ad.Toolkit, clock: FakeClock
) -> None:
    # The work went back to step 1: saving its document again is the same record seen
    # again, and that sighting makes it the newest.
    for step in ("step 1", "step 2", "step 1"):
        kit.checkpoint(at_step(step))
        clock.advance(seconds=1)
    recovered = kit.recover().document.checkpoint
    assert recovered is not None and recovered.step == "step 1"
    kit.checkpoint(at_step("step 2"))
    recovered = kit.recover().document.checkpoint
    assert recovered is not None and recovered.step == "step 2"


# -- what a checkpoint pins -------------------------------------------------------------


def test_a_checkpoint_pins_what_it_cites_for_its_session_and_a_while(
    store: ad.Store, clock: FakeClock
) -> None:
    other = ad.Toolkit(store, session="other", clock=clock)
    cited = fetched(other, "https://x/secret-doc")
    store.end_session("other")
    kit = ad.Toolkit(store, session="mine", clock=clock)
    kit.checkpoint(citing(cited.id[:6]))
    pin = store.pin_info(cited.id)
    assert pin is not None
    assert (pin.reason, pin.sessions) == (CHECKPOINT_PIN, ["mine"])
    assert pin.until == clock.now + CHECKPOINT_PIN_AGE
    clock.advance(days=3)
    kit.checkpoint(citing(cited.id))  # cited again: the age restarts
    pin = store.pin_info(cited.id)
    assert pin is not None and pin.until == clock.now + CHECKPOINT_PIN_AGE
    # The pins end with the session that made them (the cited record's and the two
    # checkpoints'), and gc then takes the record.
    assert store.end_session("mine") == 3
    assert not store.is_pinned(cited.id)
    store.gc(max_age=timedelta(days=1), now=clock.now + timedelta(days=2))
    with pytest.raises(ad.NotFound):
        store.get(cited.id)


def test_a_checkpoint_pin_ends_with_its_age(kit: ad.Toolkit, clock: FakeClock) -> None:
    cited = fetched(kit, "https://x/doc")
    kit.checkpoint(citing(cited.id))
    later = clock.now + CHECKPOINT_PIN_AGE + timedelta(seconds=1)
    assert kit.store.is_pinned(cited.id, now=clock.now)
    assert not kit.store.is_pinned(cited.id, now=later)
    kit.store.gc(max_age=timedelta(days=1), now=later)
    with pytest.raises(ad.NotFound):
        kit.store.get(cited.id)


def test_a_checkpoint_neither_weakens_a_user_pin_nor_ends_another_sessions_stub_pin(
    store: ad.Store,
) -> None:
    # The store tells a live pin from an ended one by the time it runs at: the kit's
    # clock starts there.
    clock = FakeClock(datetime.now(UTC))
    kit = ad.Toolkit(store, session="mine", clock=clock)
    kept = fetched(kit, "https://x/kept")
    stubbed = fetched(kit, "https://x/stubbed")
    store.pin(kept.id)
    until = clock.now + timedelta(days=30)
    store.pin(stubbed.id, reason="stub", session="other", until=until)
    kit.checkpoint(citing(kept.id, stubbed.id))
    user, joined = store.pin_info(kept.id), store.pin_info(stubbed.id)
    assert user is not None and (user.reason, user.sessions, user.until) == ("user", [], None)
    # One pin for both: the other session's and the checkpoint's, to the later end.
    assert joined is not None and (joined.sessions, joined.until) == (["mine", "other"], until)
    store.end_session("mine")
    assert store.is_pinned(kept.id, now=clock.now)
    assert store.is_pinned(stubbed.id, now=until - timedelta(seconds=1))


def test_a_checkpoint_keeps_what_it_cites_after_another_sessions_stub_pin_ends(
    store: ad.Store,
) -> None:
    clock = FakeClock(datetime.now(UTC))
    stubbing = ad.Toolkit(store, session="A", clock=clock)
    cited = fetched(stubbing, "https://x/cited")
    store.pin(cited.id, reason="stub", session="A", until=clock.now + timedelta(days=7))
    clock.advance(days=1)
    ad.Toolkit(store, session="B", clock=clock).checkpoint(citing(cited.id))
    checkpoint_end = clock.now + CHECKPOINT_PIN_AGE
    store.end_session("A")  # the stub's session ends; the checkpoint's has not
    store.gc(max_age=timedelta(seconds=1), now=checkpoint_end - timedelta(seconds=1))
    assert store.get(cited.id).id == cited.id
    pin = store.pin_info(cited.id)
    assert pin is not None and (pin.sessions, pin.until) == (["B"], checkpoint_end)
    store.gc(max_age=timedelta(seconds=1), now=checkpoint_end + timedelta(seconds=1))
    with pytest.raises(ad.NotFound):
        store.get(cited.id)


def test_a_checkpoint_is_kept_as_long_as_what_it_cites(kit: ad.Toolkit, clock: FakeClock) -> None:
    cited = fetched(kit, "https://x/doc")
    kit.checkpoint(citing(cited.id))
    kit.store.gc(max_age=timedelta(seconds=1), now=clock.now + CHECKPOINT_PIN_AGE / 2)
    recovered = kit.recover()  # the document, not only what it cites, is still there
    assert recovered.document.findings[0].evidence == [cited.id]
    assert kit.store.get(cited.id).id == cited.id


# -- credentials ----------------------------------------------------------------------------


def test_a_checkpoint_stores_no_credential_written_in_a_url(
    kit: ad.Toolkit, secret_env: Callable[[str], str]
) -> None:
    token = secret_env("CK_TOKEN")
    kit.secrets.resolve("secret:env:CK_TOKEN")  # a value the kit has sent, so it knows it
    url = (
        "https://user:hunter2pass@api.example.com/v1/x?q=heapq&api_key=sk_live_51Habcdefghij&page=2"
    )
    document = citing(url, "https://api.example.com/y?accessToken=abc123def")
    document.relational_context = (
        f"the client logs in at {url}#access_token=frag0token0 with {token}"
    )
    saved = kit.checkpoint(document)
    stored = kit.store.read(saved.record)
    for leaked in (b"hunter2pass", b"sk_live_51H", b"abc123def", b"frag0token0", token.encode()):
        assert leaked not in stored
    recovered = kit.recover().document
    assert recovered.findings[0].evidence[0] == (
        "https://user:%5Bredacted%5D@api.example.com/v1/x?q=heapq&api_key=[redacted]&page=2"
    )
    assert recovered.findings[0].evidence[1] == "https://api.example.com/y?accessToken=[redacted]"
    assert "[secret:env:CK_TOKEN]" in recovered.relational_context


def test_a_url_with_no_credential_is_stored_as_written(kit: ad.Toolkit) -> None:
    url = "https://docs.python.org/3/library/queue.html?highlight=thread#module-queue"
    ref = "https://secret:env:DOCS_USER:secret:env:DOCS_PASS@h/x?token=secret:env:DOCS_TOKEN"
    kit.checkpoint(citing(url, ref))
    assert kit.recover().document.findings[0].evidence == [url, ref]


# -- the harness's state -----------------------------------------------------------------


def test_an_action_cited_by_a_prefix_of_its_id_is_listed_once(kit: ad.Toolkit) -> None:
    done = kit.record(
        "api",
        {"method": "POST", "url": "https://x/refund"},
        b"ok",
        determinism="side_effect",
        outcome="completed",
    )
    read = fetched(kit, "https://x/a")
    when = done.record.observed_at.isoformat()
    cited = ad.StateAction(
        id=done.id[:8], operation="refund", outcome="completed", observed_at=when
    )
    seen = ad.StateObservation(id=read.id[:8], source="x", value="page", observed_at=when)
    document = ad.StateDocument(
        task=TASK,
        open=[ad.OpenItem(item="a", blocked_on="x")],
        actions=[cited, cited.model_copy(update={"id": done.id})],
        observations=[seen],
    )
    merged = kit.state(task=TASK, document=document)
    assert [a.id for a in merged.actions] == [done.id]
    assert merged.actions[0].operation.startswith("api ")  # the store's word wins
    assert [o.id for o in merged.observations] == [read.id[:8]]
    assert merged.problems(store=kit.store) == []


def test_an_action_the_store_does_not_have_stays_for_problems_to_name(kit: ad.Toolkit) -> None:
    ghost = ad.StateAction(id="deadbeef", operation="refund", outcome="completed", observed_at="x")
    document = ad.StateDocument(
        task=TASK, open=[ad.OpenItem(item="a", blocked_on="x")], actions=[ghost]
    )
    merged = kit.state(task=TASK, document=document)
    assert merged.actions == [ghost]
    assert [p.kind for p in merged.problems(store=kit.store)] == ["action_mismatch"]


# -- staleness with bad ids -------------------------------------------------------------


def test_revalidate_lists_a_record_that_is_gone_as_stale(kit: ad.Toolkit, clock: FakeClock) -> None:
    claim = kit.record("search", {"q": "x"}, b"hits", determinism="nondeterministic")
    gone = fetched(kit, "https://x/gone")
    kit.store.gc(max_age=timedelta(days=1), now=clock.now + timedelta(days=2))
    report = kit.revalidate([claim.id, "deadbeefdead", gone.id])
    assert (report.stale, report.fresh) == ([claim.id, "deadbeefdead", gone.id], {})
    assert kit.stale_ids == set()  # gc took both records: nothing is left to mark


def test_revalidate_marks_what_it_cannot_re_read(kit: ad.Toolkit) -> None:
    claim = kit.record("search", {"q": "x"}, b"hits", determinism="nondeterministic")
    report = kit.revalidate([claim.id[:8], "deadbeefdead"])
    assert report.stale == [claim.id, "deadbeefdead"]
    assert kit.stale_ids == {claim.id}


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        pytest.param("zz", ad.BadId, id="malformed"),
        pytest.param("abcdef", ad.AmbiguousId, id="ambiguous"),
    ],
)
def test_a_bad_id_in_a_list_changes_nothing(
    kit: ad.Toolkit, clock: FakeClock, bad: str, error: type[ad.AddressableError]
) -> None:
    put_two_sharing_a_prefix(kit.store, clock.now)
    claim = kit.record("search", {"q": "x"}, b"hits", determinism="nondeterministic")
    with pytest.raises(error):
        kit.revalidate([claim.id, bad])
    assert kit.stale_ids == set()
    with pytest.raises(error):
        kit.mark_stale([claim.id, bad])
    assert kit.stale_ids == set()
    kit.mark_stale([claim.id])
    with pytest.raises(error):
        kit.unmark_stale([claim.id, bad])
    assert kit.stale_ids == {claim.id}


def test_one_string_for_a_list_of_ids_is_a_one_line_error(kit: ad.Toolkit) -> None:
    read = fetched(kit, "https://x/a")
    for call in (kit.require_fresh, kit.mark_stale, kit.unmark_stale, kit.revalidate):
        with pytest.raises(ad.ArgumentError, match="give a list of ids") as caught:
            call(read.id)
        assert "\n" not in str(caught.value)
    assert kit.stale_ids == set()


def test_a_hypothesis_on_an_action_cited_by_a_prefix_stays_sound_once_merged() -> None:
    now = [datetime(2026, 3, 11, 9, 0, tzinfo=UTC)]
    kit = ad.Toolkit(ad.open_store("memory://"), session="s", clock=lambda: now[0])
    done = kit.record(
        "api", {"method": "POST"}, b"ok", determinism="side_effect", outcome="completed"
    )
    now[0] += timedelta(seconds=5)
    read = kit.record("fetch", {"url": "u"}, b"refunded", determinism="deterministic", key="u")
    task = ad.Task(text="t", items=["a"])
    document = ad.StateDocument(
        task=task,
        open=[ad.OpenItem(item="a", blocked_on="x")],
        actions=[
            ad.StateAction(
                id=done.id[:8],
                operation="refund",
                outcome="completed",
                observed_at=done.record.observed_at.isoformat(),
            )
        ],
        observations=[
            ad.StateObservation(
                id=read.id[:8],
                source="u",
                value="refunded",
                observed_at=read.record.observed_at.isoformat(),
            )
        ],
        hypotheses=[
            ad.Hypothesis(
                id="h1",
                claim="the refund went through",
                based_on=[read.id[:8]],
                status="confirmed",
                depends_on=done.id[:8],
            )
        ],
    )
    assert document.problems(store=kit.store) == []
    merged = kit.state(task=task, document=document)
    assert merged.hypotheses[0].depends_on == done.id
    assert merged.problems(store=kit.store) == []


@pytest.mark.parametrize("run", range(10))  # ids are random: an order by id would pass some
def test_recover_restores_the_checkpoint_saved_last_when_the_clock_stands_still(
    run: int,
) -> None:
    still = datetime(2026, 3, 11, 9, 0, tzinfo=UTC)
    kit = ad.Toolkit(ad.open_store("memory://"), session=f"s{run}", clock=lambda: still)
    task = ad.Task(text="t", items=["a"])

    def saved(step: str) -> ad.StateDocument:
        document = ad.StateDocument(task=task, open=[ad.OpenItem(item="a", blocked_on=step)])
        kit.checkpoint(document)
        return document

    for steps in (["1", "2", "1"], ["1", "2", "3", "1"], ["2", "1"], ["3", "2"]):
        documents = [saved(f"{step} of run {run}") for step in steps]
        assert kit.recover().document == documents[-1]
