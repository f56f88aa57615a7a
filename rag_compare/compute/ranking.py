"""Which of several candidates is best, and only when the data say so.

The contender is the candidate with the best mean of the first ranked signal (``RankKey``: a signal in a
scope, ``recall`` or ``all_cases.grounded``). It is tested against every other candidate on each ranked
signal, paired on the cases both candidates have a value of in that scope, as a comparison's aggregates are
(``aggregates.aggregate_signals``: the 95% bootstrap interval of the paired delta, the sign-flip permutation
test, or McNemar's for a flag without repeats). Those tests are one Holm family. The contender is named best
only when every one of them finds it better: its interval on the good side of 0 and its Holm p below
``alpha``. Otherwise there is no clear winner, and ``Ranking.reason`` says which test stood in the way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from rag_compare.compute.aggregates import aggregate_signals
from rag_compare.compute.comparison import Comparison
from rag_compare.compute.partials import SCOPES, scoped_value
from rag_compare.compute.stats import holm
from rag_compare.core.errors import CompareError
from rag_compare.core.listing import counted, truncated
from rag_compare.core.signals import Signal

__all__ = ["DEFAULT_RANK_BY", "TESTS_SCHEMA", "RankKey", "Ranking", "rank_candidates", "rank_keys"]

DEFAULT_RANK_BY = ("recall", "grounded")
"""What candidates are ranked by when nothing else is asked: finding the passages, and keeping to them."""
TESTS_SCHEMA = {
    "against": pl.String,
    "scope": pl.String,
    "signal": pl.String,
    "contender": pl.Float64,
    "other": pl.Float64,
    "delta": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "p_value": pl.Float64,
    "p_adjusted": pl.Float64,
    "n": pl.Int64,
    "better": pl.Boolean,
}
"""A test of the contender against another candidate: both means over the paired cases, the delta
(contender minus other) with its interval, p and its Holm adjustment, and whether it found the contender
better."""
_SHOWN_OBSTACLES = 3


@dataclass(frozen=True)
class RankKey:
    """A signal in a scope that candidates are ranked by."""

    scope: str
    signal: Signal

    @property
    def text(self) -> str:
        """As written: the signal's name (in the paired scope), else ``scope.signal``."""
        return _key_text(self.scope, self.signal.name)


def rank_keys(rank_by: Sequence[str], signals: Sequence[Signal]) -> tuple[RankKey, ...]:
    """``rank_by`` (``signal`` or ``scope.signal``, scope ``paired`` by default) read against ``signals``.

    Raises ``CompareError`` for none, an unknown scope or signal, or one given twice."""
    if isinstance(rank_by, str) or not rank_by:
        raise CompareError(f"`rank_by` must name one signal or more, as a list: {', '.join(DEFAULT_RANK_BY)}.")
    by_name = {signal.name: signal for signal in signals}
    keys = []
    for text in rank_by:
        scope, _, name = text.strip().rpartition(".")
        scope = scope or "paired"
        if scope not in SCOPES or name not in by_name:
            raise CompareError(
                f"`rank_by` names {text!r}, which is no signal: give SIGNAL or SCOPE.SIGNAL, the "
                f"scope one of {', '.join(SCOPES)}, the signal one of {truncated(list(by_name), 20)}."
            )
        keys.append(RankKey(scope, by_name[name]))
    if len(set(keys)) < len(keys):
        raise CompareError(f"`rank_by` names a signal twice: {', '.join(rank_by)}.")
    return tuple(keys)


@dataclass(frozen=True)
class Ranking:
    """The contender (``None`` when no candidate leads), the candidate named best (``None``: no clear winner),
    why, and the tests behind it (``TESTS_SCHEMA``, in the order of the other candidates, then of
    ``rank_by``)."""

    rank_by: tuple[RankKey, ...]
    alpha: float
    contender: str | None
    best: str | None
    reason: str
    tests: pl.DataFrame

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank_by": [key.text for key in self.rank_by],
            "alpha": self.alpha,
            "contender": self.contender,
            "best": self.best,
            "reason": self.reason,
            "tests": self.tests.to_dicts(),
        }


def rank_candidates(
    comparisons: Mapping[str, Comparison], aggregates: pl.DataFrame, keys: Sequence[RankKey], alpha: float
) -> Ranking:
    """The ranking of the candidates of ``comparisons`` (by name, each compared with the same baseline), whose
    aggregates with the candidate's name as ``run`` are ``aggregates``, by ``keys``, at ``alpha``."""
    keys = tuple(keys)
    if len(comparisons) < 2:
        return _no_winner(keys, alpha, None, "one candidate: there is no other to rank it against.")
    contender, why = _contender(aggregates, keys[0])
    if contender is None:
        return _no_winner(keys, alpha, None, why)
    tests = _tests(comparisons, contender, keys)
    adjusted = holm(tests.get_column("p_value").to_list())
    tests = tests.with_columns(pl.Series("p_adjusted", adjusted, dtype=pl.Float64))
    signals = {key.text: key.signal for key in keys}
    tests = tests.with_columns(_better(signals, alpha).alias("better")).select(list(TESTS_SCHEMA))
    obstacles = tests.filter(~pl.col("better"))
    if obstacles.is_empty():
        named = " and ".join(key.text for key in keys)
        reason = f"{contender} is better than every other candidate on {named} (Holm p < {alpha:g}, 95% CI off 0)."
        return Ranking(keys, alpha, contender, contender, reason, tests)
    return Ranking(keys, alpha, contender, None, _obstacles_text(contender, keys[0], obstacles, alpha), tests)


def _no_winner(keys: tuple[RankKey, ...], alpha: float, contender: str | None, why: str) -> Ranking:
    return Ranking(keys, alpha, contender, None, f"no clear winner: {why}", pl.DataFrame(schema=TESTS_SCHEMA))


def _contender(aggregates: pl.DataFrame, key: RankKey) -> tuple[str | None, str]:
    """The candidate with the best mean of ``key`` (``None`` and why, when none has a value or two tie)."""
    means = aggregates.filter(
        (pl.col("scope") == key.scope) & (pl.col("signal") == key.signal.name) & pl.col("candidate").is_not_null()
    ).sort("candidate", descending=key.signal.higher_is_better, maintain_order=True)
    if means.is_empty():
        return None, f"no candidate has a value of {key.text}."
    top = means.get_column("candidate")[0]
    leaders = means.filter(pl.col("candidate") == top).get_column("run").to_list()
    if len(leaders) > 1:
        return None, f"{' and '.join(leaders[:2])} tie on {key.text} ({top:.4g})."
    return str(leaders[0]), ""


def _tests(comparisons: Mapping[str, Comparison], contender: str, keys: Sequence[RankKey]) -> pl.DataFrame:
    """The contender tested against each other candidate on each key (``p_adjusted`` and ``better`` not yet)."""
    reduced = comparisons[contender].reduced
    scopes = list(dict.fromkeys(key.scope for key in keys))
    leading = {scope: _scoped_values(comparisons[contender], keys, scope) for scope in scopes}
    rows = []
    for name, comparison in comparisons.items():
        if name == contender:
            continue
        for scope in scopes:
            signals = [key.signal for key in keys if key.scope == scope]
            pairs = leading[scope].join(_scoped_values(comparison, keys, scope, side="baseline"), on="case_id")
            found = aggregate_signals(
                _with_variances(pairs, signals, reduced), signals, reduced=reduced, scopes=["paired"]
            )
            found = found.with_columns(pl.lit(scope).alias("scope"))  # tested as pairs: each in its own scope
            rows.append(found.select(pl.lit(name).alias("against"), pl.all()))
    key_order = pl.concat_str("scope", pl.lit("."), "signal").replace_strict(
        [f"{key.scope}.{key.signal.name}" for key in keys], range(len(keys))
    )
    return (
        pl.concat(rows)
        .sort(key_order, maintain_order=True)
        .sort(pl.col("against").replace_strict(list(comparisons), range(len(comparisons))), maintain_order=True)
        .rename({"candidate": "contender", "baseline": "other"})
        .select("against", "scope", "signal", "contender", "other", "delta", "ci_low", "ci_high", "p_value", "n")
    )


def _scoped_values(
    comparison: Comparison, keys: Sequence[RankKey], scope: str, side: str = "candidate"
) -> pl.DataFrame:
    """Per case of ``comparison``, its candidate's value of each key of ``scope`` there, named as ``side``'s."""
    signals = [key.signal for key in keys if key.scope == scope]
    values = [
        scoped_value(signal, "candidate", scope, comparison.reduced).alias(f"{side}_{signal.name}")
        for signal in signals
    ]
    return comparison.scan_cases().select("case_id", *values).collect()


def _with_variances(pairs: pl.DataFrame, signals: Sequence[Signal], reduced: bool) -> pl.DataFrame:
    """With repeats, the paired scope reads each side's within-case variance: none here, between candidates."""
    if not reduced:
        return pairs
    nulls = [
        pl.lit(None, pl.Float64).alias(f"{side}_{s.name}_variance")
        for s in signals
        for side in ("baseline", "candidate")
    ]
    return pairs.with_columns(nulls)


def _better(signals: Mapping[str, Signal], alpha: float) -> pl.Expr:
    """Whether a test found the contender better: its interval on the good side of 0 and its Holm p below alpha."""
    higher = pl.col("signal").replace_strict({name: s.higher_is_better for name, s in signals.items()}, default=True)
    good_side = pl.when(higher).then(pl.col("ci_low") > 0).otherwise(pl.col("ci_high") < 0)
    return (good_side & (pl.col("p_adjusted") < alpha)).fill_null(False)


def _obstacles_text(contender: str, first: RankKey, obstacles: pl.DataFrame, alpha: float) -> str:
    """``no clear winner: A leads on recall but is not better than B on grounded (delta ..., 95% CI [...], p
    (Holm) ...)``, for the first few tests that did not find it better."""
    shown = []
    for row in obstacles.head(_SHOWN_OBSTACLES).iter_rows(named=True):
        shown.append(f"than {row['against']} on {_key_text(row['scope'], row['signal'])} ({_numbers(row)})")
    more = obstacles.height - len(shown)
    rest = f"; and {counted(more, 'more test')}" if more > 0 else ""
    return (
        f"no clear winner: {contender} leads on {first.text} but is not better (Holm p < {alpha:g}, 95% CI off 0) "
        + "; ".join(shown)
        + rest
        + "."
    )


def _key_text(scope: str, signal: str) -> str:
    return signal if scope == "paired" else f"{scope}.{signal}"


def _numbers(row: Mapping[str, Any]) -> str:
    if row["n"] == 0 or row["delta"] is None:
        return "no paired case"
    ci = "no CI" if row["ci_low"] is None else f"95% CI [{row['ci_low']:+.4f}, {row['ci_high']:+.4f}]"
    p = "no p" if row["p_adjusted"] is None else f"p (Holm) {row['p_adjusted']:.3g}"
    return f"delta {row['delta']:+.4f}, {ci}, {p}, n {row['n']}"
