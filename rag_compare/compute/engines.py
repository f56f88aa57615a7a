"""The engines a comparison can run on (``compare(engine=...)``) and those an LLM judge can send from,
named where the command line can read them without loading the engines themselves."""

from __future__ import annotations

__all__ = ["DEFAULT_BUCKETS", "ENGINES", "SCORING_ENGINES"]

ENGINES = ("memory", "streaming", "ray")
"""``memory``: every case held in this process; ``streaming``: the cases spilled to disk in buckets, one held
at a time; ``ray``: Ray Data tasks (the ``rag-compare[ray]`` extra)."""
DEFAULT_BUCKETS = 16
"""The buckets of the ``streaming`` and ``ray`` engines, unless both runs are run directories of as many."""
SCORING_ENGINES = ("local", "ray")
"""Where an LLM judge's requests are sent from (``OpenAIJudge(engine=...)``): this process, or Ray tasks."""
