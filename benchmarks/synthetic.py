"""A synthetic corpus and two runs of it (baseline, candidate), frozen into run files, for benchmarks.

    python benchmarks/synthetic.py --cases N [--k 10] --out DIR [--seed 0]

Writes ``DIR/corpus.parquet`` and the run records ``DIR/baseline.parquet`` and ``DIR/candidate.parquet``,
then freezes them into ``DIR/baseline.arrow`` and ``DIR/candidate.arrow`` (config ``top_k`` = k).

- Cases ``q{i}@v1``: ~85% answerable, ~10% unanswerable (no gold passage), ~5% conflict, with 1-3 gold
  passages from a pool of passages made of three short sentences with numbers each.
- Each ok record ranks k passages, gold ones at random ranks leaning to the top; the candidate finds a
  little more gold and ranks it higher. ~2% of the lists repeat a passage id after the context cut.
- ~1% of records failed (with an error and nothing else); ~0.5% of cases are missing on one side.
- The context is the text of the first four retrieved passages (~1,000 characters); the answer copies
  1-3 of their sentences, sometimes with an invented sentence or a changed number, or is "I don't know.".

Same arguments, same bytes: generation is seeded and freezing uses a fixed ``SOURCE_DATE_EPOCH``.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from rag_compare import freeze_run, load_corpus

__all__ = ["SIDES", "Behaviour", "freeze_runs", "write_dataset", "write_inputs", "write_sweep"]

EPOCH = "1795000000"
SENTENCES = 3
"""Sentences per passage."""
CONTEXT_PASSAGES = 4
"""Retrieved passages whose text makes the context."""
MAX_GOLD = 3
MAX_SAID = 3
"""Sentences in an answer."""
ABSTENTION = "I don't know."
TEMPLATES = (
    ("The daily meal allowance for region ", " is ", " euros on trips over eight hours."),
    ("Travel requests for project ", " must be filed at least ", " days before departure."),
    ("Employees of team ", " may book at most ", " hotel nights per quarter unapproved."),
    ("The spending limit for cost centre ", " is ", " euros without a second signature."),
    ("Staff working at site ", " are reimbursed ", " cents per kilometre in a private car."),
    ("Tickets in support queue ", " must be answered within ", " working hours of opening."),
    ("Training budget line ", " covers up to ", " euros per person and calendar year."),
    ("Laptops from purchase batch ", " are replaced after ", " months of regular daily use."),
)
"""Sentence templates: prefix, entity, middle, number, suffix."""
RECORDED = (
    "retrieved_passage_ids",
    "context",
    "context_passage_ids",
    "answer",
    "prompt_tokens",
    "completion_tokens",
)
"""What a failed record leaves empty."""
ERRORS = ("HTTP 500 from the generator", "HTTP 429: rate limited", "retriever timed out after 30 s")


@dataclass(frozen=True)
class Behaviour:
    """How one side's pipeline behaves, as chances per case (or per gold passage for ``found``)."""

    found: float
    """That a gold passage is among the k retrieved."""
    top_bias: float
    """How strongly retrieved gold passages lean to the top ranks (0: uniform)."""
    abstain: float
    """That the answer is "I don't know." although a gold passage reached the context."""
    invented: float
    """That the answer's last sentence is invented."""
    changed: float
    """That the answer's first sentence has a changed number."""


SIDES = {
    "baseline": Behaviour(found=0.70, top_bias=1.5, abstain=0.06, invented=0.08, changed=0.06),
    "candidate": Behaviour(found=0.78, top_bias=2.5, abstain=0.04, invented=0.06, changed=0.05),
}


@dataclass(frozen=True)
class Pool:
    """The knowledge base: passage ``j`` is sentences ``(j, 0..2)``, each a template, entity and number."""

    template: np.ndarray
    entity: np.ndarray
    number: np.ndarray
    text: pl.Series


def write_dataset(out: Path, cases: int, k: int = 10, seed: int = 0) -> dict[str, Path]:
    """Write the corpus and both sides' records into ``out``, freeze the runs; return every path by name."""
    return write_inputs(out, cases, k, seed) | freeze_runs(out, k)


def write_inputs(out: Path, cases: int, k: int = 10, seed: int = 0) -> dict[str, Path]:
    """Write ``corpus.parquet`` and ``<side>.parquet`` (run records) into ``out``; return their paths by name.

    Raises ``FileExistsError`` when a run file is already there (run files are never replaced).
    """
    if cases < 1 or not 1 <= k <= 100:
        raise ValueError(f"need at least 1 case and k from 1 to 100, got {cases} cases and k={k}")
    for side in SIDES:
        if (out / f"{side}.arrow").exists():
            raise FileExistsError(f"{out / side}.arrow exists; remove it or choose another output folder")
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    pool = make_pool(rng, max(1_000, cases // 4))
    corpus, gold = make_corpus(rng, cases, len(pool.text))
    missing = rng.random(cases) < 0.005
    missing_side = rng.random(cases) < 0.5
    paths = {"corpus": out / "corpus.parquet"}
    corpus.write_parquet(paths["corpus"])
    for side, behaviour in SIDES.items():
        records = make_records(rng, behaviour, gold, k, pool)
        dropped = missing & (missing_side if side == "baseline" else ~missing_side)
        paths[f"{side}_records"] = out / f"{side}.parquet"
        records.filter(pl.Series(~dropped)).write_parquet(paths[f"{side}_records"])
    return paths


def freeze_runs(out: Path, k: int) -> dict[str, Path]:
    """Freeze ``out``'s records of each side with its corpus into ``<side>.arrow``; return their paths."""
    corpus = load_corpus(out / "corpus.parquet")
    paths = {side: out / f"{side}.arrow" for side in SIDES}
    for side, path in paths.items():
        freeze_run(
            out / f"{side}.parquet",
            corpus,
            {"top_k": k, "retriever": {"top_k": k}},
            output=path,
            environ={"SOURCE_DATE_EPOCH": EPOCH},
        )
    return paths


def write_sweep(out: Path, cases: int, count: int, k: int = 10, seed: int = 0) -> list[Path]:
    """Freeze ``count`` more candidates of the corpus ``write_inputs`` wrote into ``out`` with these arguments,
    ``sweep-1.arrow`` ...: the i-th behaves i/(count + 1) of the way from the baseline to the candidate, with
    draws of its own. Return their paths."""
    rng = np.random.default_rng(seed)  # the pool and gold passages of write_inputs, drawn again
    pool = make_pool(rng, max(1_000, cases // 4))
    _, gold = make_corpus(rng, cases, len(pool.text))
    corpus = load_corpus(out / "corpus.parquet")
    paths = []
    for number in range(1, count + 1):
        share = number / (count + 1)
        ends = [vars(SIDES[side]) for side in ("baseline", "candidate")]
        behaviour = Behaviour(**{name: (1 - share) * ends[0][name] + share * ends[1][name] for name in ends[0]})
        records = make_records(np.random.default_rng([seed, number]), behaviour, gold, k, pool)
        records.write_parquet(out / f"sweep-{number}.parquet")
        paths.append(out / f"sweep-{number}.arrow")
        config = {"name": f"sweep-{number}", "top_k": k, "retriever": {"top_k": k}}
        freeze_run(
            out / f"sweep-{number}.parquet", corpus, config, output=paths[-1], environ={"SOURCE_DATE_EPOCH": EPOCH}
        )
    return paths


def make_pool(rng: np.random.Generator, size: int) -> Pool:
    """``size`` passages ``p{j}`` of three sentences each (~245 characters)."""
    template = rng.integers(len(TEMPLATES), size=(size, SENTENCES))
    entity = rng.integers(1, 10_000, size=(size, SENTENCES))
    number = rng.integers(1, 1_000, size=(size, SENTENCES))
    sentences = [render(template[:, s], entity[:, s], number[:, s]) for s in range(SENTENCES)]
    ids = "[p" + pl.Series(np.arange(size)).cast(pl.String) + "] "
    text = ids + sentences[0] + " " + sentences[1] + " " + sentences[2]
    return Pool(template, entity, number, text)


def make_corpus(rng: np.random.Generator, cases: int, pool_size: int) -> tuple[pl.DataFrame, np.ndarray]:
    """The corpus frame and its gold passages as a (cases, 3) index array, -1 where a case has fewer."""
    draw = rng.random(cases)
    answerability = np.where(draw < 0.85, "answerable", np.where(draw < 0.95, "unanswerable", "conflict"))
    n_gold = np.select(
        [answerability == "unanswerable", answerability == "conflict"],
        [0, 2],
        rng.choice([1, 2, 3], size=cases, p=[0.55, 0.30, 0.15]),
    )
    steps = rng.integers(1, pool_size // 2, size=(cases, MAX_GOLD - 1))
    first = rng.integers(pool_size, size=(cases, 1))
    gold = np.cumsum(np.hstack([first, steps]), axis=1) % pool_size  # distinct: the steps sum to < pool_size
    gold[np.arange(MAX_GOLD) >= n_gold[:, None]] = -1
    rule = np.where(rng.random(cases) < 0.8, "rule", "distractor")
    category = np.select(
        [answerability == "unanswerable", answerability == "conflict", n_gold > 1],
        ["unanswerable", "version_conflict", "rule_exception"],
        rule,
    )
    key = pl.Series(np.arange(cases)).cast(pl.String)
    corpus = pl.DataFrame(
        {
            "case_id": "q" + key + "@v1",
            "question": "What does the handbook say about topic " + key + "?",
            "answerability": answerability,
            "source_version": "v1",
            "required_passage_ids": id_lists(gold),
            "category": category,
        }
    )
    return corpus, gold


def make_records(rng: np.random.Generator, behaviour: Behaviour, gold: np.ndarray, k: int, pool: Pool) -> pl.DataFrame:
    """One record per case: ranked passages, context, answer; ~1% failed, with an error and nothing else."""
    cases = gold.shape[0]
    ranked = rank_passages(rng, behaviour, gold, k, len(pool.text))
    shown = ranked[:, : min(CONTEXT_PASSAGES, k)]
    texts = pl.DataFrame({str(j): pool.text.gather(shown[:, j]) for j in range(shown.shape[1])})
    context = texts.select(pl.concat_str(pl.all(), separator="\n\n")).to_series()
    answer = make_answers(rng, behaviour, gold, shown, pool)
    frame = pl.DataFrame(
        {
            "case_id": "q" + pl.Series(np.arange(cases)).cast(pl.String) + "@v1",
            "status": np.where(rng.random(cases) < 0.01, "failed", "ok"),
            "error": np.array(ERRORS)[rng.integers(len(ERRORS), size=cases)],
            "retrieved_passage_ids": id_lists(ranked),
            "context": context,
            "context_passage_ids": id_lists(shown),
            "answer": answer,
            "latency_ms": np.round(rng.lognormal(7.0, 0.4, size=cases), 1),
            "prompt_tokens": context.str.len_chars() // 4 + 60,
            "completion_tokens": answer.str.len_chars() // 4 + 1,
        }
    )
    failed = pl.col("status") == "failed"
    return frame.with_columns(
        pl.when(failed if name == "error" else ~failed).then(name).alias(name) for name in ("error", *RECORDED)
    )


def rank_passages(
    rng: np.random.Generator, behaviour: Behaviour, gold: np.ndarray, k: int, pool_size: int
) -> np.ndarray:
    """A (cases, k) index array: distinct non-gold passages with the found gold ones at top-leaning ranks."""
    cases = gold.shape[0]
    ranked = rng.integers(pool_size, size=(cases, k))
    while (clash := repeats(ranked) | (ranked[:, :, None] == gold[:, None, :]).any(axis=2)).any():
        ranked[clash] = rng.integers(pool_size, size=int(clash.sum()))
    leaning = rng.random((cases, k)) + behaviour.top_bias * np.arange(k) / k
    gold_ranks = np.argsort(leaning, axis=1)[:, :MAX_GOLD]
    for slot in range(min(MAX_GOLD, k)):
        found = (gold[:, slot] >= 0) & (rng.random(cases) < behaviour.found)
        ranked[found, gold_ranks[found, slot]] = gold[found, slot]
    if k > CONTEXT_PASSAGES:
        repeated = np.flatnonzero(rng.random(cases) < 0.02)
        later = rng.integers(CONTEXT_PASSAGES, k, size=repeated.size)
        ranked[repeated, later] = ranked[repeated, rng.integers(later)]
    return ranked


def make_answers(
    rng: np.random.Generator, behaviour: Behaviour, gold: np.ndarray, shown: np.ndarray, pool: Pool
) -> pl.Series:
    """1-3 sentences of the context (the first from a gold passage there, if any), or an abstention."""
    cases, width = len(shown), shown.shape[1]
    rows = np.arange(cases)[:, None]
    in_context = (shown[:, :, None] == gold[:, None, :]).any(axis=2)
    grounded = in_context.any(axis=1)
    picks = rng.integers(width, size=(cases, MAX_SAID))
    picks[:, 0] = np.where(grounded, in_context.argmax(axis=1), picks[:, 0])
    passage, sentence = shown[rows, picks], rng.integers(SENTENCES, size=(cases, MAX_SAID))
    template, entity, number = (part[passage, sentence] for part in (pool.template, pool.entity, pool.number))
    length = rng.integers(1, MAX_SAID + 1, size=cases)
    changed = rng.random(cases) < behaviour.changed
    number[changed, 0] += rng.integers(1, 50, size=np.count_nonzero(changed))
    invented = np.flatnonzero(rng.random(cases) < behaviour.invented)
    last = length[invented] - 1
    template[invented, last] = rng.integers(len(TEMPLATES), size=invented.size)
    entity[invented, last] = rng.integers(10_000, 100_000, size=invented.size)
    number[invented, last] = rng.integers(1, 1_000, size=invented.size)
    said = pl.DataFrame(
        {
            f"s{i}": render(template[:, i], entity[:, i], number[:, i]).set(pl.Series(length <= i), None)
            for i in range(MAX_SAID)
        }
    )
    # Abstain mostly on unanswerable cases, often without gold in the context, rarely with it.
    abstain = rng.random(cases) < np.where(gold[:, 0] < 0, 0.7, np.where(grounded, behaviour.abstain, 0.4))
    return said.select(
        pl.when(pl.Series(abstain))
        .then(pl.lit(ABSTENTION))
        .otherwise(pl.concat_str(pl.all(), separator=" ", ignore_nulls=True))
    ).to_series()


def render(template: np.ndarray, entity: np.ndarray, number: np.ndarray) -> pl.Series:
    """One sentence per row from its template index, entity and number."""
    prefix, middle, suffix = (pl.Series(part).gather(template) for part in zip(*TEMPLATES, strict=True))
    return prefix + pl.Series(entity).cast(pl.String) + middle + pl.Series(number).cast(pl.String) + suffix


def id_lists(index: np.ndarray) -> pl.Series:
    """Rows of a 2-D passage index array as lists of passage ids, leaving out negative entries."""
    element = pl.element()
    return pl.Series(index).cast(pl.List(pl.Int64)).list.eval("p" + element.filter(element >= 0).cast(pl.String))


def repeats(index: np.ndarray) -> np.ndarray:
    """Mask of the entries that repeat an earlier entry of their row."""
    order = np.argsort(index, axis=1, kind="stable")
    ordered = np.take_along_axis(index, order, axis=1)
    mask = np.zeros(index.shape, dtype=bool)
    np.put_along_axis(mask, order[:, 1:], ordered[:, 1:] == ordered[:, :-1], axis=1)
    return mask


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, required=True)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    start = time.perf_counter()
    try:
        inputs = write_inputs(options.out, options.cases, options.k, options.seed)
    except (ValueError, FileExistsError) as error:
        parser.error(str(error))
    generated = time.perf_counter()
    runs = freeze_runs(options.out, options.k)
    frozen = time.perf_counter()
    print(f"cases             {options.cases:,} at k={options.k}, seed {options.seed}")
    for name, path in (inputs | runs).items():
        print(f"{name:<17} {path} ({path.stat().st_size / 2**20:.1f} MiB)")
    print(f"seconds           {generated - start:.1f} to generate and write, {frozen - generated:.1f} to freeze")


if __name__ == "__main__":
    main()
