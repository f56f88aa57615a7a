"""Finding credentials in the cells of a frame (records, scores, pairs, corpus labels) before a file is written."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from rag_compare.core.credentials import CREDENTIAL_PATTERN, SHAPED_CREDENTIAL, credential_in, credential_values, redact
from rag_compare.core.errors import RagCompareError, show_value

if TYPE_CHECKING:
    import polars as pl

__all__ = ["credential_cells", "refuse_credentials"]


def credential_cells(
    frame: pl.DataFrame, secrets: Mapping[str, str], row_column: str | None = None
) -> list[tuple[int | None, str, str]]:
    """``(row, column, what)`` for every cell of ``frame`` holding a credential (see ``credential_in``).

    Text, list and struct columns are searched, nested values as their JSON text; ``row`` is the value
    of ``row_column``, else the position from 1. A column whose name holds a credential is one entry
    with row None, its name redacted.
    """
    import polars as pl

    rows = pl.col(row_column) if row_column is not None else pl.int_range(1, pl.len() + 1)
    cells: list[tuple[int | None, str, str]] = [
        (None, redact(column, secrets), what)
        for column in frame.columns
        if (what := credential_in(column, secrets)) is not None
    ]
    texts = {
        column: text
        for column, dtype in frame.schema.items()
        if column != row_column and (text := _as_text(column, dtype)) is not None
    }
    if not texts:
        return cells
    found = frame.select(rows.alias("row"), *(_finding(text, secrets).alias(column) for column, text in texts.items()))
    hits = found.unpivot(index="row", variable_name="column", value_name="what").drop_nulls("what")
    return cells + [(int(row), column, what) for row, column, what in hits.iter_rows()]


def refuse_credentials(frame: pl.DataFrame, described: str, file: str, error: type[RagCompareError]) -> None:
    """Raise ``error`` listing, case by case, the cells of ``frame`` (``described``, about to be written
    to a ``file``) that hold a credential (see ``credentials``; also the values of credential-like
    variables of ``os.environ``)."""
    cells = credential_cells(frame, credential_values(os.environ))
    if not cells:
        return
    ids = frame.get_column("case_id")
    cases = ["" if row is None else f"case {show_value(ids[row - 1])}, " for row, _, _ in cells[:10]]
    listed = "".join(
        f"  - {case}column '{column}': {what}\n" for case, (_, column, what) in zip(cases, cells, strict=False)
    )
    raise error(
        f"{described} hold credentials, which are never written to a {file}:\n{listed}"
        "Remove them from what the evaluator returns (an explanation quoting a key, an error echoing it)."
    )


def _as_text(column: str, dtype: pl.DataType) -> pl.Expr | None:
    """``column`` as text to search: itself, a category's label, a nested value's JSON; None for numbers."""
    import polars as pl

    if dtype == pl.String:
        return pl.col(column)
    if isinstance(dtype, pl.Categorical | pl.Enum):
        return pl.col(column).cast(pl.String)
    if dtype.is_nested():
        return pl.struct(pl.col(column).alias("v")).struct.json_encode()
    return None


def _finding(text: pl.Expr, secrets: Mapping[str, str]) -> pl.Expr:
    """What credential ``text`` holds, as ``credential_in`` says it (a variable's value is also found
    escaped as in JSON), else null."""
    import polars as pl

    finding: pl.Expr = pl.when(text.str.contains(CREDENTIAL_PATTERN)).then(pl.lit(SHAPED_CREDENTIAL))
    for name, secret in sorted(secrets.items(), reverse=True):
        escaped = json.dumps(secret, ensure_ascii=False)[1:-1]
        holds = text.str.contains(secret, literal=True) | text.str.contains(escaped, literal=True)
        finding = pl.when(holds).then(pl.lit(f"the value of {name}")).otherwise(finding)
    return finding
