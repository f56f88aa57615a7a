"""Where an output may be written: what is at the path (looked at, never opened), its folder, a path naming a
folder; and every function of the Python API that writes checks it before any work."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rag_compare.core.errors import RunExistsError, RunFileError
from rag_compare.io.outputs import Existing, check_output, names_folder
from tests.helpers.special_files import BAD_OUTPUTS, NODES, bad_output, node_kind, not_blocked_by

EXISTING: tuple[Existing, ...] = ("refused", "replaced", "updated")


def test_a_path_names_a_folder_by_how_it_ends() -> None:
    for folder in ("out/", "runs/out/", "out/.", "out/..", ".", "..", ""):
        assert names_folder(folder), folder
    for file in ("out", "runs/out.arrow", ".out", "out.", Path("out/")):  # a Path has dropped the /
        assert not names_folder(file), file


@pytest.mark.parametrize("folder", [False, True])
@pytest.mark.parametrize("existing", EXISTING)
@pytest.mark.parametrize("kind", NODES)
def test_a_special_file_is_refused_whatever_the_output_does(
    tmp_path: Path, kind: str, existing: Existing, folder: bool
) -> None:
    node = bad_output(kind, tmp_path / "out")
    before = node_kind(node)
    with pytest.raises(RunFileError, match=f"^{node}: is a (character device|FIFO|socket|symbolic link)"):
        check_output(node, "report", existing="refused" if folder else existing, folder=folder)
    assert node_kind(node) == before


def test_a_regular_file_is_kept_unless_the_output_replaces_or_updates_it(tmp_path: Path) -> None:
    file = tmp_path / "report.html"
    file.write_text("an old report")
    with pytest.raises(RunExistsError, match=r"already exists and is never overwritten by the report. Give `output`"):
        check_output(file, "report")
    with pytest.raises(RunExistsError, match="already exists and is never overwritten by the run directory"):
        check_output(file, "run directory", folder=True)
    assert check_output(str(file), "report", existing="replaced") == file
    assert check_output(file, "reply cache", existing="updated") == file
    frozen = tmp_path / "run.arrow"
    frozen.write_bytes(b"ARROW1\x00\x00")
    with pytest.raises(RunExistsError, match=r"holds an Arrow file .* which is never replaced"):
        check_output(frozen, "report", existing="replaced")
    assert file.read_text() == "an old report"


def test_a_link_is_followed_only_by_an_output_updated_in_place(tmp_path: Path) -> None:
    file, link, dangling, to_fifo = (tmp_path / name for name in ("cache", "link", "dangling", "to-fifo"))
    file.write_text("kept")
    link.symlink_to(file)
    dangling.symlink_to(tmp_path / "nothing")
    os.mkfifo(tmp_path / "fifo")
    to_fifo.symlink_to(tmp_path / "fifo")
    for existing in ("refused", "replaced"):
        with pytest.raises(RunFileError, match=f"^{link}: is a symbolic link, which an output never replaces"):
            check_output(link, "report", existing=existing)
    assert check_output(link, "reply cache", existing="updated") == link
    with pytest.raises(RunFileError, match=f"^{dangling}: is a symbolic link to nothing"):
        check_output(dangling, "reply cache", existing="updated")
    with pytest.raises(RunFileError, match=f"^{to_fifo}: is a symbolic link to a FIFO"):
        check_output(to_fifo, "reply cache", existing="updated")
    assert (link.is_symlink(), file.read_text()) == (True, "kept")


def test_a_folder_is_never_a_file_nor_a_new_folder(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    for existing in EXISTING:
        with pytest.raises(RunExistsError, match=r"runs: is a folder. Give `output` the path of a new file for the"):
            check_output(tmp_path / "runs", "frozen run", existing=existing)
    with pytest.raises(RunExistsError, match="runs: already exists and is never overwritten by the run directory"):
        check_output(f"{tmp_path}/runs/", "run directory", folder=True)


def test_the_folder_of_an_output_must_exist_and_be_writable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "nowhere" / "deeper" / "out.arrow"
    with pytest.raises(RunFileError, match=f"^{missing}: cannot be written: the folder {missing.parent} does not"):
        check_output(missing, "frozen run")
    with pytest.raises(RunFileError, match=r"does not exist. Create it first, or give `cache` a path in an existing"):
        check_output(missing, "reply cache", existing="updated", parameter="cache")
    with pytest.raises(RunFileError, match="does not exist"):
        check_output(f"{missing}/", "run directory", folder=True)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(RunFileError, match=f"^{blocker / 'out'}: cannot be written: {blocker} is not a folder"):
        check_output(blocker / "out", "frozen run")
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # no permission (root has them all)
    with pytest.raises(RunFileError, match=r"out.arrow: cannot be written \(Permission denied\)"):
        check_output(tmp_path / "out.arrow", "frozen run")
    assert sorted(tmp_path.iterdir()) == [blocker]


def test_a_file_output_named_as_a_folder_is_refused_naming_the_parameter(tmp_path: Path) -> None:
    for named in (f"{tmp_path}/out/", f"{tmp_path}/out/.", f"{tmp_path}/.."):
        with pytest.raises(RunFileError, match=f"^{named}: names a folder, but the scores file is a file. Give `out`"):
            check_output(named, "scores file", parameter="out")
    assert check_output(f"{tmp_path}/out/", "run directory", folder=True) == tmp_path / "out"
    assert check_output(tmp_path / "out.arrow", "frozen run") == tmp_path / "out.arrow"
    assert list(tmp_path.iterdir()) == []


def _capture(inputs: dict[str, Path], output: str) -> Any:
    from rag_compare.core.protocols import Generation
    from rag_compare.pipeline.runner import capture

    return capture(inputs["corpus"], lambda case, top_k: [], lambda case, context: Generation("a"), output=output)


def _fallback(inputs: dict[str, Path], output: str) -> None:
    from rag_compare.compute.fallback import simulate_fallback
    from rag_compare.io.runs import load_run
    from rag_compare.io.scores import load_scores

    scores = load_scores(inputs["scores"]).frame
    simulate_fallback(load_run(inputs["candidate"]), scores, "trustworthiness", [0.5]).write_cases(output)


def _comparison_folder(inputs: dict[str, Path], output: str) -> None:
    from rag_compare.compute.compare_runs import compare

    compare(inputs["baseline"], inputs["candidate"]).write_directory(output)


def _score(inputs: dict[str, Path], output: str) -> Any:
    from rag_compare.compute.lexical_judge import LexicalJudge
    from rag_compare.io.runs import load_run
    from rag_compare.io.scores import score_run

    return score_run(load_run(inputs["candidate"]), LexicalJudge(), output=output)


def _judge_pairs(inputs: dict[str, Path], output: str) -> Any:
    from rag_compare.io.pairs import judge_pairs

    return judge_pairs(inputs["baseline"], inputs["candidate"], None, output=output)  # type: ignore[arg-type]


def _freeze(inputs: dict[str, Path], output: str, **options: Any) -> Any:
    from rag_compare.compute.freezing import freeze_run

    return freeze_run(inputs["records"], inputs["corpus"], output=output, **options)


def _merge(inputs: dict[str, Path], output: str) -> Any:
    from rag_compare.compute.merging import merge_repeats

    return merge_repeats([inputs["first"], inputs["second"]], output)


def _import_scores(inputs: dict[str, Path], output: str) -> Any:
    from rag_compare.io.external_scores import import_scores

    mapping = {"trust": "trustworthiness"}
    return import_scores(inputs["candidate"], inputs["trust"], evaluator="e", mapping=mapping, output=output)


def _admit(inputs: dict[str, Path], output: str) -> Any:
    from rag_compare.io.drafts_file import admit_cases

    return admit_cases(inputs["corpus"], ["hotel@v2"], output=output)


def _cache(inputs: dict[str, Path], output: str) -> Any:
    from rag_compare.llm.cache import ReplyCache

    return ReplyCache(output)


WRITERS: dict[str, tuple[Callable[[dict[str, Path], str], Any], str, bool]] = {
    # what writes, called with the inputs and the output; the parameter the output is given to; whether a
    # trailing / names the folder it writes
    "freeze_run": (_freeze, "output", True),
    "freeze_run into a run directory": (lambda inputs, output: _freeze(inputs, output, buckets=2), "output", True),
    "merge_repeats": (_merge, "output", False),
    "capture": (_capture, "output", True),
    "score_run": (_score, "output", False),
    "import_scores": (_import_scores, "output", False),
    "judge_pairs": (_judge_pairs, "output", False),
    "simulate_fallback(...).write_cases": (_fallback, "path", False),
    "admit_cases": (_admit, "output", False),
    "Comparison.write_directory": (_comparison_folder, "path", True),
    "ReplyCache": (_cache, "cache", False),
}
LIBRARY_WRITES = [
    pytest.param(write, parameter, kind, id=f"{name}, {kind}")
    for name, (write, parameter, writes_folders) in WRITERS.items()
    for kind in BAD_OUTPUTS
    if not (kind == "trailing slash" and writes_folders)
]


@pytest.mark.parametrize(("write", "parameter", "kind"), LIBRARY_WRITES)
def test_every_function_that_writes_refuses_where_it_cannot_write(
    writer_inputs: dict[str, Path],
    tmp_path: Path,
    write: Callable[[dict[str, Path], str], Any],
    parameter: str,
    kind: str,
) -> None:
    output = bad_output(kind, tmp_path / "out.csv")
    nodes = {path: node_kind(path) for path in (output, tmp_path / "out.csv.device") if os.path.lexists(path)}
    before = sorted([*tmp_path.rglob("*"), *writer_inputs["corpus"].parent.iterdir()])
    with not_blocked_by(output), pytest.raises(RunFileError) as refused:
        write(writer_inputs, output)
    assert str(refused.value).startswith(f"{output if kind == 'trailing slash' else Path(output)}: ")
    assert f"`{parameter}`" in str(refused.value)
    assert {path: node_kind(path) for path in nodes} == nodes
    assert sorted([*tmp_path.rglob("*"), *writer_inputs["corpus"].parent.iterdir()]) == before
