"""A timing test that cannot decide on this machine today says so."""
import pytest

from nbtest import ROOT

CANNOT_TELL = "cannot tell today: "
# `make test` prints this file's lines at its end, so that a test that
# always skips is seen
CANNOT_TELL_LOG = ROOT / ".cache" / "cannot-tell.log"


def cannot_tell(reason):
    """Skip a timing test whose measurement cannot decide on this machine
    now, saying what was measured (counted and printed by make test)."""
    pytest.skip(CANNOT_TELL + reason)
