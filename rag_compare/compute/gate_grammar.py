"""The conditions of a release gate as written (``regressed>2%``, ``all_cases.recall:worse``), parsed.

This module loads no heavy dependency at import, so the command line can show ``GATE_GRAMMAR`` in its
help; the statuses and signals a condition may name are looked up when one is parsed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag_compare.core.errors import GateError

__all__ = [
    "AGREEMENT_MEASURES",
    "GATE_GRAMMAR",
    "MEASURES",
    "OPERATORS",
    "AgreementLimit",
    "Condition",
    "ErrorRateLimit",
    "SignalLimit",
    "StatusLimit",
    "parse_condition",
    "split_conditions",
]

GATE_GRAMMAR = """\
A gate condition is one of:
  STATUS                         at least one case has it: regressed, failed_in_candidate
  STATUS OP N, STATUS OP X%      a count, or a share of all compared cases: regressed>=3, regressed>2.5%
  STATUS[stage=STAGE] [OP N|X%]  only its cases that changed at STAGE: regressed[stage=answer]>0
  [SCOPE.]SIGNAL:worse           its 95% CI lies on the worse side of 0 and its Holm p < alpha: recall:worse
  [SCOPE.]SIGNAL:MEASURE OP X    MEASURE delta, candidate or baseline: grounded:delta<-0.02
  error_rate OP X%               the share of cases whose candidate failed, was judge-failed or is missing
  MEASURE[LABEL] OP X            a judge's agreement with people (rag-compare agreement): kappa[grounded]<0.6
OP is >, >=, < or <=; SCOPE is paired (the default) or all_cases; N is a whole number. STAGE is answer,
context, retrieval_coverage or retrieval_rank (of improved, regressed, mixed or unstable). MEASURE is kappa,
linear_kappa, quadratic_kappa, accuracy, sensitivity, specificity or auc; LABEL answer_correct, grounded,
abstention_correct, retrieval_ok or preferred."""
"""The grammar, in a few lines: every message about a bad condition ends with it."""

OPERATORS = (">=", "<=", ">", "<")
MEASURES = ("worse", "delta", "candidate", "baseline")
"""What a signal condition looks at in its scope's aggregate row (``worse``: the CI and the Holm p)."""
_SCOPES = ("paired", "all_cases")
ERROR_RATE = "error_rate"
_FORM = re.compile(
    r"^\s*(?:(?P<scope>\w+)\s*\.\s*)?(?P<name>\w+)\s*(?::\s*(?P<measure>\w+)\s*)?"
    r"(?:(?P<op>>=|<=|>|<)\s*(?P<number>[^\s%]*)\s*(?P<percent>%)?\s*)?$"
)
_STAGED_FORM = re.compile(
    r"^\s*(?P<name>\w+)\s*\[\s*stage\s*=\s*(?P<stage>\w+)\s*\]\s*"
    r"(?:(?P<op>>=|<=|>|<)\s*(?P<number>[^\s%]*)\s*(?P<percent>%)?\s*)?$"
)
_AGREEMENT_FORM = re.compile(
    r"^\s*(?P<measure>\w+)\s*\[\s*(?P<label>\w+)\s*\]\s*(?:(?P<op>>=|<=|>|<)\s*(?P<number>\S*)\s*)?$"
)
AGREEMENT_MEASURES = ("kappa", "linear_kappa", "quadratic_kappa", "accuracy", "sensitivity", "specificity", "auc")
"""What an agreement condition looks at in a judge's row for a label (``LabelAgreement.measure``)."""
_WHOLE = re.compile(r"^\d+$")
_DECIMAL = re.compile(r"^-?(?:\d+(?:\.\d*)?|\.\d+)$")
_SHARE = re.compile(r"^(?:\d+(?:\.\d*)?|\.\d+)$")


@dataclass(frozen=True)
class StatusLimit:
    """``STATUS`` (more than 0 cases), ``STATUS OP N`` or ``STATUS OP X%`` (a share of all compared cases);
    with ``stage``, only the status' cases that changed at that stage are counted."""

    text: str
    status: str
    op: str
    limit: float
    share: bool
    stage: str | None = None


@dataclass(frozen=True)
class SignalLimit:
    """``[SCOPE.]SIGNAL:worse`` (``op`` and ``limit`` unused) or ``[SCOPE.]SIGNAL:MEASURE OP X``."""

    text: str
    scope: str
    signal: str
    measure: str
    op: str
    limit: float


@dataclass(frozen=True)
class ErrorRateLimit:
    """``error_rate OP X%``: the share of all compared cases whose candidate failed, was judge-failed or is missing."""

    text: str
    op: str
    limit: float


@dataclass(frozen=True)
class AgreementLimit:
    """``MEASURE[LABEL] OP X``: a judge's agreement with people on ``label``; held when any judge's is."""

    text: str
    measure: str
    label: str
    op: str
    limit: float


Condition = StatusLimit | SignalLimit | ErrorRateLimit | AgreementLimit


def split_conditions(values: str) -> list[str]:
    """The conditions of ``values``, separated by commas. An empty one (``''``, ``' , '``, ``'regressed,'``:
    a variable left unset, say) is a ``GateError``: it would check nothing, so the gate would pass."""
    parts = [part.strip() for part in values.split(",")]
    if all(parts):
        return parts
    what = "an empty condition between commas" if any(parts) else "no condition"
    raise GateError(
        f"gate conditions {values!r}: {what}. An empty condition checks nothing, so the gate would pass whatever "
        "happened; write each condition, e.g. 'regressed,recall:worse' (is a variable in it unset?)."
    )


def _refuse(text: str, what: str) -> GateError:
    return GateError(f"gate condition {text!r}: {what}.\n{GATE_GRAMMAR}")


def parse_condition(text: str) -> Condition:
    """One condition, as ``GATE_GRAMMAR`` describes; a ``GateError`` names what is wrong with it."""
    from rag_compare.compute.case_status import CASE_STATUSES
    from rag_compare.core.signals import SIGNALS_BY_NAME

    agreement = _AGREEMENT_FORM.match(text)
    if agreement is not None:
        return _agreement_limit(text, *agreement.group("measure", "label", "op", "number"))
    staged = _STAGED_FORM.match(text)
    if staged is not None:
        return _staged_limit(text, staged)
    form = _FORM.match(text)
    if form is None:
        raise _refuse(text, "not a condition this grammar reads")
    scope, name, measure, op = form.group("scope", "name", "measure", "op")
    number, percent = form.group("number") or "", bool(form.group("percent"))
    if measure is not None or scope is not None:
        if name not in SIGNALS_BY_NAME:
            raise _refuse(text, f"unknown signal {name}; use any of: {', '.join(SIGNALS_BY_NAME)}")
        return _signal_limit(text, scope or "paired", name, measure, op, number, percent)
    if name == ERROR_RATE:
        if op is None or not percent:
            raise _refuse(text, "error_rate is a share of all compared cases: give a limit in %, e.g. error_rate>5%")
        return ErrorRateLimit(text.strip(), op, _share(text, number))
    if name in SIGNALS_BY_NAME:
        raise _refuse(text, f"a signal needs a measure: {name}:worse, or {name}:delta, :candidate or :baseline OP X")
    if name not in CASE_STATUSES:
        raise _refuse(
            text,
            f"unknown status {name}; use any of: {', '.join(CASE_STATUSES)} (a signal takes a measure: recall:worse)",
        )
    return _status_limit(text, name, op, number, percent)


def _status_limit(
    text: str, status: str, op: str | None, number: str, percent: bool, stage: str | None = None
) -> StatusLimit:
    if op is None:
        return StatusLimit(text.strip(), status, ">", 0, share=False, stage=stage)
    if percent:
        return StatusLimit(text.strip(), status, op, _share(text, number), share=True, stage=stage)
    if not _WHOLE.match(number):
        raise _refuse(text, f"a count is a whole number of 0 or more, not {number!r} (a share ends with %)")
    return StatusLimit(text.strip(), status, op, int(number), share=False, stage=stage)


def _staged_limit(text: str, form: re.Match[str]) -> StatusLimit:
    """``STATUS[stage=STAGE]``, with its limit when it has one."""
    from rag_compare.compute.case_status import STAGED_STATUSES
    from rag_compare.core.signals import STAGES

    status, stage, op = form.group("name", "stage", "op")
    if status not in STAGED_STATUSES:
        raise _refuse(text, f"only a status of {', '.join(STAGED_STATUSES)} takes a stage, not {status}")
    stages = [name for name in STAGES if name != "failure"]
    if stage not in stages:
        raise _refuse(text, f"unknown stage {stage}; use one of: {', '.join(stages)}")
    return _status_limit(text, status, op, form.group("number") or "", bool(form.group("percent")), stage)


def _signal_limit(
    text: str, scope: str, signal: str, measure: str | None, op: str | None, number: str, percent: bool
) -> SignalLimit:
    if scope not in _SCOPES:
        raise _refuse(text, f"unknown scope {scope}; use paired (the default) or all_cases")
    if measure not in MEASURES:
        shown = "no measure" if measure is None else f"unknown measure {measure}"
        raise _refuse(text, f"{shown}; use one of: {', '.join(MEASURES)}")
    if measure == "worse":
        if op is not None:
            raise _refuse(text, f"{signal}:worse takes no limit (its significance level is `alpha`)")
        return SignalLimit(text.strip(), scope, signal, measure, ">", 0.0)
    if op is None:
        raise _refuse(text, f"{signal}:{measure} needs a limit, e.g. {signal}:{measure}<0.9")
    if percent or not _DECIMAL.match(number):
        raise _refuse(
            text, f"the limit of {signal}:{measure} is a plain number such as -0.02, not {number + '%' * percent!r}"
        )
    return SignalLimit(text.strip(), scope, signal, measure, op, float(number))


def _agreement_limit(text: str, measure: str, label: str, op: str | None, number: str | None) -> AgreementLimit:
    from rag_compare.io.verdicts import LABELS

    labels = (*LABELS, "preferred")
    if measure not in AGREEMENT_MEASURES:
        raise _refuse(text, f"unknown agreement measure {measure}; use one of: {', '.join(AGREEMENT_MEASURES)}")
    if label not in labels:
        raise _refuse(text, f"unknown label {label}; use one of: {', '.join(labels)}")
    if op is None or number is None:
        raise _refuse(text, f"{measure}[{label}] needs a limit, e.g. {measure}[{label}]<0.6")
    if not _DECIMAL.match(number):
        raise _refuse(text, f"the limit of {measure}[{label}] is a plain number such as 0.6, not {number!r}")
    return AgreementLimit(text.strip(), measure, label, op, float(number))


def _share(text: str, number: str) -> float:
    if not _SHARE.match(number) or float(number) > 100:
        raise _refuse(text, f"a share is a number from 0 to 100 followed by %, not {number + '%'!r}")
    return float(number)
