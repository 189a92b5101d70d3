"""What the repository keeps out: the résumés a user copies into the worked example's folder
(docs/howto/own-tool.md tells them to) are never committed (issue 39)."""

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="not a git checkout")
def test_resumes_copied_into_the_worked_example_are_ignored_but_its_placeholder_is_not():
    def ignored(path: str) -> bool:
        return subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO).returncode == 0

    assert ignored("examples/own_tool/resumes/jane_doe_cv.pdf")
    assert ignored("examples/own_tool/resumes/labels.csv")
    assert not ignored("examples/own_tool/resumes/.gitkeep")
