"""The version of rag-compare (kept equal to pyproject.toml's by a test)."""

__version__ = "0.5.0"
