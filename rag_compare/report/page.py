"""The HTML report as an interactive page: the summary, aggregates and breakdowns rendered here, the case
list built in the browser by ``assets/page.js`` from the page's JSON data block (``page_data``).

One template and one script, two modes: the static page (``write_page``: the listed cases' details
embedded; filters, search and sort run in the browser; no network) and the served page (``served_page``,
for the review server: no case embedded, the script reads the JSON API and posts verdicts with the CSRF
token of ``<meta name="csrf-token">``). The script is inlined and allowed by the SHA-256 hash of its exact
text in the page's Content-Security-Policy, which allows no other script, so no inline event handler and no
injected script runs. The data block is JSON with ``<``, ``>``, ``&``, U+2028 and U+2029 escaped, so no text
can end it, and the script puts every value in the page as text, never as markup.
"""

from __future__ import annotations

import functools
import html
import io
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rag_compare.core.credentials import redactor
from rag_compare.core.digest import text_digest_base64
from rag_compare.core.result import DEFAULT_MAX_CASES, to_json
from rag_compare.report.documents import environment, listed_cases, report_context
from rag_compare.report.page_data import served_data, static_data

if TYPE_CHECKING:
    from markupsafe import Markup

    from rag_compare.compute.comparison import Comparison
    from rag_compare.compute.gate_result import GateResult

__all__ = [
    "DATA_ID",
    "content_security_policy",
    "data_block",
    "notebook_page",
    "page_script",
    "page_style",
    "script_hash",
    "served_page",
    "write_page",
]

ASSETS = Path(__file__).parent / "assets"
DATA_ID = "rag-compare-data"
"""The id of the ``<script type="application/json">`` element the page's data is in."""
_JSON_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


@functools.cache
def page_script() -> str:
    """The page's script, exactly as it is inlined (and hashed)."""
    return (ASSETS / "page.js").read_text(encoding="utf-8")


@functools.cache
def page_style() -> str:
    """The pages' own style sheet (beside the reports' shared ``style.css.j2``)."""
    return (ASSETS / "page.css").read_text(encoding="utf-8")


def script_hash(script: str) -> str:
    """``script``'s CSP source: ``'sha256-'`` and the base64 of the SHA-256 of its UTF-8 bytes."""
    return f"'sha256-{text_digest_base64(script)}'"


def content_security_policy(*, served: bool) -> str:
    """The page's policy: nothing loads but its own script (by hash), inline styles and ``data:`` images;
    the served page may also fetch from where it came from, the static one from nowhere."""
    connect = "'self'" if served else "'none'"
    return (
        f"default-src 'none'; script-src {script_hash(page_script())}; style-src 'unsafe-inline'; "
        f"img-src data:; connect-src {connect}; base-uri 'none'; form-action 'none'"
    )


def data_block(payload: Mapping[str, Any]) -> Markup:
    """``payload`` as the text of the page's JSON data element: credentials redacted, compact, and every
    character that could end the element or start markup written as a JSON escape."""
    from markupsafe import Markup

    return Markup(to_json(payload, compact=True).translate(_JSON_ESCAPES))


def write_page(
    comparison: Comparison,
    stream: TextIO,
    *,
    all_cases: bool = False,
    max_cases: int | None = DEFAULT_MAX_CASES,
    gate: GateResult | None = None,
) -> None:
    """Write the static page of ``comparison`` to ``stream``: up to ``max_cases`` cases per status embedded
    (``None``: all; unchanged ones with ``all_cases``), and the verdict of ``gate`` at the top."""
    context = report_context(comparison, all_cases=all_cases, max_cases=max_cases, gate=gate)
    statuses = [group["status"] for group in context["groups"]]
    listed = listed_cases(comparison, statuses, max_cases)
    _write(stream, context, static_data(comparison, listed, context["groups"]), served=False, csrf_token=None)


def served_page(
    comparison: Comparison,
    *,
    csrf_token: str,
    review: bool = True,
    token: str | None = None,
    reviewer: str | None = None,
    api: str = "/api",
) -> str:
    """The page the review server serves: no case embedded, the script reads ``api``; ``review``: with the
    verdict forms, the queue and progress; ``token``: sent by the script on every request as a bearer token;
    ``reviewer``: the name the verdict forms start with."""
    context = report_context(comparison, all_cases=True, max_cases=None, gate=None)
    data = served_data(comparison, context["groups"], api=api, review=review, token=token, reviewer=reviewer)
    buffer = io.StringIO()
    _write(buffer, context, data, served=True, csrf_token=csrf_token)
    return buffer.getvalue()


def notebook_page(comparison: Comparison) -> str:
    """The static page in a sandboxed frame (scripts allowed, nothing else), for a notebook's output cell."""
    buffer = io.StringIO()
    write_page(comparison, buffer)
    source = html.escape(buffer.getvalue(), quote=True)
    return (
        f'<iframe class="rag-compare" title="rag-compare: {html.escape(redactor()(_title(comparison)))}" '
        f'sandbox="allow-scripts" style="width: 100%; height: 80vh; border: 1px solid #d1d9e0;" '
        f'srcdoc="{source}"></iframe>'
    )


def _title(comparison: Comparison) -> str:
    return f"{comparison.baseline.name} → {comparison.candidate.name}"


def _write(
    stream: TextIO, context: dict[str, Any], data: Mapping[str, Any], *, served: bool, csrf_token: str | None
) -> None:
    from markupsafe import Markup

    page = {
        "csp": content_security_policy(served=served),
        "served": served,
        "csrf_token": csrf_token,
        "data_id": DATA_ID,
        "data": data_block(data),
        "script": Markup(page_script()),
        "style": Markup(page_style()),
    }
    template = environment("html").get_template("comparison.html.j2")
    for chunk in template.generate(c=context | {"page": page}, redact=redactor()):
        stream.write(chunk)
