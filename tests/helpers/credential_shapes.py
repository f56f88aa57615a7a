"""Made-up credentials in the shapes providers issue them (none is a real key), and texts that only look close."""

from __future__ import annotations

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
