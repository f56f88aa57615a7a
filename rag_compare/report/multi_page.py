"""Several candidates as one self-contained HTML page: the verdict, the runs, each candidate's statuses, the
leaderboards and deltas rendered here, and the status matrix of the changed cases built in the browser by
``assets/multi.js`` from the page's JSON data block, with the filters of the review page: a status in a chosen
candidate (or in any) and a search of the case ids.

As the comparison's page (``page``): the script is inlined and allowed by the SHA-256 hash of its text in the
Content-Security-Policy, which allows no other script and no network; the data block escapes every character
that could end it, and the script puts every value in the page as text.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import polars as pl

from rag_compare.compute.case_status import CASE_STATUSES
from rag_compare.core.credentials import redactor
from rag_compare.report.charts import tone_of
from rag_compare.report.documents import environment
from rag_compare.report.multi import multi_context
from rag_compare.report.page import DATA_ID, data_block, page_style, script_hash

if TYPE_CHECKING:
    from rag_compare.compute.gate_result import GateResult
    from rag_compare.compute.multi_comparison import MultiComparison

__all__ = ["matrix_data", "multi_page_policy", "multi_script", "write_multi_page"]

_ASSETS = Path(__file__).parent / "assets"


@functools.cache
def multi_script() -> str:
    """The matrix's script, exactly as it is inlined (and hashed)."""
    return (_ASSETS / "multi.js").read_text(encoding="utf-8")


def multi_page_policy() -> str:
    """The page's policy: its own script (by hash), inline styles, nothing fetched."""
    return (
        f"default-src 'none'; script-src {script_hash(multi_script())}; style-src 'unsafe-inline'; "
        "img-src data:; connect-src 'none'; base-uri 'none'; form-action 'none'"
    )


def matrix_data(multi: MultiComparison, max_cases: int | None) -> dict[str, Any]:
    """What the script is given: the candidates' ``names``, the ``statuses`` and their ``tones``, and ``rows``,
    each ``[case_id, [status index per candidate, -1 where its comparison has no such case]]``, of the first
    ``max_cases`` changed cases (``None``: all), of ``total``."""
    changed = multi.changed_cases()
    listed = changed if max_cases is None else changed.head(max_cases)
    indexes = listed.select(
        "case_id",
        pl.concat_list(
            pl.col(name).replace_strict(
                list(CASE_STATUSES), range(len(CASE_STATUSES)), default=-1, return_dtype=pl.Int64
            )
            for name in multi.names
        ).alias("statuses"),
    )
    return {
        "names": list(multi.names),
        "statuses": list(CASE_STATUSES),
        "tones": [tone_of(status) for status in CASE_STATUSES],
        "rows": [[case_id, statuses] for case_id, statuses in indexes.iter_rows()],
        "total": changed.height,
    }


def write_multi_page(
    multi: MultiComparison, stream: TextIO, *, max_cases: int | None, gates: Mapping[str, GateResult] | None = None
) -> None:
    """Write the page of ``multi`` (up to ``max_cases`` changed cases in its matrix; ``None``: all) with each
    candidate's gate verdict (``gates``, by name) first."""
    from markupsafe import Markup

    page = {
        "csp": multi_page_policy(),
        "data_id": DATA_ID,
        "data": data_block(matrix_data(multi, max_cases)),
        "script": Markup(multi_script()),
        "style": Markup(page_style()),
    }
    context = multi_context(multi, max_cases=max_cases, gates=gates) | {"page": page}
    for chunk in environment("html").get_template("multi.html.j2").generate(c=context, redact=redactor()):
        stream.write(chunk)
