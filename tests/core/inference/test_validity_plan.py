"""``resumebias plan`` for validity (issue 42): criterion validity better than chance and a
group's gap in it, planned through the power code the verdicts print (``finish``'s ``power``
column), from a validity pilot (the analyze-validity CSV, or its ``--json``), and checked by
simulation: at the planned résumés the verdict is reached in about 80% of studies
(``benchmarks/bench_inference_calibration.py --only validity`` prints the figure on 400)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from resumebias_dagster.cli import main
from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.inference.planning import pilot_structure, planned_power
from resumebias_dagster.core.jd_audit.validity_stats import validity_verdicts
from resumebias_dagster.testing.validity_plan_check import _criterion_study, _gap_study, validity_plan_check
from resumebias_dagster.testing.validity_simulation import GROUPS


@pytest.fixture(autouse=True)
def _quiet():
    warnings.simplefilter("ignore")


def _row(verdicts, finding):
    return verdicts.set_index("finding").loc[finding]


@pytest.mark.parametrize(
    ("study", "finding", "kind"),
    [
        (_criterion_study, "validity:criterion", "criterion_validity"),
        (_gap_study, "validity:group_gap:black_female", "validity_gap"),
    ],
)
def test_the_plans_power_is_the_power_the_verdict_prints(study, finding, kind):
    settings = load_inference_settings()
    effect = settings.detect[kind]
    verdicts = validity_verdicts(*study(5, 40, effect), settings, reference=GROUPS[0])
    row = _row(verdicts, finding)
    excess = effect - 0.5 if kind == "criterion_validity" else effect
    sd = row["se"] * np.sqrt(row["n_resumes"])
    structure = pilot_structure(verdicts, kind)
    assert structure.sizes == ((1,) if kind == "criterion_validity" else (1, 2, 1, 1))
    mine = planned_power(excess, sd, int(row["n_resumes"]), settings, structure=structure)
    assert mine == pytest.approx(row["power"], abs=1e-9)


def test_at_the_planned_resumes_criterion_validity_is_told_from_chance_in_about_80_percent():
    check = validity_plan_check("criterion_validity", 40, load_inference_settings(), seed=7)
    # 8 comparisons a résumé right with chance 0.75: SD about 0.15, so few résumés suffice.
    assert check["resumes"] == 5 and 0.13 < check["sd"] < 0.17
    assert 0.6 <= check["simulated_power"] <= 0.97  # seeded: the same figure on every run


def test_at_the_planned_resumes_a_groups_gap_is_found_in_about_80_percent():
    check = validity_plan_check("validity_gap", 24, load_inference_settings(), seed=7)
    assert 90 <= check["resumes"] <= 115 and check["structure"] == (1, 2, 1, 1)
    assert 0.55 <= check["simulated_power"] <= 0.97


def _pilot_csv(tmp_path):
    scores, pairs = _criterion_study(3, 30, 0.75)
    rows = scores.merge(pairs[["jd", "resume_id", "variant", "group", "name", "role", "edit"]])
    rows["score"] = rows["score"].clip(1, 10).round(3)  # a user's scores: 1 to 10
    path = tmp_path / "validity_pilot.csv"
    rows[["model", "jd", "resume_id", "group", "name", "variant", "role", "edit", "run", "score"]].to_csv(
        path, index=False
    )
    return path


def test_plan_reads_a_validity_csv_or_its_json_as_the_pilot(tmp_path, capsys):
    path = _pilot_csv(tmp_path)
    assert main(["plan", "--pilot", str(path), "--json"]) == 0
    from_csv = json.loads(capsys.readouterr().out)
    assert from_csv["kind"] == "criterion_validity" and from_csv["effect"] == 0.75
    assert from_csv["multiplicity"]["source"] == "none: the finding stands alone"
    # 2 groups x (a baseline, 4 twins, an equal twin): the pilot's texts per résumé.
    assert from_csv["designs"][0]["calls"] == from_csv["designs"][0]["resumes"] * 12
    assert main(["analyze-validity", str(path), "--json"]) == 0
    (tmp_path / "pilot.json").write_text(capsys.readouterr().out)
    assert main(["plan", "--pilot", str(tmp_path / "pilot.json"), "--json"]) == 0
    from_json = json.loads(capsys.readouterr().out)
    assert from_json["noise"]["sd"] == pytest.approx(from_csv["noise"]["sd"])
    assert main(["plan", "--pilot", str(path), "--kind", "validity_gap", "--json"]) == 0
    gap = json.loads(capsys.readouterr().out)
    assert gap["kind"] == "validity_gap" and gap["multiplicity"] == {
        "findings": 5,
        "families": 4,
        "source": "the pilot's",
    }


def test_plan_without_a_pilot_plans_validity_for_the_default_design(capsys):
    assert main(["plan", "--kind", "criterion_validity", "--sd", "0.15", "--run-share", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {d["resumes"] for d in out["designs"]} == {5}
    assert out["designs"][0]["calls"] == 5 * 20  # 4 groups x 5 texts a set
    assert main(["plan", "--kind", "validity_gap"]) == 0
    assert "beyond noise after the multiplicity control over 11 findings in 4 families" in capsys.readouterr().out


def test_plan_refuses_a_validity_effect_out_of_range_or_a_bad_pilot(tmp_path, capsys):
    assert main(["plan", "--kind", "criterion_validity", "--effect", "0.4"]) == 2
    assert capsys.readouterr().err == (
        "error: --effect of criterion validity is a share above chance: it must lie in (0.5, 1), got 0.4\n"
    )
    assert main(["plan", "--kind", "validity_gap", "--effect", "1.5"]) == 2
    assert "it must lie in (0, 1), got 1.5" in capsys.readouterr().err
    bad = tmp_path / "bad.csv"
    bad.write_text("resume_id,group,role,score\nr1,a,better,7\n")
    assert main(["plan", "--pilot", str(bad)]) == 2
    assert capsys.readouterr().err == (
        f"error: --pilot {bad}: line 2: column role: the set of this row (jd, resume_id and group) has no baseline "
        "row for model 'screener'; each twin is compared with its set's baseline\n"
    )
