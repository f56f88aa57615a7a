"""The one clock of files written: now, or ``SOURCE_DATE_EPOCH`` when set (reproducible builds)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime

from rag_compare.core.errors import ConfigError

__all__ = ["creation_time"]


def creation_time(environ: Mapping[str, str] | None = None) -> str:
    """Now, in UTC, to the second (ISO 8601), or ``SOURCE_DATE_EPOCH`` of ``environ`` (default
    ``os.environ``) when set, so rebuilt files are byte-identical."""
    epoch = (os.environ if environ is None else environ).get("SOURCE_DATE_EPOCH")
    if epoch is not None:
        try:
            moment = datetime.fromtimestamp(int(epoch), tz=UTC)
        except ValueError:
            raise ConfigError(f"SOURCE_DATE_EPOCH must be whole seconds since 1970, got {epoch!r}.") from None
    else:
        moment = datetime.now(tz=UTC)
    return moment.isoformat(timespec="seconds")
