"""Load OpenInference traces into Phoenix and save Phoenix's own spans dataframe, as its users do.

Run with Phoenix's Python: ``make_phoenix.py OUTPUT_DIR TRACES.jsonl``, where TRACES.jsonl holds OTLP export
requests in protobuf's JSON mapping (``make_openinference.py``'s ``traces_base64.jsonl``). It starts Phoenix
offline (a temporary working directory, free ports), sends each request to its OTLP endpoint as protobuf,
as an exporter does, reads the spans back with ``phoenix.client`` and writes into OUTPUT_DIR:

- ``spans.parquet``: ``df.to_parquet(path)`` (the span id stays the frame's index, as Phoenix returns it);
- ``spans.jsonl``: ``df.to_json(path, orient="records", lines=True)`` (pandas' defaults: times as epoch
  milliseconds; the index is left out, and ``context.span_id`` is a column too);
- ``spans_iso.jsonl``: the same with ``date_format="iso", date_unit="us"`` (times as ISO 8601 text).
"""

from __future__ import annotations

import os
import socket
import sys
import time
import urllib.request
from pathlib import Path

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

WAIT_SECONDS = 60


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def requests(traces: Path) -> list[ExportTraceServiceRequest]:
    return [
        json_format.Parse(line, ExportTraceServiceRequest())
        for line in traces.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def send(url: str, request: ExportTraceServiceRequest) -> None:
    """POST ``request`` to Phoenix's OTLP/HTTP endpoint as protobuf bytes."""
    post = urllib.request.Request(
        url, data=request.SerializeToString(), headers={"Content-Type": "application/x-protobuf"}, method="POST"
    )
    with urllib.request.urlopen(post, timeout=30) as response:
        response.read()


def main(output: Path, traces: Path) -> None:
    os.environ.update(
        PHOENIX_WORKING_DIR=str(output / "phoenix"),
        PHOENIX_PORT=str(free_port()),
        PHOENIX_GRPC_PORT=str(free_port()),
        PHOENIX_TELEMETRY_ENABLED="false",
        PHOENIX_ALLOW_EXTERNAL_RESOURCES="false",  # no download at start-up (the WASM sandbox, web fonts)
        PHOENIX_ALLOWED_SANDBOX_PROVIDERS="NONE",
    )
    import phoenix as px
    from phoenix.client import Client

    session = px.launch_app(use_temp_dir=True)
    batches = requests(traces)
    for batch in batches:
        send(session.url.rstrip("/") + "/v1/traces", batch)
    total = sum(
        len(scope.spans) for batch in batches for resource in batch.resource_spans for scope in resource.scope_spans
    )
    client = Client(base_url=session.url)
    deadline = time.monotonic() + WAIT_SECONDS
    while True:  # Phoenix ingests asynchronously: wait until it holds every span sent
        frame = client.spans.get_spans_dataframe(project_identifier="default", limit=total + 1)
        if len(frame) >= total or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    if len(frame) != total:
        raise SystemExit(f"Phoenix holds {len(frame)} spans of the {total} sent")
    frame.to_parquet(output / "spans.parquet")
    frame.to_json(output / "spans.jsonl", orient="records", lines=True)
    frame.to_json(output / "spans_iso.jsonl", orient="records", lines=True, date_format="iso", date_unit="us")
    px.close_app()


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
