"""The job-description audit on the user's own résumés: ``probe_variants`` and ``check_probe_variants``
with ``probe_applicability``'s table, and the fit statistics when some résumés lack some axes."""

import numpy as np
import pandas as pd
import pytest

from resumebias_dagster.core.inference import InferenceSettings, load_inference_settings
from resumebias_dagster.core.jd_audit.fit_stats import fit_effects
from resumebias_dagster.core.jd_audit.probes import BASELINE, check_probe_variants, load_probe_axes, probe_variants
from resumebias_dagster.core.jd_audit.probes.applicability import (
    probe_applicability,
    resumes_left_out,
    skip_reasons,
    skipped_probes,
)
from resumebias_dagster.core.jd_audit.verdicts import fit_verdicts
from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.testing.fit_simulation import simulate_fit_scores
from resumebias_dagster.testing.resume_files import FREE_FORM_RESUME

AXES = [a.id for a in load_probe_axes().axes]
# A résumé as people write it (tests/core/jd_audit/test_probe_applicability.py): it has no
# city, no employer location, and a middle initial the name swap cannot take out of its e-mail.
FREE_FORM = FREE_FORM_RESUME
JANE_AXES = {a.id for a in load_probe_axes().axes} - {"firstName", "addressCountry", "companyLocations"}
# No name, no dates, no sections, no bullets: only the prompt injection applies.
NO_LAYOUT = "I build things and ship them.\nExperience: lots of it, in many places.\n"


@pytest.fixture(scope="module")
def rows():
    generated = generate_resumes(1, seed=7)
    return pd.DataFrame(
        {
            "resume_id": ["u-noparse", "u-jane", "u-gen0", "u-gen1"],
            "text": [NO_LAYOUT, FREE_FORM, generated["text"].iloc[0], generated["text"].iloc[2]],
        }
    )


@pytest.fixture(scope="module")
def applicability(rows):
    return probe_applicability(rows)


@pytest.fixture(scope="module")
def variants(rows, applicability):
    return probe_variants(rows, applicability=applicability)


def axes_of(variants, resume_id):
    return set(variants.loc[(variants["resume_id"] == resume_id) & (variants["variant"] != BASELINE), "axis"])


def test_each_resume_gets_the_axes_that_apply_and_no_axis_means_left_out(rows, variants, applicability):
    assert axes_of(variants, "u-jane") == JANE_AXES
    assert axes_of(variants, "u-gen0") == axes_of(variants, "u-gen1") == set(AXES)
    assert axes_of(variants, "u-noparse") == {"promptInjection"}
    assert resumes_left_out(applicability) == []
    # No axis applies: no variant to compare, so not even a baseline.
    others = [a for a in AXES if a != "promptInjection"]
    assert resumes_left_out(applicability, others) == ["u-noparse"]
    table = applicability[applicability["axis"].isin(others)]
    assert "u-noparse" not in set(probe_variants(rows, others, applicability=table)["resume_id"])
    assert (variants.groupby("resume_id")["variant"].apply(lambda v: (v == BASELINE).sum()) == 1).all()


def test_the_skipped_pairs_are_the_rows_that_do_not_apply(applicability):
    skipped = skipped_probes(applicability)
    assert list(skipped.columns) == ["resume_id", "axis", "reason"]
    pairs = set(zip(skipped["resume_id"], skipped["axis"]))
    assert pairs == {("u-noparse", a) for a in set(AXES) - {"promptInjection"}} | {
        ("u-jane", a) for a in set(AXES) - JANE_AXES
    }
    assert (skipped["reason"] != "").all()
    counted = skip_reasons(skipped)
    assert list(counted.columns) == ["axis", "reason", "resumes"] and counted["resumes"].sum() == len(skipped)
    school = counted[counted["axis"] == "school"].set_index("reason")["resumes"]
    assert school[school.index.str.startswith("no school found in an Education section")].tolist() == [1]
    assert skipped_probes(applicability, ["addressCountry"])["resume_id"].tolist() == ["u-noparse", "u-jane"]


def test_the_check_accepts_the_axes_that_do_not_apply(variants, applicability):
    assert check_probe_variants(variants, applicability=applicability).empty
    # Without the table every configured axis is expected of every résumé.
    problems = check_probe_variants(variants)
    assert set(problems["resume_id"]) == {"u-jane", "u-noparse"}
    assert set(problems["problem"]) == {"configured in the probe axes but missing for this résumé"}
    jane = problems[problems["resume_id"] == "u-jane"]
    assert {v.split("_")[0] for v in jane["variant"]} == set(AXES) - JANE_AXES


def test_the_check_refuses_a_variant_of_an_axis_the_table_says_does_not_apply(variants, applicability):
    table = applicability.copy()
    at = (table["resume_id"] == "u-gen0") & (table["axis"] == "school")
    table.loc[at, ["applies", "reason"]] = [False, "said so"]
    problems = check_probe_variants(variants, applicability=table)
    assert set(problems["variant"]) == {
        f"school_{level}" for level in load_probe_axes().select(["school"]).axes[0].levels
    }
    assert set(problems["problem"]) == {"the applicability table says axis 'school' does not apply (said so)"}


def test_a_left_out_resume_keeps_the_positions_of_the_others(rows, variants):
    # The name pool entry is the résumé's position among all rows, as probe_applicability saw it.
    pool = load_probe_axes().select(["firstName"]).axes[0].levels["white_male"]
    names = variants.loc[(variants["resume_id"] == "u-gen1") & (variants["variant"] == "firstName_white_male"), "name"]
    assert names.tolist() == [pool[3]]


def test_a_missing_applicability_row_is_an_error_not_a_skip(rows, applicability):
    partial = applicability[~((applicability["resume_id"] == "u-gen1") & (applicability["axis"] == "school"))]
    with pytest.raises(
        ValueError,
        match=r"probe_variants: the applicability table has no row for \(résumé, axis\) "
        r"\[\('u-gen1', 'school'\)\]: it was computed for other résumés",
    ):
        probe_variants(rows, applicability=partial)
    with pytest.raises(ValueError, match=r"probe_variants: the applicability table lacks columns \['applies'\]"):
        probe_variants(rows, applicability=applicability.drop(columns=["applies"]))


def test_without_a_table_generated_resumes_behave_as_before(rows):
    generated = rows[rows["resume_id"].str.startswith("u-gen")]
    assert probe_variants(generated).equals(probe_variants(generated, applicability=probe_applicability(generated)))


# --------------------------------------------------------------------------- statistics


def scores_with_gaps(resumes=6, seed=4):
    variants = ["baseline", "placebo_a", "school_x", *(f"firstName_{s}" for s in ("male", "female"))]
    s = simulate_fit_scores(["m"], ["j1", "j2"], variants, 3, effects={"school_x": -1.0}, resumes=resumes, seed=seed)
    s["axis"] = s["variant"].str.split("_").str[0]
    s["level"] = s["variant"].str.split("_", n=1).str[1].fillna("")
    s["arm"] = np.where(s["axis"] == "placebo", "placebo", np.where(s["variant"] == "baseline", "baseline", "probe"))
    ids = sorted(s["resume_id"].unique())
    # school does not apply to the first two résumés, the names not to the third.
    lacking = (s["axis"].eq("school") & s["resume_id"].isin(ids[:2])) | (
        s["axis"].eq("firstName") & s["resume_id"].eq(ids[2])
    )
    return s, s[~lacking].reset_index(drop=True), ids


def test_fit_effects_use_only_the_resumes_that_have_the_axis():
    full, s, ids = scores_with_gaps()
    effects = fit_effects(s, settings=InferenceSettings()).set_index(["jd", "variant"])
    per = s.groupby(["jd", "resume_id", "variant"])["score"].mean().unstack()
    for jd in ("j1", "j2"):
        school = effects.loc[(jd, "school_x")]
        d = (per.loc[jd, "school_x"] - per.loc[jd, "baseline"]).dropna()
        assert set(d.index) == set(ids[2:])
        assert school["n_resumes"] == 4 and school["test"] == "sign_flip"
        assert school["delta"] == pytest.approx(d.mean())
        assert school["n_baseline"] == 4 * 3  # the baseline runs of the résumés with the axis only
        assert school["baseline_mean"] == pytest.approx(per.loc[jd, "baseline"][ids[2:]].mean())
        assert effects.loc[(jd, "placebo_a"), "n_resumes"] == 6
        assert effects.loc[(jd, "firstName_male"), "n_resumes"] == 5
    # The résumés without the axis change nothing of the others' effects.
    kept = full[~full["resume_id"].isin(ids[:2])]
    alone = fit_effects(kept[kept["axis"].isin(["baseline", "school"])], settings=InferenceSettings())
    assert alone.set_index(["jd", "variant"]).loc[("j1", "school_x"), "delta"] == pytest.approx(
        effects.loc[("j1", "school_x"), "delta"]
    )


def test_fit_verdicts_use_only_the_resumes_that_have_the_axis():
    _, s, ids = scores_with_gaps()
    groups = {
        "firstName": {
            "male": {"sex": "male", "race_ethnicity": None},
            "female": {"sex": "female", "race_ethnicity": None},
        }
    }
    v = fit_verdicts(s, load_inference_settings(), groups).set_index("finding")
    per = s.groupby(["resume_id", "jd", "variant"])["score"].mean().unstack()
    d = (per["school_x"] - per["baseline"]).groupby(level="resume_id").mean().dropna()
    assert v.loc["fit_level:school_x", "n_resumes"] == 4
    assert v.loc["fit_level:school_x", "estimate"] == pytest.approx(d.mean())
    assert v.loc["fit_level:placebo_a", "n_resumes"] == 6
    assert v.loc["fit_group:sex", "n_resumes"] == 5
