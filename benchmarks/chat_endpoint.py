"""An OpenAI-compatible chat-completions endpoint on loopback that answers every request after a fixed latency.

    python benchmarks/chat_endpoint.py --latency 0.1

Prints its base URL, then serves until terminated. A request whose ``json_schema`` response format is
named after one of the LLM judge's checks is answered with JSON matching that check's schema; any other
request with the text ``ok`` (a captured answer). Every POST is taken for a chat completion. It stands
in for a model and nothing more: no faults, no streaming.
"""

from __future__ import annotations

import argparse
import json
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_RATED = {"explanation": "ok", "rating": 5}
CHECK_REPLIES: dict[str, dict[str, Any]] = {
    "context_sufficiency": {"explanation": "ok", "verdict": "sufficient"},
    "correctness": {"explanation": "ok", "verdict": "correct"},
    "groundedness": {"explanation": "ok", "claims": [{"claim": "ok", "verdict": "supported", "evidence": "ok"}]},
    "helpfulness": _RATED,
    "query_ease": _RATED,
    "response": _RATED,
}
"""A reply that passes each check's schema (``rag_compare.llm.judge_checks``), by the check's name."""


def content_for(request: dict[str, Any]) -> str:
    """The assistant's content: the reply of the check the request's response format names, else ``ok``."""
    name = (request.get("response_format") or {}).get("json_schema", {}).get("name")
    return json.dumps(CHECK_REPLIES[name]) if name in CHECK_REPLIES else "ok"


class Handler(BaseHTTPRequestHandler):
    """Waits ``latency`` seconds, then answers the chat completion; keeps the connection open."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    latency = 0.0

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        time.sleep(self.latency)
        message = {"role": "assistant", "content": content_for(request)}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        reply = {"id": "bench", "object": "chat.completion", "created": 0, "model": request["model"]}
        body = json.dumps(reply | {"choices": [choice]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: the benchmarks print their own figures."""


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    """Room for every connection a benchmark opens at once (``--concurrency``)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.0, help="seconds to wait before each reply")
    Handler.latency = parser.parse_args().latency
    with Server(("127.0.0.1", 0), Handler) as server:
        print(f"http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
        server.serve_forever()


if __name__ == "__main__":
    main()
