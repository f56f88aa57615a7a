"""The installed version of rag-compare."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("rag-compare")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"
