"""The tests, one folder for each layer of the package (see tests/helpers for what they
share)."""

import pytest

# The helpers' asserts report what they compared, as the tests' own do.
pytest.register_assert_rewrite("tests.helpers")
