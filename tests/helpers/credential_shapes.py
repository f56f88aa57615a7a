"""Made-up credentials in the shapes providers issue them (none is a real key), texts that only look close, and
files whose paths hold them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

# Made-up credentials in the shapes providers issue them (none is a real key).
OPENAI_KEY = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
KEY_SHAPES = {
    "openai": "sk-Zx81Lq0pWm4Rt7Ys2Vb5Nc9Kd3Hf6Jg1Aa2Bb3Cc4Dd5Ee6",
    "openai-project": OPENAI_KEY,
    "huggingface": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    "github": "ghp_0123456789abcdefghijABCDEFGHIJklmnop",
    "slack": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "bearer": "Bearer eyJhbGciOiJIUzI1NiJ9.e30.ZRrHA1JJJW8opsbCGfG_HACGpVUMN_a9IV7pAx_Zmeo",
    "authorization": "Authorization: Basic dXNlcjpwYXNzd29yZA==",
    "private-key": "-----BEGIN RSA PRIVATE KEY-----",
}
ORDINARY_TEXTS = [
    "sk-learn",
    "we use sk-learn-compatible-estimators-everywhere here",
    "task-abcdefghijklmnopqrstuvwxyz0123456789",
    "hf_hub_download",
    "ghp_",
    "xoxb-",
    "AKIAIOSFODNN7EXAMPL",
    "MAKIAIOSFODNN7EXAMPLE0",
    "the bearer of news abcdefghijk",
    "Bearer instruments and bearer bonds are paper",
    "Authorization: required for everything",
    "sk-abcdefghijklmnopqrstuvwxyz-without-digits",
    "authorization is required",
    "a key of 150 euros",
]


def secret_parts(secret: str) -> list[str]:
    """Every run of 10 characters of ``secret`` past the 3 a redaction keeps, but runs of words (``horization``),
    as each output would write it (as is, escaped for Markdown, for HTML or XML, in JSON): none may appear in an
    output, whole or cut short."""
    import html

    from rag_compare.report.documents import markdown_escape

    forms = {secret, markdown_escape(secret), html.escape(secret), json.dumps(secret)[1:-1]}
    parts = {form[start : start + 10] for form in forms for start in range(3, max(4, len(form) - 9))}
    return sorted(part for part in parts if not all(char.isalpha() or char == " " for char in part))


def named_with(secret: str, folder: Path, suffix: str) -> Path:
    """A path in ``folder`` whose file name holds ``secret`` (and ends in ``suffix``)."""
    return folder / f"x-{secret}{suffix}"


def copied_as(source: Path, secret: str) -> Path:
    """A copy of the file ``source``, beside it, whose name holds ``secret``."""
    path = named_with(secret, source.parent, source.suffix)
    shutil.copyfile(source, path)
    return path


def legacy_run(source: Path, secret: str, output: Path | None = None) -> Path:
    """A copy of the run file ``source`` as an older rag-compare would have frozen it (past today's checks),
    at ``output`` (default: beside it, named with ``secret``): its name, its records', corpus' and knowledge
    base's paths hold ``secret``."""
    from rag_compare.io.runfile import freeze_frame
    from rag_compare.io.runs import CONFIG_KEY, FORMAT_KEY, FORMAT_VERSION, json_ready, load_run

    run = load_run(source)
    config = json_ready(run.config) | {
        "name": f"{run.name}-{secret}",
        "knowledge_base": f"kb-{secret}.csv",
        "records": {"path": f"records/{secret}/records.jsonl"},
        "corpus": {**run.config["corpus"], "path": f"corpus-{secret}.csv"},
    }
    output = output or named_with(secret, source.parent, f"-{run.name}.arrow")
    freeze_frame(run.records, {FORMAT_KEY: FORMAT_VERSION, CONFIG_KEY: json.dumps(config)}, output)
    return output
