"""The clock of files written: now, or SOURCE_DATE_EPOCH."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from rag_compare.core.clock import creation_time
from rag_compare.core.errors import ConfigError


def test_source_date_epoch_fixes_the_time_else_it_is_now(monkeypatch: pytest.MonkeyPatch) -> None:
    assert creation_time({"SOURCE_DATE_EPOCH": "0"}) == "1970-01-01T00:00:00+00:00"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1795000000")
    assert creation_time() == "2026-11-18T11:06:40+00:00"
    before = datetime.now(tz=UTC).replace(microsecond=0)
    assert before <= datetime.fromisoformat(creation_time({})) <= datetime.now(tz=UTC)


def test_an_unusable_epoch_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="SOURCE_DATE_EPOCH must be whole seconds since 1970, got 'soon'"):
        creation_time({"SOURCE_DATE_EPOCH": "soon"})
