"""The README's screenshot script still takes a picture of the review page."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

from tests.helpers.browser import require_chromium
from tests.helpers.data import ROOT


def test_the_screenshot_script_saves_the_review_page_as_a_png(tmp_path: Path) -> None:
    require_chromium()
    output = tmp_path / "review.png"
    script = ROOT / "scripts" / "review_screenshot.py"
    result = subprocess.run(
        [sys.executable, str(script), "--output", str(output)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"wrote {output}\n"
    header = output.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", header[16:24])
    assert width == 1280
    assert height > 1000  # the filters and the case opened below them
