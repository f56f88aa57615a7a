"""Digests: every kind of fingerprint, cache key and content id keeps the value it had (files on disk and
cached replies are found by them), and each goes through the one digest module."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
from pathlib import Path

import polars as pl

from rag_compare.core.digest import bytes_digest, content_fingerprint, json_digest, text_digest, text_digest_base64
from rag_compare.io.runs import load_run
from rag_compare.llm import judge_checks
from rag_compare.llm.cache import request_key
from rag_compare.llm.drafts import draft_id

BODY = {"model": "m", "messages": [{"role": "user", "content": "héllo"}], "temperature": 0}


def test_settings_digests_and_cache_keys_keep_their_values() -> None:
    settings = {"name": "lexical", "b": [1, 2.5, None], "a": "é"}
    assert json_digest(settings) == "84290d1b405e3f0ed856511f2798460623875792e4f8a994721958d637258472"
    assert json_digest(dict(reversed(settings.items()))) == json_digest(settings)
    key = request_key("http://127.0.0.1:9/v1", BODY)
    assert key == "9442711475202cd4fea48e70f4a34c65402648646d59d533c121766972cf5a5d"
    assert key == json_digest({"endpoint": "http://127.0.0.1:9/v1", "body": BODY})  # one canonical JSON


def test_content_ids_and_fingerprints_keep_their_values() -> None:
    assert draft_id("p1", "What is the rule?", "v2") == "draft-a1a52dea6d@v2"
    frame = pl.DataFrame({"id": ["b", "a"], "x": [1, None]})
    assert content_fingerprint(frame, "id") == "17dcd5718975d6adce208002719d9bfb1e6f741323aadeb3a5bc3433f1b38876"
    # a run file is verified against its fingerprint when loaded: it loads only if the file digest is unchanged
    run = load_run("tests/fixtures/handmade/baseline.arrow")
    assert run.fingerprint == "5f080d2f03f7896a85f6e90cb4448480c77cd9a26a44cfb3d231ec804079e23d"


def test_the_prompt_digest_is_names_and_bytes_of_every_template() -> None:
    expected = hashlib.sha256()
    for path in sorted(judge_checks._PROMPTS.glob("*.j2")):
        expected.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    assert judge_checks.prompt_digest() == expected.hexdigest()


def test_bytes_in_pieces_hash_as_their_whole() -> None:
    data = b"abcdefgh"
    assert bytes_digest(data[:3], memoryview(data)[3:]) == bytes_digest(data) == text_digest("abcdefgh")
    assert text_digest("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_a_base64_digest_is_the_one_a_content_security_policy_names() -> None:
    # `printf '' | openssl dgst -sha256 -binary | base64`, the CSP specification's own recipe
    assert text_digest_base64("") == "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
    assert base64.b64decode(text_digest_base64("é")).hex() == text_digest("é")


def test_no_module_but_the_digest_module_hashes() -> None:
    package = Path(__file__).resolve().parents[2] / "rag_compare"
    hashing = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if "hashlib" in path.read_text(encoding="utf-8") and path.name != "digest.py"
    ]
    assert hashing == []


def test_case_hash_is_the_sha256_prefix_of_the_id_and_the_same_in_every_process() -> None:
    from rag_compare.core.digest import case_hash

    ids = pl.Series(["q1@v1", "Köln-1", None])
    # the first 16 hex digits of `printf 'q1@v1' | sha256sum` and `printf 'Köln-1' | sha256sum` (UTF-8)
    expected = [0x068FECEAF1E4F83E, 0x02B835D393BCD41A, None]
    hashed = case_hash(ids)
    assert hashed.dtype == pl.UInt64
    assert hashed.name == "case_hash"
    assert hashed.to_list() == expected
    script = (
        "import polars as pl; from rag_compare.core.digest import case_hash as h; print(h(pl.Series(['q1@v1'])).item())"
    )
    other = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert int(other.stdout) == expected[0]
