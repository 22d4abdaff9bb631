"""Values a later call reuses stay whole in a stub's names: an email is one value, and a
name another one holds only in part (`usr_12` in `usr_123`) is still kept."""

from __future__ import annotations

from addressable._identifiers import Known


def test_an_email_is_one_value() -> None:
    text = "A refund will be issued to jane.doe@example.com by Friday.\n" + "filler\n" * 20
    assert Known("").names(text) == ["jane.doe@example.com"]


def test_a_name_another_holds_only_in_part_is_kept() -> None:
    names = Known("").names("Created users: usr_12, usr_123, usr_1234 in src/app/main.py")
    assert {"usr_12", "usr_123", "usr_1234", "src/app/main.py"} <= set(names)
    assert "main.py" not in names  # a file its path holds whole is left to the path
