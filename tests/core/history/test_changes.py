"""What changed between two audits of one model (issue 44), through the fit audit's own verdicts
on simulated screeners: a name penalty that doubles, an unchanged model, a deterministic scorer
audited twice on few résumés (not enough to call anything unchanged), and the findings left out."""

import numpy as np

from resumebias_dagster.core.history.changes import audit_changes
from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.jd_audit.verdicts import fit_verdicts
from resumebias_dagster.core.tables import AuditChanges
from resumebias_dagster.testing.calibration import ARMS, NAME_LEVELS, _fit_scores
from resumebias_dagster.testing.screener_simulation import deterministic_fit_scores

SETTINGS = load_inference_settings()
GROUPS = {"firstName": NAME_LEVELS}
NAME = "fit_level:firstName_black_female"


def _audit(seed, effects, resumes=60):
    return fit_verdicts(_fit_scores(seed, effects, resumes=resumes), SETTINGS, GROUPS, ARMS)


def test_a_name_penalty_that_doubles_is_changed_beyond_noise_and_the_rest_is_not():
    base = _audit(1, {"firstName_black_female": -1.0})
    new = _audit(2, {"firstName_black_female": -2.0})
    changes = AuditChanges.validate(audit_changes(base, new, SETTINGS, base_id="s1", new_id="s2"))
    row = changes.set_index("finding").loc[NAME]
    assert row["verdict"] == "beyond_noise" and row["ci_high"] < 0 < -row["ci_low"]
    assert row["estimate"] == row["new_estimate"] - row["base_estimate"]
    others = changes[~changes["finding"].isin([NAME, "fit_group:race:black", "fit_group:sex"])]
    assert len(others) > 10 and not (others["verdict"] == "beyond_noise").any()
    assert set(changes["snapshot_id"]) == {"s2"} and set(changes["base_snapshot_id"]) == {"s1"}
    assert changes["test"].eq("welch_t").all()
    # Impact ratios are not compared here (their intervals are their study's own).
    assert base["kind"].eq("impact_ratio").any() and not changes["kind"].eq("impact_ratio").any()


def test_a_deterministic_scorer_audited_twice_on_few_resumes_is_not_called_unchanged():
    variants = ("baseline", "school_a", "school_b", "placebo_p0")

    def audit(seed):
        scores = deterministic_fit_scores(seed, resumes=12, variants=variants, sparse={"school_a": (1.0, -1.0)})
        return fit_verdicts(scores, SETTINGS, arms=ARMS)

    changes = audit_changes(audit(0), audit(1), SETTINGS, base_id="a", new_id="b")
    assert np.allclose(changes["estimate"], 0.0)
    # A change a few résumés carry could be in none of twelve: "not decided", never "unchanged".
    assert changes["verdict"].isin(["within_noise", "inconclusive"]).all(), changes["verdict"].tolist()


def test_an_unchanged_model_audited_on_many_resumes_is_unchanged():
    base = _audit(3, {}, resumes=400)
    new = _audit(4, {}, resumes=400)
    changes = audit_changes(base, new, SETTINGS, base_id="a", new_id="b")
    levels = changes[changes["finding"].str.startswith("fit_level:")]
    assert (levels["verdict"] == "equivalent").mean() > 0.8, levels["verdict"].value_counts()


def test_a_change_a_few_resumes_could_carry_keeps_two_tight_audits_from_unchanged():
    """Two audits of a low-noise screener on 100 résumés each: every interval is narrow, but a
    change of the margin carried by a few résumés (each by up to 18 points: -9 to +9) could lie in
    none of them, so nothing is called unchanged before 264 résumés (ln(0.025) / ln(1 - 0.25 / 18))."""
    from resumebias_dagster.testing.fit_simulation import simulate_fit_scores

    def audit(seed, resumes):
        variants = ["baseline", "school_a", "school_b", "placebo_p0"]
        scores = simulate_fit_scores(
            ["m"], ["j0"], variants, 5, effects={}, sd=0.2, resumes=resumes, effect_sd=0.02, seed=seed, integer=False
        )
        scores["axis"] = scores["variant"].str.split("_").str[0]
        scores["level"] = scores["variant"].str.split("_", n=1).str[1].fillna("")
        scores["arm"] = np.where(
            scores["axis"] == "placebo", "placebo", np.where(scores["variant"] == "baseline", "baseline", "probe")
        )
        return fit_verdicts(scores, SETTINGS, arms=ARMS)

    base, new = audit(5, 100), audit(6, 100)
    assert (new["ci_high"] - new["ci_low"]).max() < 0.1  # each audit alone is tight
    changes = audit_changes(base, new, SETTINGS, base_id="a", new_id="b")
    assert len(changes) == 3 and not changes["verdict"].eq("equivalent").any(), changes[["finding", "verdict"]]
    assert changes["note"].str.contains("264 résumés").all(), changes["note"].tolist()
    wide = audit_changes(audit(7, 270), audit(8, 270), SETTINGS, base_id="a", new_id="b")
    assert wide["verdict"].eq("equivalent").all(), wide[["finding", "verdict", "ci_low", "ci_high"]]
