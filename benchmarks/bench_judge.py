"""LLM judging at scale: ``rag-compare score`` against a local chat-completions server with a fixed latency.

    python benchmarks/bench_judge.py [--cases 2000] [--latency 0.1] [--concurrency 32]
        [--checks groundedness] [--repeats 3] [--workdir DIR] [--seed 0]

A run of ``--cases`` cases is frozen once into the work folder (reused after): every record ok, every
case answerable, with a question, a context of four passages (~1,000 characters), an acceptance note
and an answer that quotes one sentence of the context (never an abstention), so every case sends one
request per check. The requests actually planned (``OpenAIJudge.plan``) set the ideal time:
ceil(requests / concurrency) x latency, what a client with no overhead of its own would take.

``chat_endpoint.py --latency L`` serves in a process of its own (its threads do not share this
process's or the CLI's GIL). Then, ``--repeats`` times, each with a fresh, empty reply cache:

- CLI, first pass: ``python -m rag_compare score RUN --model bench --base-url URL --checks C
  --concurrency N --cache FRESH --output OUT`` in its own process, end to end (interpreter start,
  imports, verified load, requests, scores file written), its wall time and peak RSS taken by
  ``measure.py``;
- CLI, cached rerun: the same command with the now filled cache and a new ``--output``; the scores it
  writes must count zero requests sent, every case ``ok``;
- library, first pass: ``score_run(run, OpenAIJudge(..., cache=FRESH2), output=...)`` in this process,
  after an untimed warm-up (imports, client, schema validators), to tell the CLI's start-up from the
  judging itself.

Prints the medians, the ideal, the ratios to it and whether the targets are met (first pass within
1.5 times the ideal, cached rerun under 2 s); exit code 1 when a pass sends other than the planned
requests or a case is not judged ``ok``.
"""

from __future__ import annotations

import math
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
from harness import Measured, chat_parser, chat_server, each, measure_command, print_correctness, yes
from synthetic import CONTEXT_PASSAGES, EPOCH, SENTENCES, id_lists, make_pool, render

from rag_compare import freeze_run, load_corpus, load_run
from rag_compare.io.runs import Run
from rag_compare.io.scores import Scores, load_scores, score_run
from rag_compare.llm.limits import Limits
from rag_compare.llm.llm_judge import OpenAIJudge

HERE = Path(__file__).resolve().parent
MODEL = "bench"
TARGET_RATIO, TARGET_CACHED_SECONDS = 1.5, 2.0
MIB = 2**20


def make_run(workdir: Path, cases: int, seed: int) -> tuple[Path, str]:
    """The frozen run in ``workdir`` (made when missing) and whether it was reused or how long making it took."""
    path = workdir / "judged.arrow"
    if path.exists():
        held = load_run(path).records.height
        if held != cases:
            raise SystemExit(f"{path} holds {held:,} cases, not {cases:,}: choose another --workdir")
        return path, "reused"
    start = time.perf_counter()
    workdir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    pool = make_pool(rng, max(1_000, cases // 4))
    shown = rng.integers(len(pool.text), size=(cases, CONTEXT_PASSAGES))
    texts = pl.DataFrame({str(j): pool.text.gather(shown[:, j]) for j in range(CONTEXT_PASSAGES)})
    context = texts.select(pl.concat_str(pl.all(), separator="\n\n")).to_series()
    first, sentence = shown[:, 0], rng.integers(SENTENCES, size=cases)
    answer = render(pool.template[first, sentence], pool.entity[first, sentence], pool.number[first, sentence])
    key = pl.Series(np.arange(cases)).cast(pl.String)
    case_ids = "q" + key + "@v1"
    corpus = pl.DataFrame(
        {
            "case_id": case_ids,
            "question": "What does the handbook say about topic " + key + "?",
            "answerability": "answerable",
            "source_version": "v1",
            "required_passage_ids": id_lists(shown[:, :1]),
            "acceptance_note": "The answer must give the number the handbook states.",
            "category": "rule",
        }
    )
    records = pl.DataFrame(
        {
            "case_id": case_ids,
            "status": "ok",
            "retrieved_passage_ids": id_lists(shown),
            "context": context,
            "context_passage_ids": id_lists(shown),
            "answer": answer,
        }
    )
    freeze_run(
        records,
        load_corpus(corpus),
        {"top_k": CONTEXT_PASSAGES},
        output=path,
        environ={"SOURCE_DATE_EPOCH": EPOCH},
    )
    return path, f"made in {time.perf_counter() - start:.1f} s"


def run_cli(run: Path, url: str, checks: str, concurrency: int, cache: Path, output: Path) -> tuple[float, int]:
    """Seconds and peak RSS bytes of one ``rag-compare score``, run through ``measure.py``."""
    command = [sys.executable, "-m", "rag_compare", "score", str(run), "--model", MODEL, "--base-url", url]
    command += ["--checks", checks, "--concurrency", str(concurrency), "--cache", str(cache), "--output", str(output)]
    return measure_command(command, "rag-compare score")


def judge_for(url: str, checks: Sequence[str], concurrency: int, cache: Path | bool) -> OpenAIJudge:
    """The judge the CLI makes from the same options."""
    limits = Limits(concurrency=concurrency)
    return OpenAIJudge(MODEL, base_url=url, checks=checks, limits=limits, cache=cache, api_key="unused")


def problems_of(scores: Scores, expected_requests: int, label: str) -> list[str]:
    """What is wrong with a pass's scores: cases not judged ``ok``, or other than the expected requests sent."""
    frame = scores.frame
    problems = []
    not_ok = frame.filter(pl.col("judge_status") != "ok")
    if not_ok.height:
        first = not_ok.row(0, named=True)
        problems.append(
            f"{label}: {not_ok.height:,} cases not ok (first: {first['judge_status']} {first['judge_error']})"
        )
    sent = int(frame.get_column("requests").sum())
    if sent != expected_requests:
        problems.append(f"{label}: {sent:,} requests sent, expected {expected_requests:,}")
    return problems


@dataclass(frozen=True)
class Bench:
    """What every pass judges, and how."""

    run: Run
    url: str
    checks: tuple[str, ...]
    concurrency: int
    requests: int
    """Requests a first pass sends (planned by ``OpenAIJudge.plan``)."""


def repeat_passes(bench: Bench, folder: Path, repeat: int, timings: Measured) -> None:
    """One repeat: the CLI's first pass and cached rerun, then the library's, each first pass on a fresh cache."""
    assert bench.run.path is not None
    label = f"{repeat + 1}"
    cache = folder / f"cli-{repeat}.sqlite3"
    for output, expected, seconds in (
        (folder / f"cli-{repeat}.arrow", bench.requests, timings["cli"]),
        (folder / f"cli-cached-{repeat}.arrow", 0, timings["cached"]),
    ):
        elapsed, peak = run_cli(bench.run.path, bench.url, ",".join(bench.checks), bench.concurrency, cache, output)
        seconds.append(elapsed)
        timings["peaks"].append(peak)
        timings["problems"] += problems_of(load_scores(output), expected, f"CLI {output.stem}, repeat {label}")
    judge = judge_for(bench.url, bench.checks, bench.concurrency, folder / f"library-{repeat}.sqlite3")
    for output, expected, seconds in (
        (folder / f"library-{repeat}.arrow", bench.requests, timings["library"]),
        (folder / f"library-cached-{repeat}.arrow", 0, timings["library_cached"]),
    ):
        start = time.perf_counter()
        scores = score_run(bench.run, judge, output=output)
        seconds.append(time.perf_counter() - start)
        timings["problems"] += problems_of(scores, expected, f"library {output.stem}, repeat {label}")


def report(bench: Bench, latency: float, made: str, timings: Measured) -> None:
    """Print the medians, the ideal, the ratios and the verdicts on the targets."""
    ideal = math.ceil(bench.requests / bench.concurrency) * latency
    cli, cached, library, library_cached = (
        statistics.median(timings[name]) for name in ("cli", "cached", "library", "library_cached")
    )
    checks = ", ".join(bench.checks)
    print(f"cases                  {bench.run.records.height:,} (run {bench.run.path}, {made})")
    print(
        f"requests               {bench.requests:,} ({checks}) at concurrency {bench.concurrency}, {latency:g} s each"
    )
    print(f"ideal                  {ideal:.2f} s (ceil({bench.requests:,} / {bench.concurrency}) x {latency:g} s)")
    print(f"CLI, first pass        {cli:.2f} s (median of {each(timings['cli'], 2)}): {cli / ideal:.2f}x the ideal")
    print(
        f"library, first pass    {library:.2f} s (median of {each(timings['library'], 2)}): "
        f"{library / ideal:.2f}x the ideal"
    )
    print(f"CLI, cached rerun      {cached:.2f} s (median of {each(timings['cached'], 2)}; no request sent)")
    print(f"library, cached rerun  {library_cached:.2f} s (median of {each(timings['library_cached'], 2)})")
    print(f"CLI beyond the library {cli - library:.2f} s first pass, {cached - library_cached:.2f} s cached (medians)")
    print(f"peak RSS, CLI          {max(timings['peaks']) / MIB:,.0f} MiB (largest of every CLI process)")
    fine = f"every case ok; each first pass sent {bench.requests:,} requests, reruns none"
    print_correctness(timings["problems"], 23, fine)
    verdicts = (
        f"CLI first pass within {TARGET_RATIO:g}x the ideal: {yes(cli <= TARGET_RATIO * ideal)}",
        f"cached rerun under {TARGET_CACHED_SECONDS:g} s: {yes(cached < TARGET_CACHED_SECONDS)}",
    )
    print(f"targets                {'; '.join(verdicts)} (set for 2,000 cases, 0.1 s, concurrency 32)")


def main() -> None:
    parser = chat_parser(__doc__.splitlines()[0], "the run is")
    parser.add_argument("--checks", default="groundedness", help="comma-separated checks")
    options = parser.parse_args()
    checks = tuple(part.strip() for part in options.checks.split(",") if part.strip())
    if options.cases < 1 or options.latency <= 0 or options.concurrency < 1 or options.repeats < 1 or not checks:
        parser.error("need at least 1 case, a latency > 0, a concurrency >= 1, 1 repeat and a check")
    name = f"rag-compare-bench-judge-{options.cases}-seed{options.seed}"
    workdir = options.workdir or Path(tempfile.gettempdir()) / name
    run_path, made = make_run(workdir, options.cases, options.seed)
    run = load_run(run_path)
    timings = Measured(list)
    with tempfile.TemporaryDirectory(dir=workdir) as temporary, chat_server(options.latency) as url:
        judge = judge_for(url, checks, options.concurrency, False)
        bench = Bench(run, url, checks, options.concurrency, judge.plan(run.records).requests)
        judge.judge(run.records.head(options.concurrency))  # warm-up, untimed: imports, client, validators
        for repeat in range(options.repeats):
            repeat_passes(bench, Path(temporary), repeat, timings)
    report(bench, options.latency, made, timings)
    if timings["problems"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
