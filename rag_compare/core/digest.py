"""Digests of settings: SHA-256 of their canonical JSON."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "settings_digest",
]


def settings_digest(settings: Mapping[str, Any]) -> str:
    """SHA-256 of canonical JSON of ``settings``."""
    canonical = json.dumps(settings, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()
