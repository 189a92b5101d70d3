"""The validity findings (issue 42): criterion validity against chance and the target,
discriminant validity, validity by name group, as verdicts that never disagree with their
intervals. The scored frames are built here from the tables' interface (pairs: jd, resume_id,
group, name, variant, role, edit; scores: FitScores rows run on the pairs as variants)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resumebias_dagster.catalog import CatalogError
from resumebias_dagster.core.inference import InferenceSettings, load_inference_settings, validity_words
from resumebias_dagster.core.inference.verdict_table import format_verdict_table
from resumebias_dagster.core.jd_audit.validity_stats import comparisons, validity_summary, validity_verdicts
from resumebias_dagster.core.tables import Verdicts
from resumebias_dagster.testing.calibration import calibrate
from resumebias_dagster.testing.validity_calibration import VALIDITY_SCENARIOS
from resumebias_dagster.testing.validity_simulation import deterministic_validity, noisy_validity

SETTINGS = InferenceSettings()
GROUPS = ("white_male", "black_female", "hispanic_male", "asian_female")
TWINS = (("better", "skill"), ("worse", "skill"), ("better", "years"), ("worse", "years"), ("equal", "reorder"))


def make_pairs(resumes: int, jds: int = 1, groups=GROUPS[:2]) -> pd.DataFrame:
    """A pairs table per the interface: per (jd, résumé, group) a baseline and its twins."""
    rows = []
    for j in range(jds):
        for r in range(resumes):
            for g in groups:
                name = f"{g}-{r}"
                rows.append((f"jd{j}", f"r{r}", g, name, f"{g}:baseline", "baseline", "baseline"))
                rows += [(f"jd{j}", f"r{r}", g, name, f"{g}:{role}:{edit}", role, edit) for role, edit in TWINS]
    pairs = pd.DataFrame(rows, columns=["jd", "resume_id", "group", "name", "variant", "role", "edit"])
    pairs["detail"] = pairs["role"] + " " + pairs["edit"]
    pairs["text"] = "text of " + pairs["variant"]
    return pairs.assign(arm="validity", axis=pairs["edit"], level=pairs["role"])


def score(pairs: pd.DataFrame, scorer, runs: int = 1, model: str = "tool") -> pd.DataFrame:
    """FitScores-like rows: ``scorer(row, run)`` scores each text of the pairs."""
    rows = [
        {**{k: row[k] for k in ("jd", "resume_id", "variant", "arm", "axis", "level", "name")}, "run": k}
        | {"model": model, "score": float(scorer(row, k))}
        for row in pairs.to_dict("records")
        for k in range(runs)
    ]
    return pd.DataFrame(rows)


def base_of(row) -> float:
    """A résumé's baseline score under a job description (a scorer's reading of the résumé)."""
    return 4.0 + (int(row["resume_id"][1:]) * 7 + int(row["jd"][2:]) * 3) % 5


def follows_requirements(row, run=0) -> float:
    """Scores the better twin a point above its baseline, the worse a point below, equals alike."""
    return base_of(row) + {"better": 1.0, "worse": -1.0}.get(row["role"], 0.0)


def row_of(v: pd.DataFrame, finding: str, model: str = "tool") -> pd.Series:
    return v[(v["finding"] == finding) & (v["model"] == model)].iloc[0]


def test_a_random_scorer_on_60_resumes_is_no_better_than_chance():
    pairs = make_pairs(60)
    rng = np.random.default_rng(3)
    noise = {v: rng.integers(1, 11) for v in (pairs["jd"] + pairs["resume_id"] + pairs["variant"])}
    v = validity_verdicts(score(pairs, lambda r, k: noise[r["jd"] + r["resume_id"] + r["variant"]]), pairs, SETTINGS)
    criterion = row_of(v, "validity:criterion")
    assert criterion["verdict"] == "no better than chance"
    assert criterion["ci_low"] <= 0.5 <= criterion["ci_high"] and abs(criterion["estimate"] - 0.5) < 0.1
    assert criterion["n_resumes"] == 60 and criterion["test"] == "t_resume"
    assert validity_summary(v) == {"tool": "no better than chance"}
    Verdicts.validate(v)


def test_a_scorer_following_the_requirements_is_valid():
    pairs = make_pairs(60, jds=2)
    v = validity_verdicts(score(pairs, follows_requirements), pairs, SETTINGS)
    criterion = row_of(v, "validity:criterion")
    # Every pair ordered right: no spread; 60 résumés can have missed 6% of the population.
    assert criterion["estimate"] == 1.0 and criterion["ci_low"] == pytest.approx(0.025 ** (1 / 60))
    assert criterion["verdict"] == "valid" and validity_summary(v) == {"tool": "valid"}
    assert set(v.loc[v["finding"].str.startswith("validity:criterion:"), "verdict"]) == {"valid"}
    # Equal twins scored as their baseline: nothing moved, but 60 résumés alike cannot rule out
    # 0.25 points (résumés unseen could move anywhere in -9..9).
    discriminant = row_of(v, "validity:discriminant")
    assert discriminant["estimate"] == 0 and discriminant["verdict"] == "within_noise"
    assert discriminant["ci_high"] == pytest.approx(9 * (1 - 0.025 ** (1 / 60)))


def test_a_scorer_that_credits_one_groups_better_twin_less_gets_that_gap_beyond_noise_and_the_others_ruled_out():
    pairs = make_pairs(80, groups=GROUPS)

    def scorer(row, run=0):
        # With black_female names the better twin is scored as its baseline (a tie) on half the résumés.
        if row["group"] == "black_female" and row["role"] == "better" and int(row["resume_id"][1:]) % 2:
            return base_of(row)
        return follows_requirements(row)

    v = validity_verdicts(score(pairs, scorer), pairs, SETTINGS)
    Verdicts.validate(v)
    gap = row_of(v, "validity:group_gap:black_female")
    assert gap["estimate"] == pytest.approx(-0.125) and gap["verdict"] == "beyond_noise" and gap["q"] <= 0.05
    for group in ("hispanic_male", "asian_female"):
        other = row_of(v, f"validity:group_gap:{group}")
        assert other["estimate"] == 0 and other["verdict"] == "equivalent", other
    assert row_of(v, "validity:group:black_female")["verdict"] == "better than chance"
    assert row_of(v, "validity:group:white_male")["verdict"] == "valid"
    # The reference is the pairs' first group; every contrast names it.
    assert set(v.loc[v["finding"].str.contains("gap"), "description"].str.split(" minus ").str[1]) == {
        "white_male names on the same résumé"
    }


def test_equal_twins_moved_for_one_group_are_beyond_noise_for_that_group():
    pairs = make_pairs(40, groups=GROUPS[:3])
    rng = np.random.default_rng(5)
    wobble = {k: rng.normal(0, 0.3) for k in pairs["resume_id"] + pairs["group"]}

    def scorer(row, run=0):
        up = 0.8 if row["group"] == "hispanic_male" and row["role"] == "equal" else 0.0
        return (
            follows_requirements(row) + up + (wobble[row["resume_id"] + row["group"]] if row["role"] == "equal" else 0)
        )

    v = validity_verdicts(score(pairs, scorer), pairs, SETTINGS)
    assert row_of(v, "validity:equal:hispanic_male")["verdict"] == "beyond_noise"
    assert row_of(v, "validity:equal_gap:hispanic_male")["estimate"] == pytest.approx(0.8, abs=0.2)
    assert row_of(v, "validity:equal_gap:hispanic_male")["verdict"] == "beyond_noise"
    assert row_of(v, "validity:equal_gap:black_female")["verdict"] != "beyond_noise"


def test_a_scorer_that_ignores_qualification_ties_every_pair_and_gets_the_exact_bound():
    pairs = make_pairs(30)
    v = validity_verdicts(score(pairs, lambda r, k: base_of(r)), pairs, SETTINGS)
    criterion = row_of(v, "validity:criterion")
    share = 1 - 0.025 ** (1 / 30)  # of résumés 30 alike can have missed, each anywhere in 0..1
    assert criterion["estimate"] == 0.5 and criterion["ci_low"] == pytest.approx(0.5 - 0.5 * share)
    assert criterion["ci_high"] == pytest.approx(0.5 + 0.5 * share)
    assert criterion["verdict"] == "no better than chance" and criterion["p"] == 1.0
    assert "100% of comparisons tied (each counts half)" in criterion["note"]


def test_ties_count_half_and_the_resume_is_the_unit():
    pairs = make_pairs(2, groups=("white_male",))
    pairs = pairs[pairs["edit"].isin(["baseline", "skill"])]
    # r0: better tied (0.5), worse right (1): 0.75; r1: better right (1), worse wrong (0): 0.5.
    table = {("r0", "better"): 5.0, ("r0", "worse"): 4.0, ("r1", "better"): 6.0, ("r1", "worse"): 7.0}
    scores = score(pairs, lambda r, k: table.get((r["resume_id"], r["role"]), 5.0), runs=3)
    c = comparisons(scores, pairs)
    assert sorted(c["right"]) == [0.0, 0.5, 1.0, 1.0]
    v = validity_verdicts(scores, pairs, SETTINGS)
    assert row_of(v, "validity:criterion")["estimate"] == pytest.approx(0.625)
    assert row_of(v, "validity:criterion")["n_resumes"] == 2


def test_runs_are_averaged_before_comparing_and_failed_runs_left_out():
    pairs = make_pairs(1, groups=("white_male",))
    pairs = pairs[pairs["edit"].isin(["baseline", "skill"])]
    # The better twin's runs 4, 7, NaN average 5.5 against a baseline of 5: right.
    runs = {("better", 0): 4.0, ("better", 1): 7.0, ("better", 2): np.nan, ("worse", 0): 3.0}
    scores = score(pairs, lambda r, k: runs.get((r["role"], k), 5.0 if r["role"] == "baseline" else 4.0), runs=3)
    c = comparisons(scores, pairs).set_index("role")
    assert c.loc["better", "value"] == 5.5 and c.loc["better", "right"] == 1.0
    assert c.loc["worse", "value"] == pytest.approx(11 / 3) and c.loc["worse", "right"] == 1.0


def test_one_resume_is_a_claim_about_that_resume_with_its_comparisons_as_units():
    pairs = make_pairs(1, jds=5)
    v = validity_verdicts(score(pairs, follows_requirements), pairs, SETTINGS)
    criterion = row_of(v, "validity:criterion")
    assert criterion["n_resumes"] == 1 and criterion["n_units"] == 20  # 5 JDs x 4 twins
    assert criterion["test"] == "t_comparisons" and "a claim about that résumé only" in criterion["note"]
    # 20 comparisons all right: their exact bound reaches 0.83, short of the target.
    assert criterion["ci_low"] == pytest.approx(0.025 ** (1 / 20)) and criterion["verdict"] == "better than chance"
    gap = row_of(v, "validity:group_gap:black_female")
    assert np.isnan(gap["ci_low"]) and "two résumés or more" in gap["note"]


def test_one_comparison_has_no_interval_and_is_not_called_better_than_chance():
    pairs = make_pairs(1, groups=("white_male",))
    pairs = pairs[pairs["variant"].isin(["white_male:baseline", "white_male:better:skill"])]
    v = validity_verdicts(score(pairs, follows_requirements), pairs, SETTINGS)
    criterion = row_of(v, "validity:criterion")
    assert np.isnan(criterion["ci_low"]) and criterion["verdict"] == "no better than chance"
    assert "no interval" in criterion["note"]
    assert validity_summary(v) == {"tool": "not shown valid"}


def test_few_resumes_of_a_valid_scorer_are_better_than_chance_but_not_shown_valid():
    pairs = make_pairs(8)
    v = validity_verdicts(score(pairs, follows_requirements), pairs, SETTINGS)
    criterion = row_of(v, "validity:criterion")
    assert criterion["ci_low"] == pytest.approx(0.025 ** (1 / 8))  # 0.63: 8 résumés can miss a third
    assert criterion["verdict"] == "better than chance"
    assert validity_summary(v) == {"tool": "not shown valid"}


def test_one_name_per_group_contrasts_those_names_and_says_so():
    pairs = make_pairs(20, groups=GROUPS[:2])
    pairs["name"] = pairs["group"] + "-only"
    v = validity_verdicts(score(pairs, follows_requirements), pairs, SETTINGS)
    gap = row_of(v, "validity:group_gap:black_female")
    assert gap["test"] == "t_resume" and "one name per group" in gap["note"]


def test_models_are_judged_apart_and_printed_as_shares():
    pairs = make_pairs(60)
    rng = np.random.default_rng(9)
    scores = pd.concat(
        [
            score(pairs, follows_requirements, model="good"),
            score(pairs, lambda r, k: float(rng.integers(1, 11)), model="noise"),
        ]
    )
    v = validity_verdicts(scores, pairs, SETTINGS)
    assert validity_summary(v) == {"good": "valid", "noise": "no better than chance"}
    text = format_verdict_table(v)
    assert "validity:criterion" in text and "1.000" in text and "+1.000" not in text
    assert "criterion validity: the share of better / worse twins scored the right way" in text


@pytest.mark.parametrize(
    ("which", "change", "message"),
    [
        ("scores", lambda s, p: (s.drop(columns=["score"]), p), r"validity scores: missing columns \['score'\]"),
        ("pairs", lambda s, p: (s, p.drop(columns=["role"])), r"validity pairs: missing columns \['role'\]"),
        (
            "no baseline",
            lambda s, p: (s, p[~((p["resume_id"] == "r1") & (p["role"] == "baseline") & (p["jd"] == "jd0"))]),
            r"validity pairs: the set jd='jd0', resume_id='r1', group='white_male' has twins but no baseline",
        ),
        (
            "role",
            lambda s, p: (s, p.assign(role=p["role"].replace("equal", "same"))),
            r"validity pairs: role 'same' \(variant 'white_male:equal:reorder'\) is not one of baseline, better, worse, equal",
        ),
        (
            "unpaired score",
            lambda s, p: (
                s.assign(variant=s["variant"].replace("white_male:better:skill", "white_male:better:sql")),
                p,
            ),
            r"validity scores: 3 rows name no pair of the pairs table \(first: jd='jd0', resume_id='r0', "
            r"variant='white_male:better:sql'\)",
        ),
        (
            "repeated run",
            lambda s, p: (pd.concat([s, s.iloc[:1]]), p),
            r"validity scores: the same run occurs twice \(model='tool', jd='jd0', resume_id='r0', "
            r"variant='white_male:baseline', run=0\)",
        ),
        (
            "no baseline scored",
            lambda s, p: (s[~s["variant"].str.endswith(":baseline")], p),
            r"validity scores: no baseline was scored; each twin is compared with its set's baseline",
        ),
        (
            "repeated variant",
            lambda s, p: (s, pd.concat([p, p.iloc[:1]])),
            r"validity pairs: variant 'white_male:baseline' occurs twice for jd 'jd0', resume_id 'r0'",
        ),
    ],
)
def test_bad_input_is_refused_in_one_line_naming_what_is_wrong(which, change, message):
    pairs = make_pairs(3)
    scores, pairs = change(score(pairs, follows_requirements), pairs)
    with pytest.raises(ValueError, match=message) as caught:
        validity_verdicts(scores, pairs, SETTINGS)
    assert "\n" not in str(caught.value), which


def test_an_unknown_reference_group_is_refused():
    pairs = make_pairs(3)
    with pytest.raises(
        ValueError, match=r"validity: reference group 'nobody' is not a group of the pairs \(white_male"
    ):
        validity_verdicts(score(pairs, follows_requirements), pairs, SETTINGS, reference="nobody")


def test_the_target_and_gap_margin_are_declared_in_inference_yaml(tmp_path, monkeypatch):
    settings_ = load_inference_settings()
    assert settings_.margins["criterion_validity"] == 0.9 and settings_.margins["validity_gap"] == 0.1
    text = (
        "margins: {style_shift: 0.05, seniority_bias: 0.05, inconsistency: 0.05, fit_delta: 0.25, impact_ratio: 0.9,"
        " criterion_validity: 0.4, validity_gap: 0.1, seniority_accuracy: 0.8, rank_difference: 0.1}\n"
        "detect: {style_shift: 0.05, seniority_bias: 0.05, inconsistency: 0.05, fit_delta: 0.25, impact_ratio: 0.8,"
        " criterion_validity: 0.75, validity_gap: 0.1, seniority_accuracy: 0.6, rank_difference: 0.1}\n"
    )
    (tmp_path / "inference.yaml").write_text(text)
    with pytest.raises(
        CatalogError, match=r"inference.yaml: margins.criterion_validity must lie in \(0.5, 1\), got 0.4"
    ):
        load_inference_settings(tmp_path)
    # The seniority task's target is a share above its chance, 1/3 (issue 42).
    (tmp_path / "inference.yaml").write_text(
        text.replace("criterion_validity: 0.4", "criterion_validity: 0.9").replace(
            "seniority_accuracy: 0.8", "seniority_accuracy: 0.3"
        )
    )
    with pytest.raises(
        CatalogError, match=r"inference.yaml: margins.seniority_accuracy must lie in \(0.333333, 1\), got 0.3"
    ):
        load_inference_settings(tmp_path)
    (tmp_path / "inference.yaml").write_text(text.replace(" criterion_validity: 0.4,", ""))
    with pytest.raises(CatalogError, match=r"`margins` must list exactly .*missing \['criterion_validity'\]"):
        load_inference_settings(tmp_path)


def test_the_verdict_words_read_the_interval_alone():
    low = np.array([0.92, 0.6, 0.3, 0.1, np.nan, 0.9])
    high = np.array([0.99, 0.95, 0.7, 0.45, np.nan, 1.0])
    words = validity_words(low, high, 0.5, 0.9)
    assert list(words) == [
        "valid",
        "better than chance",
        "no better than chance",
        "worse than chance",
        "no better than chance",
        "valid",  # at the target counts: "at or above"
    ]


def test_the_schema_refuses_a_validity_verdict_that_disagrees_with_its_interval():
    pairs = make_pairs(60)
    v = validity_verdicts(score(pairs, follows_requirements), pairs, SETTINGS)
    bad = v.copy()
    bad.loc[bad["finding"] == "validity:criterion", "verdict"] = "no better than chance"
    with pytest.raises(Exception, match="validity_verdict_agrees_with_interval"):
        Verdicts.validate(bad)
    wrong_kind = v.copy()
    wrong_kind.loc[wrong_kind["finding"] == "validity:discriminant", "verdict"] = "valid"
    with pytest.raises(Exception, match="validity_verdict_agrees_with_interval"):
        Verdicts.validate(wrong_kind)


@st.composite
def designs(draw):
    seed = draw(st.integers(0, 10_000))
    groups = ("white_male", "black_female", "asian_female")[: draw(st.integers(1, 3))]
    common = {"resumes": draw(st.integers(1, 12)), "jds": draw(st.integers(1, 2)), "groups": groups}
    common["name_pool"] = draw(st.sampled_from([0, 1, 2]))
    if draw(st.booleans()):
        validity = {g: draw(st.sampled_from([0.0, 0.3, 0.5, 0.9, 1.0])) for g in groups}
        tie = draw(st.sampled_from([0.0, 0.5, 1.0]))
        validity = {g: min(max(x, tie / 2), 1 - tie / 2) for g, x in validity.items()}
        return deterministic_validity(seed, validity=validity, tie=tie, **common)
    delta = draw(st.sampled_from([-1.0, 0.0, 0.3, 2.0]))
    return noisy_validity(seed, runs=draw(st.integers(1, 3)), delta=delta, **common)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(designs())
def test_no_validity_verdict_disagrees_with_its_interval(design):
    warnings.simplefilter("ignore")
    scores, pairs = design
    v = validity_verdicts(scores, pairs, SETTINGS)
    Verdicts.validate(v)  # the schema's checks: interval holds the estimate, verdicts agree with it
    share = v["kind"] == "criterion_validity"
    rows = v[share]
    assert (rows["ci_low"].isna() | ((rows["ci_low"] >= -1e-12) & (rows["ci_high"] <= 1 + 1e-12))).all()
    expected = validity_words(rows["ci_low"], rows["ci_high"], 0.5, SETTINGS.margins["criterion_validity"])
    assert list(rows["verdict"]) == list(expected)
    for row in v[~share].itertuples():
        if row.verdict == "beyond_noise":
            assert row.ci_low >= -1e-9 or row.ci_high <= 1e-9, row
        if row.verdict == "equivalent":
            assert -row.margin - 1e-9 <= row.ci_low and row.ci_high <= row.margin + 1e-9, row


def test_the_validity_verdicts_are_calibrated_on_a_few_simulated_studies():
    warnings.simplefilter("ignore")
    table = calibrate(6, SETTINGS, seed=500, scenarios=VALIDITY_SCENARIOS).set_index("verdict_type")
    assert set(table.index) == {s.verdict_type for s in VALIDITY_SCENARIOS}
    assert (table["false_positive_rate"].dropna() <= 0.2).all(), table["false_positive_rate"]
    assert (table["ruled_out_at_margin"].dropna() <= 0.2).all(), table["ruled_out_at_margin"]
    for column in ("coverage_null", "coverage_planted", "coverage_margin"):
        assert (table[column].dropna() >= 0.75).all(), table[column]
    assert table.loc["validity: valid deterministic scorer (0.97, 60): criterion", "called_valid"] == 1.0
