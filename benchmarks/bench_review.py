"""The review server at scale: a page of cases, filters, a search, a sort, a case and a verdict, over HTTP.

    python benchmarks/bench_review.py [--cases 1000000] [--k 10] [--repeats 5] [--workdir DIR] [--seed 0]

The data of ``bench_compare.py`` (generated once into the work folder, reused after). The comparison is
computed once in this process, then the server starts on loopback in a thread (``ReviewServer``: the case index,
the queue and the page made) and each request is sent ``--repeats`` times by a client in this process (urllib, a
connection a request); the medians are printed. Targets (issue 35): the first page under 1 s once the comparison
is computed, a filter change under 0.3 s.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

from bench_compare import MIB, SIDES, data_options, prepare
from harness import each, yes

from rag_compare import compare
from rag_compare.serve.server import ReviewServer

TARGET_FIRST_PAGE, TARGET_FILTER = 1.0, 0.3
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
REQUESTS = {
    "first page": "/api/cases",
    "filter: regressed": "/api/cases?status=regressed",
    "filter: 2 statuses, category": "/api/cases?status=regressed&status=failed_in_candidate&category=rule",
    "filter: moved down": "/api/cases?moved=context_coverage:down",
    "search": "/api/cases?q=topic%20123",
    "sort by a delta": "/api/cases?sort=delta:recall:asc",
    "last page of 500": "/api/cases?sort=case_id&page_size=500&page={last}",
    "next to review": "/api/queue/next",
    "progress": "/api/progress",
    "a case": "/api/cases/{case}",
}


def timed(request: urllib.request.Request) -> tuple[float, bytes]:
    """Seconds from sending ``request`` to its whole body, and the body; stops on any status but 2xx."""
    start = time.perf_counter()
    with _OPENER.open(request, timeout=600) as response:
        body = response.read()
    return time.perf_counter() - start, body


def main() -> None:
    options, workdir = data_options(__doc__.splitlines()[0])
    data = prepare(workdir, options.cases, options.k, options.seed)
    print(f"cases              {options.cases:,} at k={options.k} (data in {workdir}, {data})")
    start = time.perf_counter()
    comparison = compare(*(workdir / f"{side}.arrow" for side in SIDES))
    print(f"compare            {time.perf_counter() - start:.1f} s (once, before the server)")
    with tempfile.TemporaryDirectory() as temporary:
        start = time.perf_counter()
        server = ReviewServer.bind(comparison, Path(temporary) / "reviews.sqlite", reviewer="bench")
        server.start()
        print(f"server ready       {time.perf_counter() - start:.1f} s (index, queue and page made)")
        try:
            middle = comparison.cases["case_id"][options.cases // 2]
            measure(server.url.rstrip("/"), middle, options.cases, options.repeats)
        finally:
            server.stop()


def measure(url: str, case_id: str, cases: int, repeats: int) -> None:
    """Time each of ``REQUESTS`` and a verdict ``repeats`` times on the server at ``url`` of ``cases`` cases."""
    seconds, page = timed(urllib.request.Request(f"{url}/"))
    print(f"the page           {len(page) / MIB:.2f} MiB, {seconds:.2f} s")
    medians = {}
    for name, route in REQUESTS.items():
        path = route.format(last=max(1, -(-cases // 500)), case=quote(case_id, safe=""))
        times = [timed(urllib.request.Request(f"{url}{path}"))[0] for _ in range(repeats)]
        medians[name] = statistics.median(times)
        print(f"{name:<30} {medians[name]:.3f} s (median of {each(times, 3)})")
    csrf = page.decode().split('name="csrf-token" content="')[1].split('"')[0]
    body = {"reviewer": "bench", "side": "candidate", "agree": True, "labels": {}, "comment": ""}
    posted = [
        timed(
            urllib.request.Request(
                f"{url}/api/cases/{quote(case_id, safe='')}/verdicts",
                data=json.dumps(body).encode(),
                headers={"Origin": url, "X-CSRF-Token": csrf, "Content-Type": "application/json"},
                method="POST",
            )
        )[0]
        for _ in range(repeats)
    ]
    print(f"{'a verdict':<30} {statistics.median(posted):.3f} s (median of {each(posted, 3)})")
    filters = [value for name, value in medians.items() if name.startswith(("filter", "search", "sort"))]
    print(f"targets            first page < {TARGET_FIRST_PAGE} s: {yes(medians['first page'] < TARGET_FIRST_PAGE)}; "
          f"a filter change < {TARGET_FILTER} s: {yes(max(filters) < TARGET_FILTER)}")  # fmt: skip


if __name__ == "__main__":
    main()
