"""Signals stored with a run when it is frozen, and when a comparison reads them instead of computing them.

A run frozen by ``freezing`` holds, in its ``stored_signals`` column (a struct per record), each record's
signals as a comparison with the defaults computes them (``case_signals``): the offline judge as shipped
(``LexicalJudge()``), the ranked lists cut at the run's ``top_k``, the run's own labels, no passages and no
scores; and the ``language`` the record is read in. Beside it, in ``stored_claims``, that judge's claim
verdicts of each record that succeeded (``LexicalJudge.claims``). Its config's ``stored_signals`` key says
what decided them: the judge's fingerprint, ``k`` and the library version.

A comparison reads them (``side_samples``) when everything that decides them is the same for that side
(``reads_stored``): the judge's fingerprint, ``k``, this library's version, and the signals' names and
types; no passages and no scores; and, with a corpus, every record's labels that a signal depends on
(``LABEL_COLUMNS`` and ``language``) are the corpus' own. Otherwise the side's signals are computed, as
for a run frozen without them: the comparison is the same either way, only quicker with them (the
signals are most of a comparison's work). With passages or another ``k``, but all else the same, the judge's
verdicts and the languages are still read (``reads_stored_verdicts``: they depend on neither), the other
signals computed. A comparison reads the stored claims when its judge is the one
that stored them and its labels leave the run's as they were (``stored_claims``), whatever else it was
given: a claim's verdict depends on the answer, the context, the question and the language alone.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from rag_compare._version import __version__
from rag_compare.compute.bucket_passes import SLICE_ROWS
from rag_compare.compute.case_signals import case_signals
from rag_compare.compute.lexical_judge import LexicalJudge
from rag_compare.core.contract import LABEL_COLUMNS, LANGUAGE, STORED_CLAIMS, STORED_SIGNALS, record_ok
from rag_compare.core.errors import CompareError
from rag_compare.core.protocols import K_EXPECTED, Judge, is_k
from rag_compare.io.runs import OpenedRun, Run
from rag_compare.io.scores import Scores

__all__ = ["StoredSignals", "reads_stored", "reads_stored_verdicts", "run_k", "stored_claims"]


class StoredSignals:
    """The signals ``freezing`` stores with a run (see the module): a ``core.protocols.RunSignals``."""

    def settings(self, top_k: int | None) -> dict[str, Any]:
        return _settings(LexicalJudge().fingerprint, top_k)

    def columns(self, records: pl.DataFrame, top_k: int | None) -> list[pl.Series]:
        return self._computed(records, top_k, with_claims=True)

    def signals(self, records: pl.DataFrame, top_k: int | None) -> pl.Series:
        """The ``stored_signals`` column alone (the claims not asked for)."""
        return self._computed(records, top_k, with_claims=False)[0]

    def _computed(self, records: pl.DataFrame, top_k: int | None, *, with_claims: bool) -> list[pl.Series]:
        judge = LexicalJudge()
        parts, claims = [], []
        for start in range(0, max(records.height, 1), SLICE_ROWS):
            part = records.slice(start, SLICE_ROWS)
            languages = judge.languages_of(part)
            signals = case_signals(part, judge, k=top_k, languages=languages)
            parts.append(signals.drop("case_id").with_columns(languages.alias(LANGUAGE)))
            if with_claims:
                claims.append(_claims(part, judge, languages))
        stored = pl.concat(parts).to_struct(STORED_SIGNALS)
        return [stored, pl.concat(claims).alias(STORED_CLAIMS)] if with_claims else [stored]


def _claims(records: pl.DataFrame, judge: LexicalJudge, languages: pl.Series) -> pl.Series:
    """The judge's claim verdicts of each record that succeeded, read in ``languages``; null for the others."""
    claims = judge.claims(records.with_columns(languages.alias(LANGUAGE)))
    return pl.select(pl.when(records.select(record_ok()).to_series()).then(claims)).to_series()


def stored_claims(run: Run | OpenedRun, judge: Judge, labels: pl.DataFrame | None) -> bool:
    """Whether ``run`` stores the claim verdicts ``judge`` gives: it is the judge that stored them, and the
    corpus' ``labels`` (when given) leave every record's question and language as they were."""
    schema = run.records.schema if isinstance(run, Run) else pl.Schema(run.frozen.schema)
    settings = run.config.get(STORED_SIGNALS) or {}
    if STORED_CLAIMS not in schema or settings.get("judge") != judge.fingerprint:
        return False
    return labels is None or not _relabelled(run, schema, labels)


def reads_stored(
    run: Run | OpenedRun,
    *,
    judge: Judge,
    k: int | None,
    labels: pl.DataFrame | None,
    passages: pl.DataFrame | None,
    scores: Scores | None,
) -> bool:
    """Whether a comparison of ``run`` with these settings reads its stored signals (see the module)."""
    schema = run.records.schema if isinstance(run, Run) else pl.Schema(run.frozen.schema)
    if STORED_SIGNALS not in schema or passages is not None or scores is not None:
        return False
    if run.config.get(STORED_SIGNALS) != _settings(judge.fingerprint, k) or not _same_fields(schema, k):
        return False
    return labels is None or not _relabelled(run, schema, labels)


def reads_stored_verdicts(
    run: Run | OpenedRun, *, judge: Judge, labels: pl.DataFrame | None, scores: Scores | None
) -> bool:
    """Whether a comparison of ``run`` with these settings reads the judge's verdicts (and each record's language)
    from its stored signals, whatever its passages and ``k``: the verdicts depend on neither, so they are read
    when the stored signals would be with the run's own ``k`` and no passages."""
    stored_k = (run.config.get(STORED_SIGNALS) or {}).get("k")
    return reads_stored(run, judge=judge, k=stored_k, labels=labels, passages=None, scores=scores)


def _settings(judge: str, k: int | None) -> dict[str, Any]:
    return {"judge": judge, "k": k, "rag_compare_version": __version__}


def _same_fields(schema: pl.Schema, k: int | None) -> bool:
    """Whether the stored signals of a run of ``schema`` are the ones this code computes, of the same types
    (a signal added since they were stored, say, within one version of the library, is not)."""
    empty = pl.DataFrame(schema={name: dtype for name, dtype in schema.items() if name != STORED_SIGNALS})
    return StoredSignals().signals(empty, k).dtype == schema[STORED_SIGNALS]


def _relabelled(run: Run | OpenedRun, schema: pl.Schema, labels: pl.DataFrame) -> bool:
    """Whether the corpus' ``labels`` give a record of ``run`` (of ``schema``) another label that a signal
    depends on (the comparison takes the corpus' label where it has one)."""
    names = [name for name in (*LABEL_COLUMNS, LANGUAGE) if name in labels.columns]
    corpus = labels.select("case_id", *(pl.col(name).alias(f"corpus_{name}") for name in names))
    own = {name: pl.col(name) if name in schema else pl.lit(None, labels.schema[name]) for name in names}
    moved = pl.any_horizontal(
        pl.col(f"corpus_{name}").is_not_null() & pl.col(f"corpus_{name}").ne_missing(own[name]) for name in names
    ).any()
    read = ["case_id", *(name for name in names if name in schema)]
    batches = [run.records.select(read)] if isinstance(run, Run) else run.batches(read)
    return any(batch.join(corpus, on="case_id", how="inner").select(moved).item() for batch in batches)


def run_k(run: Run | OpenedRun, k: int | None) -> int | None:
    """``k`` when given, else the run's ``top_k``, else ``None`` (each list's own length)."""
    if k is not None:
        return k
    top_k: object = run.config.get("top_k")
    if top_k is None:
        return None
    if not is_k(top_k):
        raise CompareError(
            f"run '{run.name}': its config's top_k is {top_k!r}, not {K_EXPECTED}. "
            "Pass `k` to choose the cut-off for both runs."
        )
    return top_k
