"""Where an output may be written: the one check every file or folder a command writes goes through.

An output replaces nothing but what it is documented to: a path that exists is refused, unless it is a
regular file that the output replaces whole (a comparison's report, drafts admitted in place) or updates
in place (the reply cache, a capture's checkpoint, a step summary). A folder, a symbolic link, a FIFO, a
socket or a device is never written through or replaced; the path is looked at (``lstat``), never opened.
A path ending in ``/`` names a folder. The parent folder of every output must exist: an output never
creates folders.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Literal

from rag_compare.core.errors import RunExistsError, RunFileError
from rag_compare.core.input_paths import describe_kind

__all__ = ["Existing", "check_output", "names_folder", "unwritable"]

Existing = Literal["refused", "replaced", "updated"]
"""What an output does with a regular file already at its path: refuses it, replaces it whole (through a
temporary file and a rename), or updates it in place (a link to a regular file is followed then)."""
_ARROW_MAGIC = b"ARROW1"
"""The bytes an Arrow IPC file starts with."""


def names_folder(output: str | Path) -> bool:
    """Whether ``output``, as written, names a folder: it ends with ``/`` (a ``Path`` drops that, a ``str``
    keeps it), or its last part is ``.`` or ``..``."""
    return os.path.basename(os.fspath(output)) in {"", ".", ".."}


def check_output(
    output: str | Path,
    what: str,
    *,
    folder: bool = False,
    existing: Existing = "refused",
    parameter: str = "output",
) -> Path:
    """``output`` as a ``Path``, once it is known that the ``what`` (a file, or a ``folder``) may be written
    there: raises ``RunFileError`` (``RunExistsError`` for a file or folder already there) naming
    ``parameter``, and opens nothing.

    Refused: a file output named as a folder (``names_folder``); anything at the path but a regular file
    that ``existing`` allows (a folder output: anything at all); a path whose parent is not an existing
    folder this process may write in.
    """
    if not folder and names_folder(output):
        raise RunFileError(
            f"{output}: names a folder, but the {what} is a file. Give `{parameter}` a file name "
            "(without a trailing /)."
        )
    path = Path(output)
    try:
        found: os.stat_result | None = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        found = None
    except OSError as error:
        raise unwritable(path, error) from None
    if found is None:
        _check_parent(path, parameter)
    else:
        _check_existing(path, found.st_mode, what, folder, existing, parameter)
    return path


def _check_existing(path: Path, mode: int, what: str, folder: bool, existing: Existing, parameter: str) -> None:
    """Refuse what is at ``path`` (``mode``, not followed) unless ``existing`` allows a regular file there."""
    linked = stat.S_ISLNK(mode) and existing == "updated"
    if linked:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            raise RunFileError(
                f"{path}: is a symbolic link to nothing. Remove the link, or give `{parameter}` another path."
            ) from None
    if stat.S_ISLNK(mode):
        raise RunFileError(
            f"{path}: is a symbolic link, which an output never replaces nor writes through. "
            f"Give `{parameter}` the path of the file itself, or a new path."
        )
    if stat.S_ISREG(mode) and not folder and existing != "refused":
        if existing == "replaced" and _is_arrow_file(path):
            raise RunExistsError(
                f"{path}: holds an Arrow file (a frozen run or scores file), which is never replaced. "
                f"Give `{parameter}` the path of a new file."
            )
        return
    if stat.S_ISDIR(mode) and not folder:
        raise RunExistsError(f"{path}: is a folder. Give `{parameter}` the path of a new file for the {what}.")
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        raise RunExistsError(
            f"{path}: already exists and is never overwritten by the {what}. Give `{parameter}` a new path, "
            "or move the file away first."
        )
    kind = ("a symbolic link to " if linked else "") + describe_kind(mode)
    raise RunFileError(
        f"{path}: is {kind}, which the {what} is never written to. Give `{parameter}` the path of a new file."
    )


def _check_parent(path: Path, parameter: str) -> None:
    """Refuse ``path`` when its parent is not an existing folder that this process may write in."""
    parent = path.parent
    try:
        is_folder = stat.S_ISDIR(os.stat(parent).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        raise RunFileError(
            f"{path}: cannot be written: the folder {parent} does not exist. Create it first, "
            f"or give `{parameter}` a path in an existing folder."
        ) from None
    except OSError as error:
        raise unwritable(path, error) from None
    if not is_folder:
        raise RunFileError(
            f"{path}: cannot be written: {parent} is not a folder. Give `{parameter}` a path in an existing folder."
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise unwritable(path, PermissionError(errno.EACCES, os.strerror(errno.EACCES)))


def _is_arrow_file(path: Path) -> bool:
    """Whether the regular file at ``path`` starts as an Arrow IPC file does (opened so that it could not
    block, were it swapped for a FIFO since it was looked at)."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        return os.read(handle, len(_ARROW_MAGIC)) == _ARROW_MAGIC
    except OSError:
        return False
    finally:
        os.close(handle)


def unwritable(path: Path, error: OSError) -> RunFileError:
    """The error of an output that cannot be written, naming ``path`` (never a temporary file) and why."""
    reason = error.strerror or (os.strerror(error.errno) if error.errno else str(error))
    hint = (
        "Free some space on that disk, or write somewhere else."
        if error.errno in {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
        else "Check the folder and its permissions."
    )
    return RunFileError(f"{path}: cannot be written ({reason}). {hint}")
