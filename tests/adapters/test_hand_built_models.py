"""An Identity, a Scope or a part of a state document built with a value that does not
fit, or with a field it does not have, is a one-line ArgumentError from the library's
tree, naming the field."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

import addressable as ad
from addressable.adapters import Identity, Scope


@pytest.mark.parametrize(
    ("model", "given", "named"),
    [
        (Identity, {"name": 5}, "'name' does not fit"),
        (Identity, {"name": "gh", "headers": 3}, "'headers' does not fit"),
        (Identity, {"name": "gh", "origins": ["ftp://files.example"]}, "only http and https"),
        (Identity, {}, "'name' is required"),
        (Scope, {"origins": 5}, "'origins' does not fit"),
        (Scope, {"origins": ["https://a.example"], "actions": ["delete"]}, "'actions.0'"),
    ],
)
def test_a_value_that_does_not_fit_is_one_line(
    model: type[Identity | Scope], given: dict[str, Any], named: str
) -> None:
    with pytest.raises(ad.ArgumentError) as caught:
        model(**given)
    message = str(caught.value)
    assert not isinstance(caught.value, ValidationError)
    assert message.startswith(f"{model.__name__}: ")
    assert named in message
    assert "\n" not in message
    assert "Value error" not in message


def test_a_misspelt_field_is_refused_not_dropped() -> None:
    # Dropped, `origin=` would leave the identity free to go to any origin.
    with pytest.raises(ad.ArgumentError, match="'origin' is not an argument of Identity"):
        Identity(name="gh", headers={}, origin=("https://api.github.com",))
    with pytest.raises(ad.ArgumentError, match="'action' is not an argument of Scope"):
        Scope(origins=("https://a.example",), action=frozenset({"write"}))


def test_what_fits_is_built_as_before() -> None:
    identity = Identity(name="gh", headers={"Authorization": "Bearer secret:env:GH"})
    assert identity.origins is None
    scope = Scope(origins=["https://a.example"], actions={"read", "write"})
    assert scope.origins == ("https://a.example",)
    assert scope.actions == frozenset({"read", "write"})


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (lambda: ad.StateDocument(task="fix the bug"), "StateDocument: argument 'task'"),
        (lambda: ad.Task(text="t", items=["a"], owner="me"), "'owner' is not an argument"),
        (lambda: ad.Finding(item=1), "Finding: argument 'item' does not fit"),
        (lambda: ad.Task(text="t", items=["\ud800"]), "lone surrogate"),
    ],
)
def test_a_state_document_part_that_does_not_fit_is_one_line(build: Any, said: str) -> None:
    with pytest.raises(ad.ArgumentError) as caught:
        build()
    assert said in str(caught.value) and "\n" not in str(caught.value)
    assert not isinstance(caught.value, ValidationError)
