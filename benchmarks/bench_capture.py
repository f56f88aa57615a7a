"""Capturing runs at scale: ``rag-compare capture`` through a chat model and offline, resuming, BM25 and rank_bm25.

    python benchmarks/bench_capture.py [--cases 2000] [--latency 0.1] [--concurrency 32] [--repeats 3]
        [--reference-queries 1000] [--workdir DIR] [--seed 0] [--cli-python PATH]

``--cli-python`` runs the CLI passes with another interpreter, e.g. that of a plain ``pip install .``
(no dev extras: pandera then does not import hypothesis, nor bm25s numba).

The inputs are made once into the work folder (reused after): a knowledge base of 4 x ``--cases``
passages of three sentences each (from ``synthetic.py``'s sentence templates, one source version), and
a corpus of ``--cases`` answerable cases whose question names the entity of its source passage's first
sentence ("What is the rule for cost centre 2003 in the handbook?"), so BM25 has a word to find.

``chat_endpoint.py --latency L`` serves in a process of its own. Then, ``--repeats`` times:

1. Through a chat model (ideal: ceil(cases / concurrency) x latency):
   - CLI: ``python -m rag_compare capture CORPUS --passages P --top-k 4 --generator openai --model bench
     --base-url URL --concurrency N --max-retries 0 --output OUT``, end to end through ``measure.py``;
   - library: ``capture(CORPUS, retriever, OpenAIGenerator(...), top_k=4, limits=Limits(concurrency=N,
     timeout=120, max_retries=0), output=OUT)`` in this process after an untimed warm-up, the
     ``BM25Retriever`` built (and timed) first.
   Every case of every run must be ``ok`` after exactly one attempt (so exactly ``--cases`` requests).
2. Offline (BM25 + extractive, the command's defaults): the CLI ``capture CORPUS --passages P --top-k 4
   --output OUT`` end to end, the same in the library, and resuming: the same command when the checkpoint
   beside OUT already holds every case but the last (made once by a capture that stops on the last case).
3. BM25: ``BM25Retriever`` against rank_bm25's ``BM25Okapi`` (whitespace tokens, ``get_scores``, top 4 by
   argsort) on the same passages and questions: index build, seconds per 1,000 queries, and how often the
   two rank the same passage first (their tokenisation and idf differ: agreement is informative, not exact).
   rank_bm25 loops in Python over every passage per query term, so it is timed on the first
   ``--reference-queries`` questions only; agreement is counted on those.

Prints the medians, the ratios and the target's verdict (CLI through the chat model within 1.5 times the
ideal); exit code 1 when a case is not ``ok`` or took more than one attempt.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from harness import Measured, chat_parser, chat_server, each, measure_command, print_correctness, yes
from synthetic import SENTENCES, TEMPLATES, id_lists, make_pool, render

from rag_compare import capture, load_run
from rag_compare.core.errors import EndpointError
from rag_compare.core.protocols import Case, Context, Generation
from rag_compare.io.runs import Run
from rag_compare.llm.chat_generator import OpenAIGenerator
from rag_compare.llm.limits import Limits
from rag_compare.pipeline.bm25 import BM25Retriever
from rag_compare.pipeline.checkpoint import checkpoint_path
from rag_compare.pipeline.extractive import ExtractiveGenerator
from rag_compare.pipeline.runner import CAPTURE_LIMITS

HERE = Path(__file__).resolve().parent
MODEL = "bench"
TOP_K = 4
PASSAGES_PER_CASE = 4
OFFLINE_CONCURRENCY = 4
"""``rag-compare capture``'s default ``--concurrency``, used by the offline passes."""
TARGET_RATIO = 1.5
NOUNS = ("region", "project", "team", "cost centre", "site", "support queue", "budget line", "purchase batch")
"""What each of ``synthetic.TEMPLATES`` names with its entity."""
MIB = 2**20


@dataclass(frozen=True)
class Inputs:
    corpus: Path
    passages: Path
    made: str


def make_inputs(workdir: Path, cases: int, seed: int) -> Inputs:
    """The corpus and passages files in ``workdir`` (made when missing), and whether they were reused."""
    corpus, passages = workdir / "corpus.parquet", workdir / "passages.parquet"
    if corpus.exists() and passages.exists():
        held = (pl.scan_parquet(corpus).select(pl.len()).collect().item(), pl.scan_parquet(passages).collect().height)
        if held != (cases, PASSAGES_PER_CASE * cases):
            raise SystemExit(f"{workdir} holds {held[0]:,} cases, not {cases:,}: choose another --workdir")
        return Inputs(corpus, passages, "reused")
    assert len(NOUNS) == len(TEMPLATES), "one noun per sentence template"
    start = time.perf_counter()
    workdir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    size = PASSAGES_PER_CASE * cases
    pool = make_pool(rng, size)
    sentences = [render(pool.template[:, s], pool.entity[:, s], pool.number[:, s]) for s in range(SENTENCES)]
    passage_ids = "p" + pl.Series(np.arange(size)).cast(pl.String)
    pl.DataFrame(
        {
            "passage_id": passage_ids,
            "source_version": "v1",
            "text": sentences[0] + " " + sentences[1] + " " + sentences[2],
        }
    ).write_parquet(passages)
    source = rng.permutation(size)[:cases]
    noun = pl.Series(np.array(NOUNS)).gather(pool.template[source, 0])
    entity = pl.Series(pool.entity[source, 0]).cast(pl.String)
    pl.DataFrame(
        {
            "case_id": "q" + pl.Series(np.arange(cases)).cast(pl.String) + "@v1",
            "question": "What is the rule for " + noun + " " + entity + " in the handbook?",
            "answerability": "answerable",
            "source_version": "v1",
            "required_passage_ids": id_lists(source[:, None]),
            "category": "rule",
        }
    ).write_parquet(corpus)
    return Inputs(corpus, passages, f"made in {time.perf_counter() - start:.1f} s")


def capture_limits(concurrency: int, **changes: Any) -> Limits:
    """The capture's default limits, at ``concurrency``."""
    return dataclasses.replace(CAPTURE_LIMITS, concurrency=concurrency, **changes)


def capture_command(python: str, inputs: Inputs, output: Path, *options: str) -> list[str]:
    """``rag-compare capture`` of the inputs into ``output``, run by ``python``, with more ``options``."""
    return [
        python,
        "-m",
        "rag_compare",
        "capture",
        str(inputs.corpus),
        "--passages",
        str(inputs.passages),
        "--top-k",
        str(TOP_K),
        *options,
        "--output",
        str(output),
    ]


def problems_of(run: Run, cases: int, label: str) -> list[str]:
    """What is wrong with a captured run: cases missing, not ``ok``, or that took more than one attempt
    (each attempt is one request: a pass through the chat model sent other than ``cases`` requests)."""
    records = run.records
    problems = []
    if records.height != cases:
        problems.append(f"{label}: {records.height:,} cases captured, expected {cases:,}")
    not_ok = records.filter(pl.col("status") != "ok")
    if not_ok.height:
        first = not_ok.row(0, named=True)
        problems.append(f"{label}: {not_ok.height:,} cases not ok (first: {first['status']} {first['error']})")
    attempts = int(records.get_column("attempts").sum())
    if attempts != records.height:
        problems.append(f"{label}: {attempts:,} attempts for {records.height:,} cases (retries were sent)")
    return problems


@dataclass
class StopOnLast:
    """The extractive generator, with its config, that stops the capture with an ``EndpointError`` on one case:
    a capture at concurrency 1 leaves a checkpoint of every case before it."""

    inner: ExtractiveGenerator
    last: str

    @property
    def config(self) -> dict[str, Any]:
        return self.inner.config

    def __call__(self, case: Case, context: Context) -> Generation:
        if case.case_id == self.last:
            raise EndpointError("stopped on purpose: the benchmark wants a checkpoint of every case but this one")
        return self.inner(case, context)


def make_checkpoint(inputs: Inputs, folder: Path) -> tuple[Path, int]:
    """A checkpoint of the offline capture holding every case but the last (the settings the CLI's
    ``--top-k 4`` capture records), and how many cases it holds."""
    corpus = pl.read_parquet(inputs.corpus)
    output = folder / "partial.arrow"
    generator = StopOnLast(ExtractiveGenerator(), corpus.get_column("case_id")[-1])
    try:
        capture(
            inputs.corpus,
            BM25Retriever(inputs.passages),
            generator,
            top_k=TOP_K,
            config={"knowledge_base": str(inputs.passages)},
            output=output,
            limits=capture_limits(1),
        )
    except EndpointError:
        pass
    else:
        raise SystemExit("the capture that makes the checkpoint did not stop")
    path = checkpoint_path(output)
    held = len(path.read_text(encoding="utf-8").splitlines()) - 1
    if held != corpus.height - 1:
        raise SystemExit(f"the checkpoint holds {held:,} cases, not {corpus.height - 1:,}")
    return path, held


def chat_passes(
    python: str, inputs: Inputs, url: str, concurrency: int, cases: int, folder: Path, timings: Measured
) -> None:
    """One repeat of the passes through the chat model: the CLI, then the library."""
    repeat = len(timings["chat_cli"])
    label = f"repeat {repeat + 1}"
    output = folder / f"chat-cli-{repeat}.arrow"
    options = ["--generator", "openai", "--model", MODEL, "--base-url", url]
    options += ["--concurrency", str(concurrency), "--max-retries", "0"]
    seconds, peak = measure_command(
        capture_command(python, inputs, output, *options), "rag-compare capture --generator openai"
    )
    timings["chat_cli"].append(seconds)
    timings["chat_peaks"].append(peak)
    timings["problems"] += problems_of(load_run(output), cases, f"CLI through the chat model, {label}")
    start = time.perf_counter()
    retriever = BM25Retriever(inputs.passages)
    timings["build"].append(time.perf_counter() - start)
    generator = OpenAIGenerator(MODEL, base_url=url, api_key="unused")
    start = time.perf_counter()
    run = capture(
        inputs.corpus,
        retriever,
        generator,
        top_k=TOP_K,
        limits=capture_limits(concurrency, max_retries=0),
        output=folder / f"chat-library-{repeat}.arrow",
    )
    timings["chat_library"].append(time.perf_counter() - start)
    timings["problems"] += problems_of(run, cases, f"library through the chat model, {label}")


def offline_passes(python: str, inputs: Inputs, checkpoint: Path, cases: int, folder: Path, timings: Measured) -> None:
    """One repeat of the offline passes: a whole capture and a resumed one, each by the CLI and the library."""
    repeat = len(timings["offline_cli"])
    label = f"repeat {repeat + 1}"
    output = folder / f"offline-cli-{repeat}.arrow"
    seconds, peak = measure_command(capture_command(python, inputs, output), "rag-compare capture")
    timings["offline_cli"].append(seconds)
    timings["offline_peaks"].append(peak)
    timings["problems"] += problems_of(load_run(output), cases, f"CLI offline, {label}")
    output = folder / f"resume-cli-{repeat}.arrow"
    shutil.copyfile(checkpoint, checkpoint_path(output))
    seconds, _ = measure_command(capture_command(python, inputs, output), "rag-compare capture, resumed")
    timings["resume_cli"].append(seconds)
    timings["problems"] += problems_of(load_run(output), cases, f"CLI resumed, {label}")
    retriever = BM25Retriever(inputs.passages)
    knowledge_base = {"knowledge_base": str(inputs.passages)}
    for name, seconds_of in (("offline", timings["offline_library"]), ("resume", timings["resume_library"])):
        output = folder / f"{name}-library-{repeat}.arrow"
        if name == "resume":
            shutil.copyfile(checkpoint, checkpoint_path(output))
        start = time.perf_counter()
        run = capture(
            inputs.corpus,
            retriever,
            ExtractiveGenerator(),
            top_k=TOP_K,
            config=knowledge_base,
            output=output,
            limits=capture_limits(OFFLINE_CONCURRENCY),
        )
        seconds_of.append(time.perf_counter() - start)
        timings["problems"] += problems_of(run, cases, f"library {name}, {label}")
        if checkpoint_path(output).exists():
            timings["problems"].append(f"library {name}, {label}: the checkpoint was left behind")


def bm25_pass(inputs: Inputs, reference_queries: int, timings: Measured) -> None:
    """One repeat of both BM25s on the same passages and questions, in this process."""
    from rank_bm25 import BM25Okapi  # type: ignore[import-untyped]

    passages = pl.read_parquet(inputs.passages)
    corpus = pl.read_parquet(inputs.corpus)
    ids: list[str] = passages.get_column("passage_id").to_list()
    texts: list[str] = passages.get_column("text").to_list()
    cases = [Case(case_id, question, "v1", {}) for case_id, question in corpus.select("case_id", "question").rows()]
    start = time.perf_counter()
    ours = BM25Retriever(passages)
    timings["ours_build"].append(time.perf_counter() - start)
    start = time.perf_counter()
    ranked = [ours(case, TOP_K) for case in cases]
    timings["ours_queries"].append((time.perf_counter() - start) / len(cases) * 1_000)
    start = time.perf_counter()
    reference = BM25Okapi([text.lower().split() for text in texts])
    timings["reference_build"].append(time.perf_counter() - start)
    start = time.perf_counter()
    tops = [
        np.argsort(-reference.get_scores(case.question.lower().split()), kind="stable")[:TOP_K]
        for case in cases[:reference_queries]
    ]
    timings["reference_queries"].append((time.perf_counter() - start) / len(tops) * 1_000)
    timings["ours_first"] = [found[0].passage_id if found else None for found in ranked[: len(tops)]]
    timings["reference_first"] = [ids[int(top[0])] for top in tops]
    timings["source"] = [ids[0] for ids in corpus.get_column("required_passage_ids").head(len(tops)).to_list()]


def median(values: list[float]) -> float:
    return statistics.median(values)


def report(
    inputs: Inputs, options: argparse.Namespace, held: int, timings: Measured, bm25: Measured, made: str
) -> None:
    """Print the medians, the ideal, the ratios and the verdict on the target."""
    cases, concurrency, latency = options.cases, options.concurrency, options.latency
    passages = PASSAGES_PER_CASE * cases
    ideal = math.ceil(cases / concurrency) * latency
    chat_cli, chat_library, build = (
        median(timings["chat_cli"]),
        median(timings["chat_library"]),
        median(timings["build"]),
    )
    offline_cli, offline_library = median(timings["offline_cli"]), median(timings["offline_library"])
    resume_cli, resume_library = median(timings["resume_cli"]), median(timings["resume_library"])
    print(f"cases                      {cases:,}, {passages:,} passages, top_k {TOP_K} ({inputs.corpus.parent})")
    print(f"inputs                     {made}")
    print("-- through a chat model --")
    print(f"requests                   {cases:,} at concurrency {concurrency}, {latency:g} s each")
    print(f"ideal                      {ideal:.2f} s (ceil({cases:,} / {concurrency}) x {latency:g} s)")
    print(
        f"CLI                        {chat_cli:.2f} s (median of {each(timings['chat_cli'], 2)}): "
        f"{chat_cli / ideal:.2f}x the ideal"
    )
    print(
        f"library                    {chat_library:.2f} s (median of {each(timings['chat_library'], 2)}): "
        f"{chat_library / ideal:.2f}x the ideal"
    )
    print(
        f"retriever build            {build:.2f} s (median of {each(timings['build'], 2)}; before the library's pass)"
    )
    print(f"CLI beyond the library     {chat_cli - chat_library:.2f} s (medians)")
    print(f"peak RSS, CLI              {max(timings['chat_peaks']) / MIB:,.0f} MiB (largest of every CLI process)")
    print("-- offline: BM25 + extractive --")
    print(
        f"CLI                        {offline_cli:.2f} s (median of {each(timings['offline_cli'], 2)}): "
        f"{cases / offline_cli:,.0f} cases/s"
    )
    print(
        f"library                    {offline_library:.2f} s (median of {each(timings['offline_library'], 2)}; "
        f"retriever built before): {cases / offline_library:,.0f} cases/s"
    )
    print(
        f"CLI, resumed               {resume_cli:.2f} s (median of {each(timings['resume_cli'], 2)}; "
        f"{held:,} cases checkpointed, 1 to capture): {resume_cli / offline_cli:.0%} of a whole capture"
    )
    print(f"library, resumed           {resume_library:.2f} s (median of {each(timings['resume_library'], 2)})")
    print(f"peak RSS, CLI              {max(timings['offline_peaks']) / MIB:,.0f} MiB")
    print("-- BM25: rag-compare (bm25s) and rank_bm25 --")
    ours_build, reference_build = median(bm25["ours_build"]), median(bm25["reference_build"])
    ours_queries, reference_queries = median(bm25["ours_queries"]), median(bm25["reference_queries"])
    compared = len(bm25["reference_first"])
    print(
        f"index build                rag-compare {ours_build:.3f} s ({each(bm25['ours_build'], 3)}), "
        f"rank_bm25 {reference_build:.3f} s ({each(bm25['reference_build'], 3)})"
    )
    print(
        f"seconds per 1,000 queries  rag-compare {ours_queries:.3f} ({cases:,} queries), "
        f"rank_bm25 {reference_queries:.3f} ({compared:,} queries): rank_bm25 / rag-compare "
        f"{reference_queries / ours_queries:.1f}x"
    )
    agree = sum(a == b for a, b in zip(bm25["ours_first"], bm25["reference_first"], strict=True))
    ours_source = sum(a == b for a, b in zip(bm25["ours_first"], bm25["source"], strict=True))
    reference_source = sum(a == b for a, b in zip(bm25["reference_first"], bm25["source"], strict=True))
    print(f"same top-1 passage         {agree / compared:.1%} of {compared:,} queries")
    print(
        f"top-1 is the source        rag-compare {ours_source / compared:.1%}, rank_bm25 "
        f"{reference_source / compared:.1%} (the passage the question was written from)"
    )
    fine = f"every case ok after 1 attempt in every run ({cases:,} requests a chat pass)"
    print_correctness(timings["problems"], 27, fine)
    verdict = yes(chat_cli <= TARGET_RATIO * ideal)
    print(f"target                     CLI through the chat model within {TARGET_RATIO:g}x the ideal: {verdict}")


def main() -> None:
    parser = chat_parser(__doc__.splitlines()[0], "the inputs are")
    parser.add_argument(
        "--reference-queries", type=int, default=1_000, help="questions rank_bm25 is timed on (it is slow)"
    )
    parser.add_argument(
        "--cli-python",
        default=sys.executable,
        help="the interpreter that runs the CLI, e.g. one of a plain `pip install .` without the dev extras "
        "[default: this one]",
    )
    options = parser.parse_args()
    if options.cases < 2 or options.latency <= 0 or options.concurrency < 1 or options.repeats < 1:
        parser.error("need at least 2 cases, a latency > 0, a concurrency >= 1 and 1 repeat")
    if options.reference_queries < 1:
        parser.error("need at least 1 reference query")
    name = f"rag-compare-bench-capture-{options.cases}-seed{options.seed}"
    workdir = options.workdir or Path(tempfile.gettempdir()) / name
    inputs = make_inputs(workdir, options.cases, options.seed)
    timings, bm25 = Measured(list), Measured(list)
    with tempfile.TemporaryDirectory(dir=workdir) as temporary, chat_server(options.latency) as url:
        folder = Path(temporary)
        start = time.perf_counter()
        checkpoint, held = make_checkpoint(inputs, folder)
        made = f"checkpoint made in {time.perf_counter() - start:.1f} s"
        warm_up = pl.read_parquet(inputs.corpus).head(options.concurrency)  # untimed: imports, client, template
        generator = OpenAIGenerator(MODEL, base_url=url, api_key="unused")
        limits = capture_limits(options.concurrency)
        capture(warm_up, BM25Retriever(inputs.passages), generator, top_k=TOP_K, limits=limits)
        for _ in range(options.repeats):
            chat_passes(options.cli_python, inputs, url, options.concurrency, options.cases, folder, timings)
            offline_passes(options.cli_python, inputs, checkpoint, options.cases, folder, timings)
            bm25_pass(inputs, min(options.reference_queries, options.cases), bm25)
    report(inputs, options, held, timings, bm25, f"{inputs.made}; {made}")
    if timings["problems"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
