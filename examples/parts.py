"""An example pipeline part: a generator behind an endpoint that is down for some requests.

``EndpointOutage`` wraps a generator (the built-in ``ExtractiveGenerator`` in ``examples/capture.py``)
and, for the case ids it is given, fails every attempt the way an unavailable chat-completions endpoint
does: it raises ``openai.InternalServerError`` (HTTP 503, ``Retry-After: 0``). The capture runner treats
it as it treats a real one: it retries (without waiting, as the header asks) until its retries are
spent, then keeps the case as a ``failed`` record with ``error`` "HTTP 503: ...", ``failed_stage``
"generate" and the retrieval and context the stages before it produced. Every other case goes to the
wrapped generator unchanged.

An outage is not a pipeline setting: ``config`` is the wrapped generator's, so the run config says what
the pipeline was, and the record's error text says the outage was simulated here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import httpx2
import openai

from rag_compare import Case, Context, Generation, Generator

__all__ = ["EndpointOutage"]

OUTAGE_MESSAGE = "Service Unavailable (an outage simulated by examples/parts.py)"


class EndpointOutage:
    """``generator``, but every request for ``case_ids`` fails with HTTP 503 (see the module)."""

    def __init__(self, generator: Generator, case_ids: Iterable[str]) -> None:
        self.generator = generator
        self.case_ids = frozenset(case_ids)

    @property
    def config(self) -> dict[str, Any]:
        """The wrapped generator's settings: the outage is not one."""
        return dict(getattr(self.generator, "config", {}))

    def __call__(self, case: Case, context: Context) -> Generation | Any:
        """The wrapped generator's answer, or HTTP 503 for a case of ``case_ids``."""
        if case.case_id in self.case_ids:
            request = httpx2.Request("POST", "http://localhost/v1/chat/completions")
            response = httpx2.Response(503, headers={"retry-after": "0"}, request=request)
            raise openai.InternalServerError(OUTAGE_MESSAGE, response=response, body=None)
        return self.generator(case, context)
