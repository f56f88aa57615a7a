"""The review server's optional extra, ``rag-compare[review]`` (Starlette and uvicorn): checked before the
rest of this floor, which imports them, is imported."""

from __future__ import annotations

from rag_compare.core.errors import ReviewError

__all__ = ["INSTALL_HINT", "require_review_extra"]

INSTALL_HINT = "pip install 'rag-compare[review]'"


def require_review_extra() -> None:
    """Raise ``ReviewError`` saying how to install the extra when Starlette or uvicorn cannot be imported."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as error:
        raise ReviewError(
            f"the review server needs Starlette and uvicorn, and {error.name or 'one'} is not installed: {INSTALL_HINT}"
        ) from None
