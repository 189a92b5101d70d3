"""The worked example of "Audit your own tool" (README, docs/howto/own-tool.md), run end to end
as its tests run it: ``examples/own_tool`` copied to a folder, twelve résumés written there in
layouts people use (testing/resume_corpus.py) with an encrypted PDF that cannot be read, the HTTP
screener served on 127.0.0.1, and ``resumebias run --config`` on the example's audit file."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

from resumebias_dagster.testing.fake_providers import FakeProviderServer
from resumebias_dagster.testing.processes import resumebias_env, run_audit_file
from resumebias_dagster.testing.resume_corpus import corpus, write_corpus
from resumebias_dagster.testing.resume_files import encrypted_pdf_bytes, write

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "own_tool"
KEY_VARIABLE = "ACME_SCORER_KEY"  # the variable examples/own_tool/models.yaml names
KEY = "acme-test-key-0123456789"
# Twelve résumés in layouts people use, none the generator's: two columns and one column in PDF,
# tables and dates on their own line in DOCX, Markdown headings and bold, "Title, Employer —
# City (2019–2022)", dates first, a "Name:" line and a Contact section.
LAYOUTS = [
    "pdf_two_columns",
    "pdf_title_at",
    "pdf_two_columns",
    "docx_tables",
    "docx_dates_own_line",
    "markdown_pipes",
    "comma_title_txt",
    "dates_first_txt",
    "contact_section_txt",
    "markdown_pipes",
    "comma_title_txt",
    "dates_first_txt",
]


@dataclass(frozen=True)
class WorkedExample:
    proc: subprocess.CompletedProcess
    example: Path  # the copied examples/own_tool
    data: Path  # the run's data directory
    written: list[dict]  # per résumé: file, name, e-mail
    calls: int  # requests the HTTP screener answered
    keys: set  # the API keys it was sent

    @property
    def output(self) -> str:
        return self.proc.stdout + self.proc.stderr

    @property
    def report(self) -> Path:
        return self.data / "reports" / "audit_report.html"


def write_resumes(folder: Path) -> list[dict]:
    """Twelve résumés in the corpus' layouts: three PDFs, two DOCX files, and seven text and Markdown
    files, with labels.csv. Each has a city on its contact lines and dated positions, so the
    planted defects (a career break, an address abroad) can be written into every one."""
    resumes = corpus(per_layout=1, layouts=LAYOUTS)
    write_corpus(folder, resumes)
    # A file that cannot be read is listed with its reason; the others go on.
    write(folder / "cv_99_locked.pdf", encrypted_pdf_bytes(resumes[6].data.decode()))
    return [{"file": r.file, "name": r.person.name, "email": r.person.email} for r in resumes]


def run_worked_example(folder: Path) -> WorkedExample:
    """The worked example run in ``folder`` (its copy of the example and its data directory)."""
    example = folder / "own_tool"
    shutil.copytree(EXAMPLE, example)
    written = write_resumes(example / "resumes")
    data = folder / "data"
    with FakeProviderServer("scorer") as server:
        models = yaml.safe_load((example / "models.yaml").read_text())
        models["models"][0]["url"] = server.base_url
        (example / "models.yaml").write_text(yaml.safe_dump(models, sort_keys=False))
        pythonpath = os.pathsep.join([str(example), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env = resumebias_env(data, **{KEY_VARIABLE: KEY, "PYTHONPATH": pythonpath})
        proc = run_audit_file(example / "audit.yaml", folder, env)
        calls = server.stats.requests
        keys = {r.api_key for r in server.requests}
    return WorkedExample(proc, example, data, written, calls, keys)
