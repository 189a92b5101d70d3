"""``resumebias demo``: a newcomer's first audit, on shipped sample data, ending with its report.

One real demo runs in a subprocess as a user starts it (``resumebias demo`` in an empty folder,
with a home folder of its own that must stay empty), through ``resumebias run --config``. Then:
the report exists with its sections and the planted finding (the sample screener's career-break
penalty, ``resumebias_dagster/demo/screener.py``) beyond noise, and the placebo and name edits
not; each analyze command the demo prints runs on its sample files and prints a verdict table;
every command of ``docs/first-run.md`` runs; and a folder that is not empty is refused.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from resumebias_dagster.testing.processes import resumebias_env

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "first-run.md"
CLI = [sys.executable, "-m", "resumebias_dagster.cli"]


def resumebias(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """A ``resumebias ...`` command line as a user types it."""
    words = shlex.split(command)
    assert words[0] == "resumebias", command
    return subprocess.run([*CLI, *words[1:]], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("first-run")
    home = cwd / "home"
    home.mkdir()
    # The caller's data folder is never the demo's: the demo keeps everything under its own folder.
    env = resumebias_env(cwd / "callers-data", HOME=str(home))
    proc = resumebias("resumebias demo", cwd, env)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:]
    return cwd, env, proc, home


def test_the_demo_ends_with_its_report_and_finds_the_planted_defect(demo):
    cwd, _, proc, home = demo
    out = cwd / "resumebias-demo"
    last = proc.stdout.strip().splitlines()[-1]
    report = out / "data" / "reports" / "audit_report.html"
    assert last == f"Report: {report}"
    html = report.read_text(encoding="utf-8")
    for section in ("Seniority study", "Job-description audit", "Your résumés", "How to reproduce"):
        assert f"<h2>{section}" in html, section
    # The screener's first screen leads with the planted penalty, in words (issue 43).
    start = html.index('<ul class="verdict-moved">')
    found = html[start : html.index("</ul>", start)]
    assert "caregiving gap in the career" in found and "unexplained two-year gap in the career" in found
    with duckdb.connect(str(out / "data" / "resumebias.duckdb"), read_only=True) as con:
        verdicts = con.execute("select finding, estimate, verdict from audit.fit_verdicts").df()
        files = {row[0] for row in con.execute("select file_type from audit.user_resumes").fetchall()}
    beyond = verdicts[verdicts["verdict"] == "beyond_noise"].set_index("finding")["estimate"]
    for level in ("caregiving", "unexplained"):
        assert beyond[f"fit_level:careerGap_{level}"] == pytest.approx(-1.5, abs=0.3)
    # The edits the screener does not single out are not beyond noise.
    assert not [f for f in beyond.index if "placebo" in f or "firstName" in f or f.startswith("fit_group")]
    assert files == {"pdf", "docx", "md", "txt"}
    assert "beyond noise: fit_level:careerGap_caregiving" in proc.stdout
    # Nothing in the home folder: caches, state and the Dagster instance are under the demo's folder.
    assert not list(home.iterdir())
    assert not (cwd / "callers-data").exists()


def test_each_printed_analyze_command_runs_on_the_sample_files(demo):
    cwd, env, proc, _ = demo
    commands = [line.strip() for line in proc.stdout.splitlines() if line.strip().startswith("resumebias analyze")]
    assert [c.split()[1] for c in commands] == ["analyze", "analyze-fit", "analyze-rank", "analyze-validity"]
    for command in commands:
        done = resumebias(command, cwd, env)
        assert done.returncode == 0, f"{command}:\n{done.stderr[-3000:]}"
        assert re.search(r"^VERDICTS", done.stdout, re.MULTILINE), command
        assert re.search(r"\b(beyond_noise|within_noise|inconclusive|equivalent)\b", done.stdout), command


def test_every_command_of_the_first_run_page_runs(demo):
    cwd, env, _, _ = demo
    blocks = re.findall(r"```bash\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)
    # A line ending in a backslash goes on on the next, as in a shell.
    joined = [re.sub(r"\\\n\s*", " ", block) for block in blocks]
    commands = [line.split("  #")[0].strip() for block in joined for line in block.splitlines() if line.strip()]
    assert commands[0] == "resumebias demo"  # what the fixture ran, as the page says it
    assert len(commands) > 1
    for command in commands[1:]:
        done = resumebias(command, cwd, env)
        assert done.returncode == 0, f"{command}:\n{done.stderr[-3000:]}"


def test_a_folder_that_is_not_empty_is_refused(demo):
    cwd, env, _, _ = demo
    out = cwd / "resumebias-demo"
    again = resumebias("resumebias demo", cwd, env)
    assert again.returncode == 2
    assert again.stderr.strip() == (
        f"error: --out (default) {out}: the folder is not empty; name a new or empty folder with --out DIR"
    )
    named = resumebias(f"resumebias demo --out {out / 'audit'}", cwd, env)
    assert named.returncode == 2
    assert named.stderr.strip() == (
        f"error: --out {out / 'audit'}: the folder is not empty; name a new or empty folder with --out DIR"
    )
    a_file = resumebias(f"resumebias demo --out {out / 'run.log'}", cwd, env)
    assert a_file.returncode == 2
    assert "it is a file, not a folder" in a_file.stderr and str(out / "run.log") in a_file.stderr
    assert not (out / "audit" / "audit").exists()
