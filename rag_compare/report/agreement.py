"""An agreement report for a terminal: each judge against people, label by label, with how to read it.

Every measure is shown with its 95% interval; one that cannot be computed shows ``undefined`` and the
reason is listed below the table. The disagreements are listed up to ``SHOWN_DISAGREEMENTS`` per judge and
label (the JSON holds them all).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from rag_compare.compute.agreement_stats import Kappa
from rag_compare.core.listing import counted, counts_line
from rag_compare.report.text import text_table

if TYPE_CHECKING:
    from rag_compare.compute.agreement import Agreement, JudgeTest
    from rag_compare.compute.agreement_stats import Auc
    from rag_compare.compute.gate_result import GateResult
    from rag_compare.compute.label_agreement import LabelAgreement, Proportion

__all__ = [
    "HOW_TO_READ",
    "SHOWN_DISAGREEMENTS",
    "agreement_context",
    "agreement_text",
    "interval",
    "share",
    "write_agreement",
]

SHOWN_DISAGREEMENTS = 10
HOW_TO_READ = (
    "How to read it: kappa is agreement beyond what chance gives with these base rates (1 every call agrees, 0 no "
    "better than chance, below 0 worse); read it beside the base rate, as a judge that always says yes agrees "
    "often where people mostly say yes, with kappa 0. Sensitivity is the share of people's yes the judge also "
    "calls yes; specificity, of their no. Each [low, high] is a 95% interval: the values the data leave "
    "plausible. A wide one means too few labels to tell; label more cases before trusting the judge."
)
_HEADERS = ("judge", "label", "n", "base rate", "accuracy", "kappa", "sensitivity", "specificity", "AUC")


def agreement_text(result: Agreement) -> str:
    """The summary of an agreement: its sources, a row per judge and label, and the parts below (the cells the
    Markdown and HTML reports show, ``agreement_context``)."""
    shown = agreement_context(result, None)
    judges = [
        (str(index), judge["name"], judge["kind"], judge["path"] or "") for index, judge in enumerate(result.judges, 1)
    ]
    parts = [
        f"People's labels: {result.human['source']} ({result.human['kind']})",
        text_table(("", "judge", "kind", "path"), judges, title="Judges"),
        text_table(_HEADERS, shown["rows"], title="Agreement with people (95% intervals)"),
        *_optional_parts(result, shown),
        HOW_TO_READ,
    ]
    return "\n\n".join(parts) + "\n"


def _optional_parts(result: Agreement, shown: dict[str, Any]) -> list[str]:
    """What a report adds where it applies: reasons, weighted kappa, thresholds, tests, disagreements."""
    parts = []
    if shown["undefined"]:
        parts.append("Undefined:\n" + "\n".join(f"  {line}" for line in shown["undefined"]))
    if shown["not_comparable"]:
        skipped = [f"  {judge} {label}: {counts}" for judge, label, counts in shown["not_comparable"]]
        parts.append(
            "Not comparable (labels the judge has no call on, never counted as disagreement):\n" + "\n".join(skipped)
        )
    if shown["unmeasured"]:
        parts.append(text_table(("judge", "label", "not measured, because"), shown["unmeasured"], title="Not measured"))
    if shown["weighted"]:
        weighted = ("judge", "label", "linear", "quadratic")
        parts.append(text_table(weighted, shown["weighted"], title="Weighted kappa (ordinal labels)"))
    parts += [part for row in result.rows for part in (_target(row),) if part]
    if shown["tests"]:
        tests = ("label", "first", "second", "n", "only first right", "only second right", "p (exact McNemar)")
        parts.append(text_table(tests, shown["tests"], title="Judges compared on the same answers"))
    parts += [_disagreements(listed) for listed in shown["disagreements"]]
    return parts


def _row(row: LabelAgreement) -> tuple[str, ...]:
    signal = row.signal if row.threshold is None else f"{row.signal} >= {row.threshold:g}"
    return (
        row.judge,
        f"{row.label} ({signal})",
        f"{row.n:,}",
        share(row.base_rate),
        _proportion(row.accuracy),
        _kappa(row.kappa),
        _proportion(row.sensitivity),
        _proportion(row.specificity),
        _auc(row.auc),
    )


def agreement_line(row: LabelAgreement) -> str:
    """A judge's figures on a label in one line: ``n 27, base rate 0.852, accuracy 1.000 [0.872, 1.000], ...``."""
    cells = _row(row)
    return ", ".join(f"{header} {cell}" for header, cell in zip(_HEADERS[2:], cells[2:], strict=True))


def share(value: float | None) -> str:
    """A share in [0, 1] to 3 decimals; ``-`` when there is none."""
    return "-" if value is None else f"{value:.3f}"


def interval(value: float | None, low: float | None, high: float | None) -> str:
    """``value [low, high]`` to 3 decimals, ``undefined`` without a value."""
    if value is None:
        return "undefined"
    if low is None or high is None:
        return f"{value:.3f} (no interval)"
    return f"{value:.3f} [{low:.3f}, {high:.3f}]"


def _kappa(kappa: Kappa) -> str:
    return interval(kappa.value, kappa.low, kappa.high)


def _auc(auc: Auc | None) -> str:
    return "-" if auc is None else interval(auc.value, auc.low, auc.high)


def _proportion(proportion: Proportion | None) -> str:
    if proportion is None:
        return "-"
    return interval(proportion.value, proportion.low, proportion.high)


def _undefined(rows: Sequence[LabelAgreement]) -> list[str]:
    """Why each undefined measure, or interval, is so."""
    lines = []
    for row in rows:
        measured: list[tuple[str, Kappa | Auc | None]] = [("kappa", row.kappa), ("AUC", row.auc)]
        measured += [(f"{name} kappa", kappa) for name, kappa in row.weighted_kappa.items()]
        for name, item in measured:
            if item is not None and item.undefined:
                lines.append(f"{row.judge} {row.label} {name}: {item.undefined}")
            elif isinstance(item, Kappa) and item.interval_undefined:
                lines.append(f"{row.judge} {row.label} {name} interval: {item.interval_undefined}")
        for name, proportion in (("sensitivity", row.sensitivity), ("specificity", row.specificity)):
            if proportion is not None and proportion.value is None:
                lines.append(
                    f"{row.judge} {row.label} {name}: people gave no {'yes' if name == 'sensitivity' else 'no'}"
                )
    return lines


def _target(row: LabelAgreement, *, named: bool = True) -> str:
    """The threshold found for the target asked, ``named`` by its judge and label where no heading names them."""
    if row.target is None:
        return ""
    target, found = row.target, row.target.found
    asked = f"the threshold of {row.signal} for {target.measure} >= {target.at_least:g}"
    asked = f"{row.judge} {row.label}: {asked}" if named else asked[0].upper() + asked[1:]
    if found is None:
        return f"{asked}: none reaches it."
    return (
        f"{asked}: {found.threshold:g} (precision {share(found.precision)}, recall {share(found.recall)}, "
        f"{share(found.flagged)} of answers below it)."
    )


def _disagreements(listed: dict[str, Any]) -> str:
    """The first disagreements of a judge on a label (``_disagreement_rows``), and how many more there are."""
    more = listed["count"] - len(listed["rows"])
    title = f"{listed['judge']} and people disagree on {listed['label']}: {counted(listed['count'], 'answer')}"
    table = text_table(("case", "side", "people", "judge", "comment", "review page"), listed["rows"], title=title)
    return table + (f"\n... and {more:,} more (the JSON lists every one)" if more > 0 else "")


def _judged(item: dict[str, Any]) -> str:
    value = item["judge_value"]
    if isinstance(value, float):
        return f"{item['judge']} ({value:.3g})"
    return str(item["judge"])


def write_agreement(result: Agreement, stream: TextIO, format: str, *, gate: GateResult | None = None) -> None:
    """Write ``result`` as a ``markdown`` report or an ``html`` page, the verdict of ``gate`` first."""
    from rag_compare.core.credentials import redactor
    from rag_compare.report.documents import environment

    template = environment(format).get_template(f"agreement.{'md' if format == 'markdown' else 'html'}.j2")
    for chunk in template.generate(c=agreement_context(result, gate), redact=redactor()):
        stream.write(chunk)


def agreement_context(result: Agreement, gate: GateResult | None) -> dict[str, Any]:
    """What the Markdown and HTML templates show, every number written out as the text summary writes it."""
    from rag_compare._version import __version__
    from rag_compare.report.summaries import condition_outcome, gate_verdict

    shown_gate = None
    if gate is not None:
        conditions = [(item.condition, condition_outcome(item), item.numbers) for item in gate.conditions]
        shown_gate = {"verdict": gate_verdict(gate), "conditions": conditions}
    return {
        "version": __version__,
        "human": dict(result.human),
        "judges": [dict(judge) for judge in result.judges],
        "judge_rows": [
            (judge["name"], judge["kind"], judge["fingerprint"][:12], judge["path"] or "") for judge in result.judges
        ],
        "gate": shown_gate,
        "headers": _HEADERS,
        "rows": [_row(row) for row in result.rows],
        "undefined": _undefined(result.rows),
        "not_comparable": [
            (row.judge, row.label, counts_line(dict(row.not_comparable), ", "))
            for row in result.rows
            if row.not_comparable
        ],
        "unmeasured": [(item.judge, item.label, item.reason) for item in result.unmeasured],
        "confusions": [_confusion(row) for row in result.rows],
        "weighted": [
            (row.judge, row.label, *(_kappa(row.weighted_kappa[name]) for name in ("linear", "quadratic")))
            for row in result.rows
            if row.weighted_kappa
        ],
        "thresholds": [_thresholds(row) for row in result.rows if row.thresholds],
        "breakdowns": [_breakdown(row) for row in result.rows if row.breakdowns],
        "tests": [_test_cells(test) for test in result.tests],
        "disagreements": [_disagreement_rows(row) for row in result.rows if row.disagreements.height],
        "how_to_read": HOW_TO_READ,
    }


def _confusion(row: LabelAgreement) -> dict[str, Any]:
    return {"judge": row.judge, "label": row.label, "classes": row.classes, "rows": row.confusion}


def _thresholds(row: LabelAgreement) -> dict[str, Any]:
    cells = [
        (f"{item['thresholds']:g}", share(item["precision"]), share(item["recall"]), share(item["flagged"]))
        for item in row.thresholds
    ]
    return {
        "judge": row.judge,
        "label": row.label,
        "signal": row.signal,
        "rows": cells,
        "target": _target(row, named=False),
    }


def _breakdown(row: LabelAgreement) -> dict[str, Any]:
    cells = [
        (
            name,
            group.value or "(none)",
            f"{group.n:,}",
            _proportion(group.accuracy),
            _kappa(group.kappa),
            _proportion(group.sensitivity),
            _proportion(group.specificity),
        )
        for name, groups in row.breakdowns.items()
        for group in groups
    ]
    return {"judge": row.judge, "label": row.label, "rows": cells}


def _test_cells(test: JudgeTest) -> tuple[str, ...]:
    p = "-" if test.p is None else f"{test.p:.3g}"
    return (
        test.label,
        test.first,
        test.second,
        f"{test.n:,}",
        f"{test.first_only_right:,}",
        f"{test.second_only_right:,}",
        p,
    )


def _disagreement_rows(row: LabelAgreement) -> dict[str, Any]:
    frame = row.disagreements
    cells = [
        (item["case_id"], item["side"] or "", item["human"], _judged(item), item["comment"] or "", item["anchor"])
        for item in row.listed(SHOWN_DISAGREEMENTS).iter_rows(named=True)
    ]
    return {"judge": row.judge, "label": row.label, "count": frame.height, "rows": cells}
