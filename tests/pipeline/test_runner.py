"""capture: records per case, failures kept, retries, timeouts, concurrency, the checkpoint and resuming."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import polars as pl
import pytest

from rag_compare import load_run
from rag_compare.core.errors import CaptureError, ConfigError, EndpointError, RunExistsError, SecretInConfigError
from rag_compare.core.protocols import Case, CaseFailure, Context, Generation, Passage
from rag_compare.io.corpus import load_corpus
from rag_compare.llm.limits import Limits
from rag_compare.pipeline.checkpoint import checkpoint_path
from rag_compare.pipeline.context_builder import BudgetContextBuilder
from rag_compare.pipeline.runner import CAPTURE_LIMITS, capture
from tests.helpers.credential_shapes import KEY_SHAPES, OPENAI_KEY, named_with, secret_parts

# Four cases of version v1; "syn@v1" is an unreviewed synthetic draft. Each case's question names the passages
# the fake retriever returns for it, so the expected records can be written down.
CORPUS = pl.DataFrame(
    {
        "case_id": ["a@v1", "b@v1", "c@v1", "syn@v1"],
        "question": ["p1 p2", "p2", "p3 p1", "p1"],
        "answerability": ["answerable", "answerable", "answerable", "answerable"],
        "source_version": ["v1"] * 4,
        "required_passage_ids": [["p1"], ["p2"], ["p3"], ["p1"]],
        "origin": ["manual", "manual", "manual", "synthetic"],
        "reviewed": [True, True, True, False],
        "team": ["hr", "ops", "hr", "hr"],
    }
)
TEXTS = {"p1": "Rule one.", "p2": "Rule two.", "p3": "Rule three."}
FAST = dataclasses.replace(CAPTURE_LIMITS, backoff=0.0)


def limits(**changes: Any) -> Limits:
    """The capture's default limits with ``changes``."""
    return dataclasses.replace(CAPTURE_LIMITS, **changes)


class Retrieve:
    """Returns the passages named in the question, scored 1/rank; counts calls and remembers the cases."""

    config: ClassVar[dict[str, str]] = {"kind": "fake"}

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.cases: list[Case] = []
        self.lock = threading.Lock()

    def __call__(self, case: Case, top_k: int) -> list[dict[str, Any]]:
        with self.lock:
            self.calls.append(case.case_id)
            self.cases.append(case)
        ids = case.question.split()[:top_k]
        return [
            {"passage_id": pid, "score": 1 / rank, "text": TEXTS[pid], "section": "S"}
            for rank, pid in enumerate(ids, 1)
        ]


def answer(case: Case, context: Context) -> Generation:
    return Generation(f"answer to {case.case_id}", prompt_tokens=len(context.text), completion_tokens=3)


def test_each_case_records_what_every_stage_gave(tmp_path: Path) -> None:
    retrieve = Retrieve()
    run = capture(CORPUS, retrieve, answer, top_k=2, output=tmp_path / "run.arrow", config={"name": "mine"})
    records = run.records.sort("case_id")
    assert records.get_column("case_id").to_list() == ["a@v1", "b@v1", "c@v1"]  # the draft is left out
    first = records.row(0, named=True)
    assert first["status"] == "ok"
    assert first["error"] is None
    assert first["retrieved_passage_ids"] == ["p1", "p2"]
    assert first["retrieved_scores"] == [1.0, 0.5]
    assert first["context"] == "[p1] Rule one.\n\n[p2] Rule two."
    assert first["context_passage_ids"] == ["p1", "p2"]
    assert first["answer"] == "answer to a@v1"
    assert (first["prompt_tokens"], first["completion_tokens"]) == (len(first["context"]), 3)
    assert first["latency_ms"] >= 0
    assert first["attempts"] == 1
    assert first["failed_stage"] is None
    assert json.loads(first["retrieved_metadata"]) == [{"section": "S"}, {"section": "S"}]
    assert first["prompt_messages"] is None
    assert load_run(tmp_path / "run.arrow").fingerprint == run.fingerprint
    assert not checkpoint_path(tmp_path / "run.arrow").exists()  # removed once the run is frozen


def test_parts_see_the_question_and_metadata_but_no_labels() -> None:
    retrieve = Retrieve()
    capture(CORPUS, retrieve, answer, top_k=1)
    case = next(case for case in retrieve.cases if case.case_id == "b@v1")
    assert (case.question, case.source_version, dict(case.metadata)) == ("p2", "v1", {"team": "ops"})
    assert not hasattr(case, "answerability")
    assert not hasattr(case, "required_passage_ids")


def test_the_config_records_the_parts_and_settings() -> None:
    run = capture(
        CORPUS, Retrieve(), answer, top_k=2, config={"name": "mine", "team": "search"}, limits=limits(timeout=9)
    )
    config = run.config
    assert config["name"] == "mine"
    assert config["team"] == "search"
    assert config["top_k"] == 2
    assert config["retriever"] == {"kind": "fake"}
    assert config["generator"] == {"callable": "tests.pipeline.test_runner.answer"}
    assert config["context_builder"]["kind"] == "budget"
    assert config["capture"] == {"timeout": 9, "max_retries": 2, "unreviewed_left_out": ["syn@v1"]}


class PassagesRetriever(Retrieve):
    """A retriever over a passages file, saying so in its config as ``BM25Retriever`` does."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.config = {"kind": "fake", "passages": {"path": path, "count": 3}}  # type: ignore[misc]


@pytest.mark.parametrize("path", ["corpora/handbook_passages.csv", "/srv/kb/passages.csv"])
def test_the_knowledge_base_is_the_retrievers_passages_file_as_given(path: str) -> None:
    run = capture(CORPUS, PassagesRetriever(path), answer, top_k=1)
    assert run.config["knowledge_base"] == run.config["retriever"]["passages"]["path"] == path
    own = capture(CORPUS, PassagesRetriever(path), answer, top_k=1, config={"knowledge_base": "elsewhere.csv"})
    assert own.config["knowledge_base"] == "elsewhere.csv"


def test_a_retriever_without_a_passages_file_records_no_knowledge_base() -> None:
    assert "knowledge_base" not in capture(CORPUS, Retrieve(), answer, top_k=1).config
    assert "knowledge_base" not in capture(CORPUS, PassagesRetriever("<frame>"), answer, top_k=1).config


def test_include_unreviewed_runs_the_drafts_too() -> None:
    run = capture(CORPUS, Retrieve(), answer, top_k=1, include_unreviewed=True)
    assert "syn@v1" in run.records.get_column("case_id").to_list()
    assert "unreviewed_left_out" not in run.config["capture"]


def test_a_failing_part_is_retried_then_recorded_as_failed_with_what_came_before() -> None:
    attempts: dict[str, int] = {}

    def flaky(case: Case, context: Context) -> str:
        attempts[case.case_id] = attempts.get(case.case_id, 0) + 1
        if case.case_id == "a@v1" and attempts["a@v1"] == 1:
            raise ConnectionError("reset by peer")
        if case.case_id == "b@v1":
            raise ValueError("boom\nsecond line")
        return "fine"

    run = capture(CORPUS, Retrieve(), flaky, top_k=2, limits=dataclasses.replace(FAST, max_retries=2))
    rows = {row["case_id"]: row for row in run.records.iter_rows(named=True)}
    assert (rows["a@v1"]["status"], rows["a@v1"]["attempts"], rows["a@v1"]["answer"]) == ("ok", 2, "fine")
    failed = rows["b@v1"]
    assert (failed["status"], failed["attempts"], failed["failed_stage"]) == ("failed", 3, "generate")
    assert failed["error"] == "ValueError: boom second line"
    assert failed["answer"] is None
    assert failed["retrieved_passage_ids"] == ["p2"]  # what the retriever gave is kept
    assert failed["context_passage_ids"] == ["p2"]
    assert attempts["b@v1"] == 3


def test_case_failure_is_not_retried() -> None:
    calls: list[str] = []

    def refuse(case: Case, top_k: int) -> list[str]:
        calls.append(case.case_id)
        raise CaseFailure("no index for this version")

    run = capture(CORPUS, refuse, answer, top_k=2, limits=FAST)
    assert sorted(calls) == ["a@v1", "b@v1", "c@v1"]
    assert set(run.records.get_column("status")) == {"failed"}
    assert set(run.records.get_column("failed_stage")) == {"retrieve"}
    assert set(run.records.get_column("error")) == {"no index for this version"}


def test_a_hanging_part_times_out_sync_or_async() -> None:
    async def slow_answer(case: Case, context: Context) -> str:
        await asyncio.sleep(5 if case.case_id == "a@v1" else 0)
        return "quick"

    def slow_retrieve(case: Case, top_k: int) -> list[str]:
        time.sleep(2 if case.case_id == "b@v1" else 0)
        return ["p1"]

    started = time.perf_counter()
    run = capture(
        CORPUS,
        slow_retrieve,
        slow_answer,
        top_k=1,
        limits=limits(timeout=0.3, max_retries=0),
        context_builder=_ids_only,
    )
    assert time.perf_counter() - started < 1.9  # neither hang was waited out
    rows = {row["case_id"]: row for row in run.records.iter_rows(named=True)}
    assert (rows["a@v1"]["status"], rows["a@v1"]["failed_stage"]) == ("timeout", "generate")
    assert rows["a@v1"]["error"] == "no result within 0.3 s"
    assert (rows["b@v1"]["status"], rows["b@v1"]["failed_stage"]) == ("timeout", "retrieve")
    assert rows["c@v1"]["answer"] == "quick"


def _ids_only(case: Case, passages: Sequence[Passage]) -> Context:
    return Context(" ".join(passage.passage_id for passage in passages), tuple(p.passage_id for p in passages))


@pytest.mark.parametrize(("copies", "repeats"), [(4, 1), (1, 4)], ids=["cases", "samples of every case together"])
def test_concurrency_is_bounded(copies: int, repeats: int) -> None:
    in_flight, peak = 0, 0
    corpus = pl.concat([CORPUS.head(3).with_columns(pl.col("case_id") + f"-{n}") for n in range(copies)])

    async def generate(case: Case, context: Context) -> str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.02)
        in_flight -= 1
        return "ok"

    run = capture(corpus, Retrieve(), generate, top_k=1, repeats=repeats, limits=limits(concurrency=3))
    assert run.records.height == 12
    assert peak == 3


def test_a_part_of_the_wrong_shape_stops_the_capture_with_a_hint() -> None:
    with pytest.raises(ConfigError, match="the retriever returned int"):
        capture(CORPUS, lambda case, top_k: 7, answer, top_k=1)
    with pytest.raises(ConfigError, match="the generator returned"):
        capture(CORPUS, Retrieve(), lambda case, context: 3.5, top_k=1)


def test_bad_settings_and_configs_are_refused_before_any_case_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    retrieve = Retrieve()
    for top_k in (0, 1_000_001, 2**32):
        with pytest.raises(ConfigError, match="top_k must be a whole number from 1 to 1,000,000"):
            capture(CORPUS, retrieve, answer, top_k=top_k)
    with pytest.raises(ConfigError, match="sets top_k, retriever, which capture records itself"):
        capture(CORPUS, retrieve, answer, config={"top_k": 3, "retriever": "x"})
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-value-1234567890")
    with pytest.raises(SecretInConfigError):
        capture(CORPUS, retrieve, answer, config={"note": "sk-test-secret-value-1234567890"})
    (tmp_path / "taken.arrow").write_bytes(b"x")
    with pytest.raises(RunExistsError):
        capture(CORPUS, retrieve, answer, output=tmp_path / "taken.arrow")
    assert retrieve.calls == []


class StopAfter:
    """A generator whose endpoint starts refusing after ``good`` answers (which stops a capture)."""

    def __init__(self, good: int) -> None:
        self.good, self.calls = good, 0

    async def __call__(self, case: Case, context: Context) -> str:
        self.calls += 1
        if self.calls > self.good:
            raise EndpointError("the endpoint refused the request: HTTP 401")
        return f"answer {case.case_id}"

    config: ClassVar[dict[str, str]] = {"kind": "stop-after"}


def test_an_interrupted_capture_resumes_from_its_checkpoint_without_redoing_or_losing_cases(tmp_path: Path) -> None:
    output = tmp_path / "run.arrow"
    corpus = pl.concat([CORPUS.head(3).with_columns(pl.col("case_id") + f"-{n}") for n in range(5)])  # 15 cases
    with pytest.raises(EndpointError):
        capture(corpus, Retrieve(), StopAfter(6), top_k=1, output=output, limits=limits(concurrency=1))
    assert not output.exists()
    lines = checkpoint_path(output).read_text().splitlines()
    assert len(lines) == 1 + 6  # the header, then one line per finished case

    retrieve = Retrieve()
    run = capture(corpus, retrieve, StopAfter(100), top_k=1, output=output, limits=limits(concurrency=1))
    assert len(retrieve.calls) == 15 - 6  # only the cases not yet finished
    ids = run.records.get_column("case_id").to_list()
    assert sorted(ids) == sorted(corpus.get_column("case_id").to_list())  # each exactly once
    assert set(run.records.get_column("status")) == {"ok"}
    assert not checkpoint_path(output).exists()


def test_a_checkpoint_holding_a_credential_is_refused_on_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = tmp_path / "run.arrow"
    with pytest.raises(EndpointError):
        capture(CORPUS, Retrieve(), StopAfter(1), top_k=1, output=output, limits=limits(concurrency=1))
    monkeypatch.setenv("DB_PASSWORD", "answer a@v1")  # now a secret, written by the capture before
    retrieve = Retrieve()
    with pytest.raises(CaptureError, match=r"case 'a@v1': column 'answer' in .*checkpoint\.jsonl") as excinfo:
        capture(CORPUS, retrieve, StopAfter(100), top_k=1, output=output)
    assert "answer a@v1" not in str(excinfo.value)
    assert retrieve.calls == []
    assert not output.exists()


@pytest.mark.parametrize(
    ("passage", "column"),
    [
        pytest.param({"passage_id": OPENAI_KEY}, "retrieved_passage_ids", id="list-item"),
        pytest.param(
            {"passage_id": "p1", "source": {"auth": f"Bearer {OPENAI_KEY[8:]}"}}, "retrieved_metadata", id="metadata"
        ),
    ],
)
def test_a_record_holding_a_credential_stops_the_capture_before_its_checkpoint(
    tmp_path: Path, passage: dict[str, Any], column: str
) -> None:
    output = tmp_path / "run.arrow"
    with pytest.raises(CaptureError, match=f"case 'a@v1': column '{column}' holds a credential") as excinfo:
        capture(CORPUS, lambda case, top_k: [passage], answer, top_k=1, output=output, limits=limits(concurrency=1))
    assert OPENAI_KEY[8:] not in str(excinfo.value)
    assert OPENAI_KEY[8:] not in checkpoint_path(output).read_text(encoding="utf-8")
    assert not output.exists()


def test_a_line_cut_off_by_a_killed_process_is_dropped_and_its_case_captured_again(tmp_path: Path) -> None:
    output = tmp_path / "run.arrow"
    with pytest.raises(EndpointError):
        capture(CORPUS, Retrieve(), StopAfter(2), top_k=1, output=output, limits=limits(concurrency=1))
    path = checkpoint_path(output)
    with path.open("a", encoding="utf-8") as stream:
        stream.write('{"case_id": "c@v1", "status": "o')  # a write the kill cut short
    retrieve = Retrieve()
    run = capture(CORPUS, retrieve, StopAfter(100), top_k=1, output=output)
    assert retrieve.calls == ["c@v1"]
    assert run.records.height == 3


def test_a_checkpoint_of_other_settings_is_refused(tmp_path: Path) -> None:
    output = tmp_path / "run.arrow"
    with pytest.raises(EndpointError):
        capture(CORPUS, Retrieve(), StopAfter(1), top_k=1, output=output, limits=limits(concurrency=1))
    with pytest.raises(CaptureError, match="other settings or another corpus"):
        capture(CORPUS, Retrieve(), StopAfter(100), top_k=2, output=output)
    damaged = tmp_path / "damaged.arrow"
    checkpoint_path(damaged).write_text("not a checkpoint\n")
    with pytest.raises(CaptureError, match="is not a capture checkpoint"):
        capture(CORPUS, Retrieve(), answer, top_k=1, output=damaged)


def test_context_builder_and_generator_may_return_plain_values() -> None:
    def text_only(case: Case, passages: Sequence[Passage]) -> str:
        return "+".join(passage.passage_id for passage in passages)

    def as_mapping(case: Case, context: Context) -> dict[str, Any]:
        return {"answer": context.text, "prompt_tokens": 5, "messages": [{"role": "user", "content": context.text}]}

    run = capture(CORPUS, Retrieve(), as_mapping, top_k=2, context_builder=text_only)
    first = run.records.filter(pl.col("case_id") == "a@v1").row(0, named=True)
    assert (first["context"], first["answer"], first["prompt_tokens"]) == ("p1+p2", "p1+p2", 5)
    assert first["context_passage_ids"] is None  # a bare text says nothing about which passages made it in
    assert json.loads(first["prompt_messages"]) == [{"role": "user", "content": "p1+p2"}]


def test_retrieved_ids_alone_are_enough() -> None:
    run = capture(CORPUS, lambda case, top_k: [Passage("p3"), "p1"], answer, top_k=2, context_builder=_ids_only)
    first = run.records.row(0, named=True)
    assert first["retrieved_passage_ids"] == ["p3", "p1"]
    assert first["retrieved_scores"] is None


def test_the_default_context_builder_keeps_every_passage() -> None:
    run = capture(CORPUS, Retrieve(), answer, top_k=2)
    assert run.config["context_builder"] == BudgetContextBuilder().config


def numbered(case: Case, context: Context) -> str:
    """An answer naming the sample it was given."""
    return f"answer to {case.case_id} #{case.repeat}"


def samples(run_records: pl.DataFrame) -> list[tuple[str, int]]:
    return list(run_records.select("case_id", "repeat").iter_rows())


def test_repeats_capture_each_case_that_many_times_in_corpus_order_then_by_repeat() -> None:
    retrieve = Retrieve()
    run = capture(CORPUS, retrieve, numbered, top_k=1, repeats=3)
    # a, b and c (the draft is left out), three samples each, in corpus order then by repeat
    expected = [(case_id, repeat) for case_id in ("a@v1", "b@v1", "c@v1") for repeat in range(3)]
    assert samples(run.records) == expected
    assert run.records.get_column("answer").to_list() == [f"answer to {case} #{repeat}" for case, repeat in expected]
    assert sorted((case.case_id, case.repeat) for case in retrieve.cases) == expected  # each part saw the repeat
    assert {key: value for key, value in run.config.items() if key != "created_at"} == {
        key: value
        for key, value in capture(CORPUS, Retrieve(), numbered, top_k=1).config.items()
        if key != "created_at"
    }  # the number of repeats is not in the config


def test_one_repeat_is_the_capture_it_always_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    monkeypatch.setattr(time, "perf_counter", lambda: 1.0)  # latencies of 0 ms, so the bytes can be equal
    default = capture(CORPUS, Retrieve(), numbered, top_k=1, output=tmp_path / "default.arrow", config={"name": "r"})
    one = capture(CORPUS, Retrieve(), numbered, top_k=1, repeats=1, output=tmp_path / "one.arrow", config={"name": "r"})
    assert "repeat" not in one.records.columns
    assert one.records.get_column("answer").to_list() == [f"answer to {case}@v1 #0" for case in "abc"]
    assert one.fingerprint == default.fingerprint
    assert (tmp_path / "one.arrow").read_bytes() == (tmp_path / "default.arrow").read_bytes()


@pytest.mark.parametrize("repeats", [0, -1, "x", 1.5, True, None])
def test_a_number_of_repeats_that_is_not_a_whole_number_of_1_or_more_is_refused(repeats: Any) -> None:
    retrieve = Retrieve()
    with pytest.raises(ConfigError, match=r"`repeats` must be a whole number of 1 or more .*got "):
        capture(CORPUS, retrieve, answer, top_k=1, repeats=repeats)
    assert retrieve.calls == []


def test_progress_counts_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    from rag_compare.pipeline import runner

    bars: list[tuple[str | None, int]] = []
    real = runner.progress_bar

    def recorded(label: str | None, total: int) -> Any:
        bars.append((label, total))
        return real(None, total)  # no bar drawn

    monkeypatch.setattr(runner, "progress_bar", recorded)
    capture(CORPUS, Retrieve(), answer, top_k=1, repeats=2, progress=True)
    capture(CORPUS, Retrieve(), answer, top_k=1, progress=True)
    assert bars == [("capturing 6 samples (2 repeats a case)", 6), ("capturing 3 cases", 3)]


def test_an_interrupted_capture_with_repeats_resumes_only_the_samples_not_yet_finished(tmp_path: Path) -> None:
    output = tmp_path / "run.arrow"
    with pytest.raises(EndpointError):  # 3 cases x 3 repeats, one at a time: a0 a1 a2 b0 finish, then a refusal
        capture(CORPUS, Retrieve(), StopAfter(4), top_k=1, repeats=3, output=output, limits=limits(concurrency=1))
    lines = [json.loads(line) for line in checkpoint_path(output).read_text().splitlines()[1:]]
    assert [(line["case_id"], line["repeat"]) for line in lines] == [("a@v1", 0), ("a@v1", 1), ("a@v1", 2), ("b@v1", 0)]

    retrieve = Retrieve()
    run = capture(CORPUS, retrieve, StopAfter(100), top_k=1, repeats=3, output=output, limits=limits(concurrency=1))
    assert sorted(retrieve.calls) == ["b@v1", "b@v1", "c@v1", "c@v1", "c@v1"]  # 9 - 4 samples
    assert samples(run.records) == [(case, repeat) for case in ("a@v1", "b@v1", "c@v1") for repeat in range(3)]
    assert not checkpoint_path(output).exists()


def test_resuming_with_more_repeats_adds_samples_and_with_fewer_leaves_the_rest_in_the_checkpoint(
    tmp_path: Path,
) -> None:
    output = tmp_path / "run.arrow"
    one_at_a_time = limits(concurrency=1)
    with pytest.raises(EndpointError):  # a0 a1 a2 b0 b1 b2 c0 finish
        capture(CORPUS, Retrieve(), StopAfter(7), top_k=1, repeats=3, output=output, limits=one_at_a_time)
    with pytest.raises(EndpointError):  # with 2 repeats only c1 is missing; it fails at once: nothing new
        capture(CORPUS, Retrieve(), StopAfter(0), top_k=1, repeats=2, output=output, limits=one_at_a_time)
    assert len(checkpoint_path(output).read_text().splitlines()) == 1 + 7  # a2 and b2 stay in the checkpoint

    retrieve = Retrieve()
    run = capture(CORPUS, retrieve, StopAfter(100), top_k=1, repeats=4, output=output, limits=one_at_a_time)
    assert sorted(retrieve.calls) == ["a@v1", "b@v1", "c@v1", "c@v1", "c@v1"]  # a3, b3, c1, c2, c3: 12 - 7
    assert samples(run.records) == [(case, repeat) for case in ("a@v1", "b@v1", "c@v1") for repeat in range(4)]


def test_resuming_with_fewer_repeats_leaves_the_samples_beyond_them_out_of_the_run(tmp_path: Path) -> None:
    output = tmp_path / "run.arrow"
    with pytest.raises(EndpointError):  # a0 a1 a2 b0 b1 b2 c0 finish
        capture(CORPUS, Retrieve(), StopAfter(7), top_k=1, repeats=3, output=output, limits=limits(concurrency=1))
    retrieve = Retrieve()
    run = capture(CORPUS, retrieve, StopAfter(100), top_k=1, repeats=2, output=output)
    assert retrieve.calls == ["c@v1"]  # c1
    assert samples(run.records) == [(case, repeat) for case in ("a@v1", "b@v1", "c@v1") for repeat in range(2)]
    single = tmp_path / "single.arrow"
    with pytest.raises(EndpointError):  # a0 a1 finish
        capture(CORPUS, Retrieve(), StopAfter(2), top_k=1, repeats=3, output=single, limits=limits(concurrency=1))
    run = capture(CORPUS, Retrieve(), StopAfter(100), top_k=1, output=single)
    assert "repeat" not in run.records.columns  # one repeat: the run of today, repeat 0 of each case
    assert run.records.get_column("case_id").to_list() == ["a@v1", "b@v1", "c@v1"]


def test_a_checkpoint_line_without_a_repeat_resumes_as_repeat_0(tmp_path: Path) -> None:
    output = tmp_path / "run.arrow"
    with pytest.raises(EndpointError):  # a and b finish
        capture(CORPUS, Retrieve(), StopAfter(2), top_k=1, output=output, limits=limits(concurrency=1))
    path = checkpoint_path(output)
    header, *lines = path.read_text(encoding="utf-8").splitlines()
    old = [json.dumps({key: value for key, value in json.loads(line).items() if key != "repeat"}) for line in lines]
    path.write_text("\n".join([header, *old]) + "\n", encoding="utf-8")  # as a checkpoint of before repeats
    assert all('"repeat"' not in line for line in old)

    retrieve = Retrieve()
    run = capture(CORPUS, retrieve, StopAfter(100), top_k=1, repeats=2, output=output, limits=limits(concurrency=1))
    assert sorted(retrieve.calls) == ["a@v1", "b@v1", "c@v1", "c@v1"]  # a1, b1, c0, c1: a0 and b0 were done
    assert samples(run.records) == [(case, repeat) for case in ("a@v1", "b@v1", "c@v1") for repeat in range(2)]


@pytest.mark.parametrize("place", ["corpus", "loaded-corpus", "output"])
@pytest.mark.parametrize("secret", KEY_SHAPES.values(), ids=KEY_SHAPES.keys())
def test_a_path_the_run_would_store_holding_a_credential_is_refused_before_any_case_runs(
    tmp_path: Path, secret: str, place: str
) -> None:
    corpus = named_with(secret, tmp_path, ".parquet")
    CORPUS.write_parquet(corpus)
    given = {"corpus": corpus, "loaded-corpus": load_corpus(corpus), "output": CORPUS}[place]
    output = named_with(secret, tmp_path, ".arrow") if place == "output" else tmp_path / "run.arrow"
    retrieve, before = Retrieve(), sorted(tmp_path.rglob("*"))
    with pytest.raises(SecretInConfigError) as raised:
        capture(given, retrieve, answer, output=output)
    assert str(raised.value).startswith(f"the path of `{place.removeprefix('loaded-')}` holds a credential")
    assert not any(form in str(raised.value) for form in secret_parts(secret))
    assert retrieve.calls == []
    assert sorted(tmp_path.rglob("*")) == before
