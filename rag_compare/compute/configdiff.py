"""What differs between two run configs, and the warnings that deserve a reviewer's attention."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rag_compare.core.contract import STORED_SIGNALS
from rag_compare.io.config import BOOKKEEPING_KEYS, flatten
from rag_compare.io.recorded_paths import is_path_key, same_file

__all__ = ["ConfigChange", "config_diff", "config_warnings", "setting_changes"]

EVALUATOR_KEY = "evaluator"

ConfigChange = dict[str, Any]
"""``{"key": dotted key, "baseline": value or None, "candidate": value or None}``."""


def config_diff(
    baseline: Mapping[str, Any],
    candidate: Mapping[str, Any],
    run_files: tuple[Path | None, Path | None] = (None, None),
) -> list[ConfigChange]:
    """Every dotted config key whose value differs (absent on one side counts as ``None``), by key; not
    those of the stored signals' settings, which follow from ``top_k`` and the library version. Keys that
    hold a path (``recorded_paths.is_path_key``) differ when their paths name different files (a relative
    one recorded in the config of the run at ``run_files``: see ``recorded_paths``)."""
    flat_baseline, flat_candidate = (
        flatten({key: value for key, value in config.items() if key != STORED_SIGNALS})
        for config in (baseline, candidate)
    )
    keys = sorted(flat_baseline.keys() | flat_candidate.keys())
    return [
        {"key": key, "baseline": flat_baseline.get(key), "candidate": flat_candidate.get(key)}
        for key in keys
        if not _same(key, flat_baseline.get(key), flat_candidate.get(key), run_files)
    ]


def setting_changes(diff: Sequence[ConfigChange], ignored: Sequence[str] = BOOKKEEPING_KEYS) -> list[ConfigChange]:
    """The changes of ``diff`` but those of the keys ``ignored`` (and of everything under them)."""
    return [change for change in diff if not _under(change["key"], ignored)]


def config_warnings(diff: Sequence[ConfigChange], *, corpus: bool = False) -> list[str]:
    """Warnings about a diff: several settings changed at once, different evaluators, different corpora (not
    when the comparison judges both runs by one ``corpus``: then the corpus' labels are the ones compared).

    Keys that record the same change (same last part, same two values, e.g. ``top_k`` and
    ``retriever.top_k`` both 3 -> 5) count as one setting.
    """
    warnings = []
    settings = setting_changes(diff, (*BOOKKEEPING_KEYS, EVALUATOR_KEY))
    distinct = {
        (change["key"].rsplit(".", 1)[-1], repr(change["baseline"]), repr(change["candidate"])) for change in settings
    }
    if len(distinct) > 1:
        keys = ", ".join(change["key"] for change in settings)
        warnings.append(
            f"{len(distinct)} settings differ ({keys}): the comparison cannot tell which of them caused a change. "
            "Change one setting at a time."
        )
    evaluator = [change["key"] for change in diff if _under(change["key"], (EVALUATOR_KEY,))]
    if evaluator:
        warnings.append(
            f"the runs were scored with different evaluator settings ({', '.join(evaluator)}): "
            "scores can move even where answers did not."
        )
    corpora = {change["key"]: change for change in diff}.get("corpus.fingerprint")
    if corpora is not None and not corpus:
        warnings.append(
            "the runs were frozen against different corpora (fingerprints "
            f"{_short_fingerprint(corpora['baseline'])} and {_short_fingerprint(corpora['candidate'])}): "
            "pass `corpus` to judge both runs against the same labels."
        )
    return warnings


def _same(key: str, baseline: object, candidate: object, run_files: tuple[Path | None, Path | None]) -> bool:
    if is_path_key(key) and isinstance(baseline, str) and isinstance(candidate, str):
        return same_file(baseline, candidate, run_files)
    return baseline == candidate


def _under(key: str, prefixes: Sequence[str]) -> bool:
    return any(key == prefix or key.startswith(f"{prefix}.") for prefix in prefixes)


def _short_fingerprint(fingerprint: object) -> str:
    """Its first 12 characters, or ``none``."""
    return "none" if fingerprint is None else str(fingerprint)[:12]
