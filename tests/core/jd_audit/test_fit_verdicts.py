"""The fit audit's findings (core/jd_audit/verdicts.py): levels pooled over job descriptions
with the résumé as the unit, and name groups compared with names as a random effect."""

import numpy as np
import pandas as pd
import pytest

from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.jd_audit.verdicts import fit_verdicts
from resumebias_dagster.testing.fit_simulation import simulate_fit_scores

SETTINGS = load_inference_settings()
GROUPS = {
    "firstName": {
        f"{r}_{s}": {"sex": s, "race_ethnicity": r}
        for r in ("white", "black", "hispanic", "asian")
        for s in ("male", "female")
    }
}


def scores_with_names(seed, resumes=10, pooled=True, penalty=0.0, effects=None):
    variants = ["baseline", "placebo_a", "school_x", *(f"firstName_{lv}" for lv in GROUPS["firstName"])]
    s = simulate_fit_scores(["m"], ["j1", "j2"], variants, 3, effects=effects, resumes=resumes, sd=1.0, seed=seed)
    s["axis"] = s["variant"].str.split("_").str[0]
    s["level"] = s["variant"].str.split("_", n=1).str[1].fillna("")
    s["arm"] = np.where(s["axis"] == "placebo", "placebo", np.where(s["variant"] == "baseline", "baseline", "probe"))
    named = s["axis"] == "firstName"
    # Pools: each résumé its own name per group; else one name per group on every résumé.
    s["name"] = np.where(named, s["variant"] + ("_" + s["resume_id"] if pooled else ""), None)
    # One name carries a large penalty of its own (a quirk, not its group's).
    quirky = s["name"] == ("firstName_white_female_r000" if pooled else "firstName_white_female")
    s.loc[quirky, "score"] -= penalty
    return s


def test_levels_are_pooled_over_job_descriptions_with_the_resume_as_the_unit():
    s = scores_with_names(1, effects={"school_x": -1.2})
    v = fit_verdicts(s, SETTINGS, GROUPS).set_index("finding")
    school = v.loc["fit_level:school_x"]
    per = s.groupby(["resume_id", "jd", "variant"])["score"].mean().unstack()
    d = (per["school_x"] - per["baseline"]).groupby(level="resume_id").mean()
    assert school.estimate == pytest.approx(d.mean()) and school.n_resumes == 10
    assert school.test == "t_resume" and school.verdict == "beyond_noise"
    assert v.loc["fit_level:placebo_a", "family"] == "placebo:placebo"


def test_one_names_quirk_is_not_read_as_its_groups_effect():
    # Issue 24, item 7: every race x sex category was one name, so a penalty on one name read
    # as a sex effect. With pools the name is one of ten of its group, a random effect.
    found = 0
    for seed in range(15):
        v = fit_verdicts(scores_with_names(seed, penalty=4.0), SETTINGS, GROUPS).set_index("finding")
        found += v.loc["fit_group:sex", "verdict"] == "beyond_noise"
    assert found <= 2
    # One name per group, shared by every résumé: its quirk cannot be told from its group's: no test.
    single = fit_verdicts(scores_with_names(0, pooled=False, penalty=4.0), SETTINGS, GROUPS).set_index("finding")
    sex = single.loc["fit_group:sex"]
    assert np.isnan(sex.p) and sex.verdict == "inconclusive" and "one name per group" in sex.note


def test_a_real_sex_effect_shared_by_a_groups_names_is_found():
    female = {f"firstName_{lv}": -0.8 for lv in GROUPS["firstName"] if lv.endswith("_female")}
    v = fit_verdicts(scores_with_names(3, resumes=12, effects=female), SETTINGS, GROUPS).set_index("finding")
    sex = v.loc["fit_group:sex"]
    assert sex.verdict == "beyond_noise" and sex.estimate == pytest.approx(-0.8, abs=0.3) and sex.n_names == 96
    assert v.loc["fit_group:race:black", "verdict"] != "beyond_noise"


def test_the_verdicts_table_is_typed_and_empty_without_scores():
    from resumebias_dagster.core.tables import Verdicts, columns

    empty = fit_verdicts(pd.DataFrame(), SETTINGS, GROUPS)
    assert list(empty.columns) == columns(Verdicts) and empty.empty
    Verdicts.validate(fit_verdicts(scores_with_names(2), SETTINGS, GROUPS))


def test_one_resume_says_what_it_is_and_never_speaks_for_a_group():
    # Issue 38, item 7: with one résumé a name level is that résumé with that name; n_resumes
    # showed the job descriptions, and a single name's quirk read as its group's.
    s = simulate_fit_scores(
        ["m"],
        [f"j{k}" for k in range(6)],
        ["baseline", *(f"firstName_{lv}" for lv in GROUPS["firstName"])],
        3,
        effects={"firstName_black_male": -2.0},
        resumes=1,
        seed=4,
    )
    s["axis"] = s["variant"].str.split("_").str[0]
    s["level"] = s["variant"].str.split("_", n=1).str[1].fillna("")
    s["arm"] = "probe"
    s["name"] = np.where(s["axis"] == "firstName", "Name " + s["level"], None)
    v = fit_verdicts(s, SETTINGS, GROUPS).set_index("finding")
    level = v.loc["fit_level:firstName_black_male"]
    assert level.n_resumes == 1 and level.n_units == 6 and level.test == "t_jd"
    assert "Name black_male" in level.note and "not about its group" in level.note
    for group in ("fit_group:sex", "fit_group:race:black"):
        assert np.isnan(v.loc[group, "ci_low"]) and v.loc[group, "verdict"] != "beyond_noise"


def test_names_recurring_on_many_resumes_are_a_random_effect_in_the_levels_too():
    # Issue 38, item 6: once names recur, the levels read them as fixed (coverage 88-92%).
    s = scores_with_names(2, resumes=24, pooled=False)
    rng = np.random.default_rng(2)
    named = s["axis"] == "firstName"
    # Each level's name on a résumé is one of its three, each name with its own effect.
    pick = {key: int(rng.integers(3)) for key in set(zip(s.loc[named, "variant"], s.loc[named, "resume_id"]))}
    keys = list(zip(s.loc[named, "variant"], s.loc[named, "resume_id"]))
    s.loc[named, "name"] = [f"{v}#{pick[v, r]}" for v, r in keys]
    quirk = {f"{v}#{k}": rng.normal(0, 1.0) for v in set(s.loc[named, "variant"]) for k in range(3)}
    s.loc[named, "score"] += s.loc[named, "name"].map(quirk).to_numpy(float)
    v = fit_verdicts(s, SETTINGS, GROUPS).set_index("finding")
    level = v.loc["fit_level:firstName_white_male"]
    fixed = fit_verdicts(s.drop(columns="name"), SETTINGS, GROUPS).set_index("finding").loc[level.name]
    assert level.test == "t_resume_name" and fixed.test == "t_resume"
    assert level.n_names == 3 and level.se > 1.2 * fixed.se  # three names' quirks: a wider interval
