"""What the tests share: the shipped examples' paths, a small corpus and records, untrusted text."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_CORPUS = ROOT / "corpora" / "handbook.csv"
EXAMPLE_OLD_CORPUS = ROOT / "corpora" / "handbook_2025.csv"
HANDMADE_RUNS = ROOT / "tests" / "fixtures" / "handmade"
"""Two runs frozen from hand-written records (tests/fixtures/handmade/records): every status, failures included."""

# A small corpus: 2 answerable cases (one a rule with its exception), 1 unanswerable, 1 conflict.
SMALL_CORPUS = """\
case_id,question,answerability,source_version,required_passage_ids,acceptance_note,category
hotel@v2,What is the hotel cap?,answerable,v2,hotel-1;hotel-exc-1,"150, and 210 in Paris",rule_exception
meal@v2,What is the meal allowance?,answerable,v2,meal-1,45 euros,rule
ceo@v2,What does the CEO earn?,unanswerable,v2,,,unanswerable
mileage@v2,What is the mileage rate?,conflict,v2,"[""mile-1"", ""mile-2""]",flag the conflict,version_conflict
"""

SCRIPT = "<script>window.__pwned = 1</script>"
IMAGE = '<img src=x onerror="window.__pwned = 1">'
PAYLOAD = f"{SCRIPT} {IMAGE} | **bold** [link](javascript:alert(1)) `tick`"
"""Untrusted text: HTML that would run, and Markdown that would restructure a table or add a link."""

# Records for SMALL_CORPUS: one failed request; ceo@v2 was not attempted.
SMALL_RECORDS = """\
{"case_id": "hotel@v2", "retrieved_passage_ids": ["hotel-1", "x"], "retrieved_scores": [2.0, 1.0], "context": "[hotel-1] 150", "context_passage_ids": ["hotel-1"], "answer": "150 euros.", "latency_ms": 812.5, "prompt_tokens": 120, "completion_tokens": 8}
{"case_id": "meal@v2", "status": "failed", "error": "HTTP 500", "retrieved_passage_ids": ["meal-1"], "retrieved_scores": [3.5]}
{"case_id": "mileage@v2", "status": "ok", "retrieved_passage_ids": ["mile-1", "mile-2"], "answer": "Sources disagree.", "team": "ops"}
"""

COMPOSED, DECOMPOSED, ZERO_WIDTH = "caf\u00e9@v1", "cafe\u0301@v1", "ho\u200btel@v1"
"""Case ids that only look alike: an accent composed, the same accent decomposed, a zero-width space."""
