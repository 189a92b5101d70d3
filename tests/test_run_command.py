"""`resumebias run` as a newcomer runs it: a fresh data directory, every job of the study, and
at the end the path of the report, a file that exists and holds the study's results.

The study is made small by the catalog folder alone (what a user can do too): one provider
model answering from 127.0.0.1, two job descriptions and a fit design probing one résumé
against both; every asset of the default graph runs (the style validation loads the real
MiniLM encoder)."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import yaml

from resumebias_dagster.catalog import PACKAGED_DIR
from resumebias_dagster.testing.fake_providers import FakeProviderServer

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
KEY_ENV = "RESUMEBIAS_TEST_PROVIDER_KEY"
JDS = ("junior-java-developer", "staff-software-engineer")


def _answer(request) -> str:
    """A screener that reads every résumé as mid-level and scores every fit 6."""
    if "Job description:" in request.prompt:
        return json.dumps(
            {
                "score": 6,
                "recommend": "yes",
                "justification": "Relevant experience.",
                "strengths": ["a", "b", "c"],
                "concerns": ["x", "y", "z"],
            }
        )
    return "mid"


def test_resumebias_run_on_a_fresh_data_dir_ends_with_the_reports_path(tmp_path):
    catalog = tmp_path / "catalog"
    (catalog / "job_descriptions").mkdir(parents=True)
    for jd in JDS:
        shutil.copyfile(PACKAGED_DIR / "job_descriptions" / f"{jd}.md", catalog / "job_descriptions" / f"{jd}.md")
    # Its own job descriptions need its own design (the packaged one names its job descriptions).
    (catalog / "fit_design.yaml").write_text(
        "resumes: {occupation: software_engineer, levels: [mid], per_level: 1}\njob_descriptions: all\n"
    )
    data = tmp_path / "data"
    with FakeProviderServer("openai", answer=_answer) as server:
        entry = {
            "name": "fake-screener",
            "kind": "provider",
            "provider": "openai",
            "model": "fake/screener",
            "base_url": server.base_url,
            "api_key_env": KEY_ENV,
            "temperature": 0.7,
            "runs_per_cell": 2,
            "max_concurrency": 8,
            "timeout_s": 10.0,
            "max_retries": 1,
        }
        (catalog / "models.yaml").write_text(yaml.safe_dump({"models": [entry]}))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RESUMEBIAS_", "DAGSTER_"))}
        env.update(
            {
                "RESUMEBIAS_DATA_DIR": str(data),
                "RESUMEBIAS_CATALOG_DIR": str(catalog),
                KEY_ENV: "sk-test",
                # the converted encoder weights the other tests use, not a second copy
                "RESUMEBIAS_MODEL_CACHE": os.environ.get("RESUMEBIAS_MODEL_CACHE", str(REPO / "data" / "test-cache")),
                "HF_HUB_OFFLINE": "1",
            }
        )
        proc = subprocess.run(
            [sys.executable, "-m", "resumebias_dagster.cli", "run"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        calls = server.stats.requests
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    assert calls > 0
    # Not a terminal: plain lines (no live bar), the models config it used first.
    assert f"models config: {catalog / 'models.yaml'}" in proc.stdout
    # No library progress bar either: each of its redraws is a carriage return (issue 26, item 8).
    assert "\r" not in output
    # A line for each step as it ends (step, partition, seconds), inside its run's lines.
    runs = proc.stdout.split("\n\nSECONDS PER ASSET")[0]
    steps = re.findall(r"^  (\w+)(?: \[(\S+)\])?: succeeded in \d+\.\d s$", runs, re.MULTILINE)
    assert ("seniority_predictions", "fake-screener") in steps and ("style_validation", "") in steps
    assert {("fit_scores", f"{jd}|fake-screener") for jd in JDS} <= set(steps)
    jd = JDS[0]
    # A line when each step starts too (issue 41: a log was silent for 23 minutes during a step).
    # validity_scores (issue 42) runs in the same job: its lines (and any heartbeat) may come
    # before, between or after fit_scores' lines.
    validity = r"(?:  (?!fit_scores ).*\n)*"
    assert re.search(
        rf"^fit_scores_job \[{jd}\|fake-screener\]: started\n{validity}  fit_scores \[{jd}\|fake-screener\]: started\n"
        rf"{validity}  fit_scores \[{jd}\|fake-screener\]: succeeded in \S+ s\n{validity}"
        rf"fit_scores_job \[{jd}\|fake-screener\]: succeeded in ",
        runs,
        re.MULTILINE,
    )
    assert ("validity_scores", f"{jd}|fake-screener") in steps
    assert "Telemetry" not in output  # the instance it creates sends no usage statistics
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    ends = [line for line in lines[-3:] if line.startswith("Report: ")]
    assert ends, f"no report path at the end:\n{proc.stdout[-2000:]}"
    report = Path(re.match(r"Report: (\S+)", ends[0]).group(1))
    assert report == data / "reports" / "audit_report.html" and report.is_file()
    html = report.read_text(encoding="utf-8")
    assert "fake-screener" in html and '<script src="http' not in html
    with duckdb.connect(str(data / "resumebias.duckdb"), read_only=True) as con:
        n_jds = con.execute("select count(distinct jd) from audit.fit_scores").fetchone()[0]
        models = con.execute("select distinct model from audit.seniority_predictions").fetchall()
    assert n_jds == len(JDS) and models == [("fake-screener",)]
