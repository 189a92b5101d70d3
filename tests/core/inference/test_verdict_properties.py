"""Properties every verdict keeps on any design (issue 38): no printed interval lies outside
the range the finding can take, beyond noise only where the interval excludes no effect, ruled
out only where it lies inside the margin. Hypothesis draws small designs of the kinds users
bring: deterministic scorers (every run alike, most variants changing nothing, a few résumés
moved a lot), noisy ones, one résumé, two, a dozen, one run or several."""

import warnings

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resumebias_dagster.core.inference import InferenceSettings
from resumebias_dagster.core.jd_audit.fit_stats import fit_effects
from resumebias_dagster.core.jd_audit.verdicts import fit_verdicts
from resumebias_dagster.core.seniority.verdicts import seniority_verdicts
from resumebias_dagster.testing.screener_simulation import argmax_predictions

SETTINGS = InferenceSettings()
LEVELS = {
    f"{race}_{sex}": {"sex": sex, "race_ethnicity": race} for race in ("white", "black") for sex in ("male", "female")
}
RANGES = {"fit_delta": (-9, 9), "style_shift": (-2, 2), "seniority_bias": (-2, 2), "inconsistency": (-1, 1)}
# The validity findings (issue 42): a share, a level difference, a difference of shares.
RANGES |= {"seniority_accuracy": (0, 1), "rank_difference": (-2, 2), "validity_gap": (-1, 1)}
CHANCE = {"seniority_accuracy": 1 / 3}


@st.composite
def fit_designs(draw):
    resumes = draw(st.integers(1, 12))
    jds = draw(st.integers(1, 2))
    runs = draw(st.integers(1, 3))
    noisy = draw(st.booleans())
    seed = draw(st.integers(0, 10_000))
    rng = np.random.default_rng(seed)
    variants = ["baseline", "placebo_a", "school_x", *(f"firstName_{lv}" for lv in LEVELS)]
    # Per variant: a share of résumés moved and by how much (0: changes nothing).
    moves = {
        v: (draw(st.sampled_from([0.0, 0.1, 0.5, 1.0])), draw(st.sampled_from([-8.0, -3.0, -1.0, 0.5, 4.0])))
        for v in variants[1:]
    }
    base = rng.integers(1, 11, (resumes, jds)).astype(float)
    rows = []
    for v in variants:
        share, shift = moves.get(v, (0.0, 0.0))
        moved = rng.random(resumes) < share
        for r in range(resumes):
            for j in range(jds):
                for k in range(runs):
                    score = base[r, j] + (shift if moved[r] else 0.0) + (rng.normal(0, 1.5) if noisy else 0.0)
                    rows.append(("m", f"j{j}", f"r{r}", v, k, float(np.clip(np.rint(score), 1, 10))))
    scores = pd.DataFrame(rows, columns=["model", "jd", "resume_id", "variant", "run", "score"])
    scores["axis"] = scores["variant"].str.split("_").str[0]
    scores["level"] = scores["variant"].str.split("_", n=1).str[1].fillna("")
    scores["arm"] = np.where(scores["axis"] == "placebo", "placebo", "probe")
    return scores


def check(rows: pd.DataFrame, *, estimate="estimate", q="q", kind=None):
    for row in rows.itertuples(index=False):
        ratio = (kind or row.kind) == "impact_ratio"
        low, high = (0.0, 1.0) if ratio else RANGES[kind or row.kind]
        lo, hi = row.ci_low, row.ci_high
        if np.isnan(lo):
            assert row.verdict != "beyond_noise" and row.verdict != "equivalent", row
            continue
        assert low - 1e-9 <= lo <= getattr(row, estimate) + 1e-9 and getattr(row, estimate) - 1e-9 <= hi <= high + 1e-9
        null = 1.0 if ratio else 0.0
        if (kind or row.kind) in CHANCE:  # read against chance and its target, from the interval alone
            chance = CHANCE[kind or row.kind]
            assert (row.verdict == "valid") == (lo >= row.margin and lo > chance), row
            assert (row.verdict == "better than chance") == (lo > chance and lo < row.margin), row
            assert (row.verdict == "worse than chance") == (hi < chance), row
            continue
        if row.verdict == "beyond_noise":
            assert lo >= null - 1e-9 or hi <= null + 1e-9, row
            assert getattr(row, q) <= SETTINGS.alpha
        if row.verdict == "equivalent":
            margin = row.margin if hasattr(row, "margin") else SETTINGS.margins["fit_delta"]
            assert (lo >= margin - 1e-9) if ratio else (-margin - 1e-9 <= lo and hi <= margin + 1e-9), row


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fit_designs())
def test_fit_verdicts_and_cells_agree_with_their_intervals(scores):
    warnings.simplefilter("ignore")
    verdicts = fit_verdicts(scores, SETTINGS, {"firstName": LEVELS}, {"placebo": "placebo"})
    check(verdicts)
    cells = fit_effects(scores, arms={"placebo": "placebo"}, settings=SETTINGS)
    check(cells.rename(columns={"q_value": "q"}), estimate="delta", kind="fit_delta")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(0, 10_000),
    st.sampled_from([2, 5, 12, 30]),
    st.sampled_from([0.0, 0.05, 0.3, 1.0]),
    st.sampled_from([0.0, 0.1, 0.6]),
)
def test_seniority_verdicts_agree_with_their_intervals(seed, n_resumes, style_up, group_down):
    warnings.simplefilter("ignore")
    aa = ("african_american_male", "african_american_female")
    predictions = argmax_predictions(
        seed, n_resumes=n_resumes, style_up=style_up, group_down=dict.fromkeys(aa, group_down)
    )
    check(seniority_verdicts(predictions, SETTINGS))
