"""The temporaries in use: a process that ends at once removes those registered then, and nothing else."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ENDED = """\
import sys
from rag_compare.core.temporaries import end_process, register_temporary, registered
file, folder, released = sys.argv[1:]
with registered(released):
    pass
register_temporary(file)
register_temporary(folder)
end_process(143)
"""


def test_a_process_ended_at_once_removes_the_files_and_folders_registered_then(tmp_path: Path) -> None:
    file, folder, released = tmp_path / ".r.html.x.partial", tmp_path / "spill", tmp_path / "renamed.html"
    kept = tmp_path / "kept.txt"
    for path in (file, released, kept):
        path.write_text("text")
    (folder / "inner").mkdir(parents=True)
    (folder / "inner" / "piece.arrow").write_bytes(b"x")
    ended = subprocess.run([sys.executable, "-c", ENDED, file, folder, released], check=False, timeout=60)
    assert ended.returncode == 143
    assert sorted(tmp_path.iterdir()) == [kept, released]
