"""The demo's screener and folder checks, without running the demo (``tests/test_demo.py`` runs it)."""

from __future__ import annotations

import pytest

from resumebias_dagster.demo.command import out_problem
from resumebias_dagster.demo.screener import GAP_PENALTY, fit_score, seniority, years_of_experience


def test_the_planted_defect_takes_its_points_off_a_career_break_only():
    resume = "Avery Blake\nData Analyst, Initech (2019-2024)\n"
    with_break = resume + "Career break: full-time caregiver for a family member (2017-2019)\n"
    assert fit_score(0.65, resume) - fit_score(0.65, with_break) == GAP_PENALTY == 1.5
    assert fit_score(0.65, resume.replace("Initech", "Globex")) == fit_score(0.65, resume)
    # Half points, within 1-10 whatever the similarity.
    assert fit_score(0.6123, resume) * 2 == int(fit_score(0.6123, resume) * 2)
    assert fit_score(-1.0, with_break) == 1.0 and fit_score(2.0, resume) == 10.0


def test_seniority_reads_the_years_however_the_phrase_is_worded():
    for text in ("Analyst with 12 years of experience", "12+ years of proven, hands-on experience in SQL"):
        assert years_of_experience(text) == 12
    assert years_of_experience("Analyst\nInitech 2019 - Present") == 2025 - 2019
    for years in (0, 2, 5, 12):
        p = seniority(f"{years} years of experience")
        assert sum(p.values()) == pytest.approx(1.0, abs=1e-9) and min(p.values()) >= 0
    assert max(seniority("1 years of experience"), key=seniority("1 years of experience").get) == "junior"
    assert max(seniority("15 years of experience"), key=seniority("15 years of experience").get) == "senior"


def test_a_folder_with_something_in_it_or_a_file_is_refused(tmp_path):
    assert out_problem(tmp_path / "new", "--out") is None
    assert out_problem(tmp_path, "--out") is None  # empty
    (tmp_path / "notes.txt").write_text("mine")
    assert out_problem(tmp_path, "--out") == (
        f"--out {tmp_path}: the folder is not empty; name a new or empty folder with --out DIR"
    )
    assert out_problem(tmp_path / "notes.txt", "--out") == (
        f"--out {tmp_path / 'notes.txt'}: it is a file, not a folder; name a new or empty folder with --out DIR"
    )
