"""A screener that only scores fit (answer paths ``score`` and ``recommend``, no seniority
label; the docs allow it) audited with ``resumebias run --config``: the run writes its report,
prints the summary of the tables it has and the ``Report:`` line, and exits 0 (issue 39: the
terminal summary asked for ``seniority_predictions``, which such a run never writes, raised
``CatalogException`` and exited 1 after the report was written)."""

import shutil
from pathlib import Path

import pytest
import yaml

from resumebias_dagster.testing.fake_providers import FakeProviderServer
from resumebias_dagster.testing.processes import resumebias_env, run_audit_file
from resumebias_dagster.testing.resume_corpus import corpus

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
KEY_ENV = "ACME_SCORER_KEY"


def test_a_fit_only_http_screener_ends_with_the_report_line(tmp_path):
    example = tmp_path / "tool"
    shutil.copytree(REPO / "examples" / "own_tool" / "catalog", example / "catalog")
    resumes = example / "resumes"
    resumes.mkdir()
    # Six résumés in text and Markdown layouts people use (testing/resume_corpus.py), not the generator's.
    layouts = ["comma_title_txt", "markdown_pipes", "dates_first_txt", "markdown_no_city", "no_education_txt"]
    written = corpus(per_layout=1, layouts=[*layouts, "comma_title_txt"])
    for r in written:
        (resumes / r.file).write_bytes(r.data)
    (resumes / "cv_99_empty.txt").write_text("", encoding="utf-8")  # not read, and the run says why
    audit = {
        "models_file": "models.yaml",
        "catalog_dir": "catalog",
        "assets": {"user_resumes": {"folder": "resumes"}, "probe_variants": {"resumes": "user"}},
    }
    (example / "audit.yaml").write_text(yaml.safe_dump(audit), encoding="utf-8")
    data = tmp_path / "data"
    with FakeProviderServer("scorer") as server:
        entry = {
            "name": "fit-only",
            "kind": "http",
            "url": server.base_url,
            "body": '{"resume": {{ resume | tojson }}, "job_description": {{ job_description | tojson }}}',
            "api_key_env": KEY_ENV,
            "answer": {"score": "$.result.score", "recommend": "$.result.decision"},
        }
        (example / "models.yaml").write_text(yaml.safe_dump({"models": [entry]}), encoding="utf-8")
        proc = run_audit_file(example / "audit.yaml", tmp_path, resumebias_env(data, **{KEY_ENV: "test-key"}))
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-6000:]
    assert f"Report: {data / 'reports' / 'audit_report.html'}" in proc.stdout
    assert "JOB-DESCRIPTION AUDIT" in proc.stdout
    assert "CatalogException" not in output
    # After reading the folder, a line per file: its name found and the axes that apply, or why not read.
    assert "YOUR RÉSUMÉS" in proc.stdout
    lines = {line.split()[0]: line for line in proc.stdout.splitlines() if line.startswith("cv_")}
    assert set(lines) == {r.file for r in written} | {"cv_99_empty.txt"}
    assert "not read:" in lines["cv_99_empty.txt"]
    assert all(" apply" in lines[r.file] for r in written)
