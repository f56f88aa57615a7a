"""Reviews files: the latest verdict per case and side of two runs, frozen like a scores file, as the human
evaluator; refused when changed, forged, empty or holding a credential."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import polars as pl
import pytest

from rag_compare.core.errors import (
    ReviewError,
    RunExistsError,
    RunFileError,
    RunIntegrityError,
    ScoresError,
    SecretInConfigError,
)
from rag_compare.io.review_db import ReviewDatabase
from rag_compare.io.reviews import REVIEWS_KEY, REVIEWS_SCHEMA, Reviews, export_reviews, load_reviews
from rag_compare.io.runfile import freeze_frame, read_frozen
from rag_compare.io.runs import load_run, open_run
from rag_compare.io.scores import load_scores
from tests.helpers.credential_shapes import OPENAI_KEY
from tests.helpers.data import HANDMADE_RUNS, PAYLOAD, SCRIPT
from tests.helpers.reviews import BASELINE, CANDIDATE, VERDICTS, give, reviewed


def exported(tmp_path: Path, verdicts: list[dict[str, object]] = VERDICTS, name: str = "reviews") -> Reviews:
    database = reviewed(tmp_path / f"{name}.sqlite", verdicts)
    return export_reviews(database, BASELINE, CANDIDATE, tmp_path / f"{name}.arrow")


def test_the_latest_verdict_per_case_and_side_is_exported(tmp_path: Path) -> None:
    reviews = exported(tmp_path)
    assert reviews.frame.schema == pl.Schema(REVIEWS_SCHEMA)
    assert reviews.frame.select("case_id", "side", "reviewer", "agree", "status", "answer_correct").rows() == [
        ("q1@v1", "baseline", "ana", True, None, None),
        ("q1@v1", "candidate", "bo", True, None, "no"),
        ("q2@v1", "candidate", "bo", False, "unchanged", None),
    ]
    row = reviews.frame.row(2, named=True)
    assert (row["grounded"], row["retrieval_ok"], row["abstention_correct"]) == ("yes", "no", None)
    assert (row["comment"], row["shown_status"], row["verdict_id"]) == ("the new wording says the same", "regressed", 4)
    assert json.loads(row["shown_signals"]) == {"baseline_recall": 1.0, "candidate_recall": 0.5}
    baseline, candidate = load_run(BASELINE), load_run(CANDIDATE)
    assert dict(reviews.baseline) == {"name": "baseline", "fingerprint": baseline.fingerprint, "path": str(BASELINE)}
    assert reviews.candidate["fingerprint"] == candidate.fingerprint
    assert reviews.database == str(tmp_path / "reviews.sqlite")


def test_a_reviews_file_loads_as_it_was_exported(tmp_path: Path) -> None:
    reviews = exported(tmp_path)
    loaded = load_reviews(tmp_path / "reviews.arrow")
    assert loaded.frame.equals(reviews.frame)
    assert (loaded.fingerprint, loaded.evaluator, loaded.created_at) == (
        reviews.fingerprint,
        reviews.evaluator,
        reviews.created_at,
    )
    assert loaded.to_dict() == reviews.to_dict()
    assert repr(loaded) == (
        f"<Reviews by human ({reviews.evaluator['fingerprint'][:12]}) of baseline (5f080d2f03f7) → candidate "
        f"({reviews.candidate['fingerprint'][:12]}): 3 verdicts: agree 2, disagree 1>"
    )


def test_the_human_evaluator_is_fingerprinted_over_reviewers_and_labels(tmp_path: Path) -> None:
    first = exported(tmp_path, name="first")
    again = exported(tmp_path, [*VERDICTS[:1], VERDICTS[2], VERDICTS[1], VERDICTS[3]], name="again")
    assert again.evaluator == first.evaluator  # the same latest verdicts, given in another order, at another time
    assert first.evaluator["name"] == "human"
    assert first.evaluator["config"]["reviewers"] == ["ana", "bo"]
    assert first.evaluator["config"]["labels"]["grounded"] == ["yes", "partly", "no"]
    commented = exported(tmp_path, [*VERDICTS[:3], {**VERDICTS[3], "comment": "another note"}], name="commented")
    assert commented.evaluator == first.evaluator  # a comment is no label
    relabelled = exported(tmp_path, [*VERDICTS, {**VERDICTS[3], "labels": {"grounded": "no"}}], name="relabelled")
    assert relabelled.evaluator["fingerprint"] != first.evaluator["fingerprint"]
    by_another = exported(tmp_path, [*VERDICTS[:3], {**VERDICTS[3], "reviewer": "cy"}], name="by_another")
    assert by_another.evaluator["fingerprint"] != first.evaluator["fingerprint"]
    assert by_another.evaluator["config"]["reviewers"] == ["ana", "bo", "cy"]


def test_the_summary_counts_labels_agreement_and_reviewers(tmp_path: Path) -> None:
    summary = exported(tmp_path).to_dict()
    assert (summary["cases"], summary["verdicts"]) == (2, 3)
    assert summary["reviewers"] == {"ana": 1, "bo": 2}
    assert summary["agreement"] == {"agree": 2, "disagree": 1}
    assert summary["corrections"] == [{"shown_status": "regressed", "status": "unchanged", "count": 1}]
    assert summary["labels"]["candidate"]["answer_correct"] == {"yes": 0, "no": 1, "blank": 1}
    assert summary["labels"]["candidate"]["grounded"] == {"yes": 1, "partly": 0, "no": 0, "blank": 1}
    assert summary["labels"]["baseline"]["grounded"] == {"yes": 0, "partly": 1, "no": 0, "blank": 0}


def test_the_verdicts_of_other_runs_are_not_exported(tmp_path: Path) -> None:
    path = reviewed(tmp_path / "reviews.sqlite")
    other = open_run(HANDMADE_RUNS / "baseline.arrow")
    with ReviewDatabase.open(path) as database:
        give(database, {**VERDICTS[0], "case": "q3@v1"}, baseline=open_run(CANDIDATE), candidate=other)
    reviews = export_reviews(path, BASELINE, CANDIDATE)
    assert "q3@v1" not in reviews.frame.get_column("case_id").to_list()
    assert reviews.path is None


@pytest.mark.parametrize(
    ("verdicts", "runs", "message"),
    [
        ([], (BASELINE, CANDIDATE), r"no verdict on the runs 'baseline' \(5f080d2f03f7\) → 'candidate' \(.*\) \(it "
         r"holds none\)\. Give verdicts on their review page first: `Comparison.review`, with this database as `db`"),
        (VERDICTS, (BASELINE, BASELINE), r"\(it holds 4 verdicts on 1 other pair of runs\)"),
        (VERDICTS, (CANDIDATE, BASELINE), "but on these runs the other way round: give the baseline first"),
    ],
)  # fmt: skip
def test_an_export_without_verdicts_is_refused(
    tmp_path: Path, verdicts: list[dict[str, object]], runs: tuple[Path, Path], message: str
) -> None:
    database = reviewed(tmp_path / "reviews.sqlite", verdicts)
    with pytest.raises(ReviewError, match=message):
        export_reviews(database, *runs, tmp_path / "reviews.arrow")
    assert not (tmp_path / "reviews.arrow").exists()


def test_a_missing_database_is_refused_not_made(tmp_path: Path) -> None:
    with pytest.raises(ReviewError, match="no such review database"):
        export_reviews(tmp_path / "none.sqlite", BASELINE, CANDIDATE)
    assert list(tmp_path.iterdir()) == []


def test_an_open_database_stays_open(tmp_path: Path) -> None:
    with ReviewDatabase.open(reviewed(tmp_path / "reviews.sqlite")) as database:
        assert export_reviews(database, load_run(BASELINE), open_run(CANDIDATE)).frame.height == 3
        assert give(database, VERDICTS[0]).id == 5


def test_a_reviews_file_is_never_written_over(tmp_path: Path) -> None:
    exported(tmp_path)
    before = (tmp_path / "reviews.arrow").read_bytes()
    with pytest.raises(RunExistsError, match="already exists"):
        export_reviews(tmp_path / "reviews.sqlite", BASELINE, CANDIDATE, tmp_path / "reviews.arrow")
    assert (tmp_path / "reviews.arrow").read_bytes() == before


def test_a_changed_reviews_file_is_refused(tmp_path: Path) -> None:
    exported(tmp_path)
    path = tmp_path / "reviews.arrow"
    data = bytearray(path.read_bytes())
    data[data.index(b"unchanged")] ^= 0x20
    path.write_bytes(bytes(data))
    with pytest.raises(RunIntegrityError, match="does not match its fingerprint"):
        load_reviews(path)


def forged(tmp_path: Path, frame: pl.DataFrame, described: dict[str, object] | None = None) -> Path:
    """The exported reviews file made again with ``frame`` (and ``described``), its fingerprint made to match."""
    _, metadata, _ = read_frozen(tmp_path / "reviews.arrow", "reviews file")
    if described is not None:
        metadata[REVIEWS_KEY] = json.dumps(described)
    output = tmp_path / "forged.arrow"
    freeze_frame(frame, metadata, output, "reviews file")
    return output


def test_a_forged_label_is_refused(tmp_path: Path) -> None:
    frame = exported(tmp_path).frame.with_columns(answer_correct=pl.lit("yes"))
    with pytest.raises(ReviewError, match="its evaluator is not what its verdicts make"):
        load_reviews(forged(tmp_path, frame))


@pytest.mark.parametrize(
    "change",
    [
        pl.col("grounded").fill_null("maybe"),
        pl.col("side").str.replace("baseline", "both"),
        pl.col("status").fill_null("unchanged"),
        pl.col("case_id").str.replace("q2", "q1"),
        pl.col("agree").cast(pl.Int64),
    ],
)
def test_rows_an_export_never_writes_are_refused(tmp_path: Path, change: pl.Expr) -> None:
    frame = exported(tmp_path).frame.with_columns(change)
    with pytest.raises(ReviewError, match=r"an export never writes|lacks, mistypes or misorders"):
        load_reviews(forged(tmp_path, frame))


def test_a_description_an_export_never_writes_is_refused(tmp_path: Path) -> None:
    reviews = exported(tmp_path)
    described = {**json.loads(read_frozen(tmp_path / "reviews.arrow", "reviews file")[1][REVIEWS_KEY])}
    described["evaluator"] = {**described["evaluator"], "name": "gpt"}
    with pytest.raises(ReviewError, match="says of itself what freezing never writes"):
        load_reviews(forged(tmp_path, reviews.frame, described))


def test_other_frozen_files_are_told_apart(tmp_path: Path) -> None:
    exported(tmp_path)
    with pytest.raises(ReviewError, match=r"is not a reviews file .*Make one with `export_reviews`"):
        load_reviews(BASELINE)
    with pytest.raises(RunFileError, match=r"is a reviews file .*, not a run; `load_reviews` shows it"):
        load_run(tmp_path / "reviews.arrow")
    with pytest.raises(ScoresError, match="is not a scores file"):
        load_scores(tmp_path / "reviews.arrow")


def test_a_credential_in_a_path_is_refused_before_anything(tmp_path: Path) -> None:
    database = reviewed(tmp_path / "reviews.sqlite")
    with pytest.raises(SecretInConfigError, match="the path of `output` holds"):
        export_reviews(database, BASELINE, CANDIDATE, tmp_path / f"{OPENAI_KEY}.arrow")
    with pytest.raises(SecretInConfigError, match="the path of `db` holds"):
        export_reviews(tmp_path / f"{OPENAI_KEY}.sqlite", BASELINE, CANDIDATE)
    assert [path.name for path in tmp_path.iterdir()] == ["reviews.sqlite"]  # its WAL is folded in when closed


def test_a_credential_stored_around_the_checks_is_never_exported(tmp_path: Path) -> None:
    database = reviewed(tmp_path / "reviews.sqlite")
    with sqlite3.connect(database) as connection:
        connection.execute(
            "INSERT INTO verdicts (created_at, reviewer, case_id, side, baseline_fingerprint, candidate_fingerprint, "
            "shown_status, shown_signals, agree, comment) SELECT created_at, reviewer, 'q3@v1', side, "
            f"baseline_fingerprint, candidate_fingerprint, shown_status, '{{}}', 1, 'key {OPENAI_KEY}' FROM verdicts "
            "LIMIT 1"
        )
    with pytest.raises(ReviewError, match="hold credentials, which are never written to a reviews file") as raised:
        export_reviews(database, BASELINE, CANDIDATE, tmp_path / "reviews.arrow")
    assert OPENAI_KEY not in str(raised.value)
    assert not (tmp_path / "reviews.arrow").exists()


def test_hostile_texts_are_kept_exactly(tmp_path: Path) -> None:
    case_id = f"b{SCRIPT}\u202e\n@v1"
    comment = f"{PAYLOAD}\u2066\x1b[31m" + "é" * 4000
    reviews = exported(tmp_path, [{**VERDICTS[3], "case": case_id, "comment": comment, "reviewer": "ana </script>"}])
    loaded = load_reviews(tmp_path / "reviews.arrow")
    assert loaded.frame.select("case_id", "comment", "reviewer").row(0) == (case_id, comment, "ana </script>")
    assert loaded.frame.equals(reviews.frame)
    assert "reviewers    ana </script> 1" in loaded.render("text")
