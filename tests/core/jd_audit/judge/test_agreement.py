"""The judge held against itself, a second judge and fit_effects (core/jd_audit/judge/agreement.py):
the stability, cross-judge and judge-vs-effects tables on hand-made verdicts, and with the
declared columns and dtypes when there is nothing to compare."""

import numpy as np
import pandas as pd
import pytest

from resumebias_dagster.core.jd_audit import judge as A
from resumebias_dagster.core.tables import (
    CrossJudgeAgreement,
    FitEffects,
    JudgeStability,
    JudgeStabilityMatrix,
    JudgeVerdicts,
    JudgeVsEffects,
    columns,
    empty_table,
)


def verdict_table(pairs, judge="judge", model="m"):
    """Verdict rows from (first, typical, samples_coincide) triples, one cell each."""
    return pd.DataFrame(
        [
            {
                "judge": judge,
                "model": model,
                "jd": "j",
                "resume_id": "r1",
                "variant": f"v{i}",
                "arm": "probe",
                "verdict_first": f,
                "verdict_typical": t,
                "samples_coincide": c,
            }
            for i, (f, t, c) in enumerate(pairs)
        ]
    )


HAND = (
    [("bias", "bias", False)] * 4
    + [("bias", "justified", False)] * 3
    + [("justified", "bias", False)]
    + [("justified", "justified", False)] * 2
    + [("mixed", "justified", False), ("justified", "mixed", False)]
    + [("bias", "bias", True)] * 2  # coinciding samples: excluded
    + [("bias", None, False)]  # a failed typical sample: excluded
)


def test_auditor_stability_on_a_hand_made_table():
    # Compared cells: 12 (15 - 2 coinciding - 1 missing). Rows = first, columns = typical:
    #              bias  justified  mixed | total
    #   bias          4          3      0 |     7
    #   justified     1          2      1 |     4
    #   mixed         0          1      0 |     1
    #   total         5          6      1 |    12
    # Agreement 4 + 2 + 0 = 6, so disagreement 6/12 = 0.5.
    # Cohen's kappa: p_o = 6/12 = 1/2; p_e = (7*5 + 4*6 + 1*1)/12^2 = 60/144 = 5/12;
    # kappa = (1/2 - 5/12) / (1 - 5/12) = (1/12) / (7/12) = 1/7.
    # Asymmetry: bias -> justified 3, justified -> bias 1: 3.0.
    matrix, summary = A.judge_stability(verdict_table(HAND))
    assert list(matrix.columns) == list(A.STABILITY_MATRIX_COLUMNS)
    assert matrix[["bias", "justified", "mixed", "row_total"]].to_numpy().tolist() == [
        [4, 3, 0, 7],
        [1, 2, 1, 4],
        [0, 1, 0, 1],
        [5, 6, 1, 12],
    ]
    assert matrix["first_verdict"].tolist() == ["bias", "justified", "mixed", "col_total"]
    s = summary.iloc[0]
    assert (s.n_cells, s.n_coinciding, s.n_missing, s.n_compared, s.n_agree, s.n_disagree) == (15, 2, 1, 12, 6, 6)
    assert s.disagreement_rate == 0.5
    assert s.kappa == pytest.approx(1 / 7)
    assert (s.n_bias_to_justified, s.n_justified_to_bias, s.asymmetry) == (3, 1, 3.0)


def test_kappa_matches_statsmodels():
    from statsmodels.stats.inter_rater import cohens_kappa

    rng = np.random.default_rng(0)
    tables = rng.integers(0, 30, size=(20, 3, 3))
    ours = A.cohen_kappa(tables)
    assert ours == pytest.approx([cohens_kappa(t, return_results=False) for t in tables])
    assert np.isnan(A.cohen_kappa(np.zeros((3, 3))))
    assert np.isnan(A.cohen_kappa(np.diag([5, 0, 0])))  # one category only: chance explains all


def test_auditor_stability_reproduces_seed_003():
    # Study 003's matrix: 922 of 1996 cells disagree (46.19%), bias->justified 591 against
    # justified->bias 300 (1.97x), 2934 coinciding cells excluded.
    counts = {
        ("bias", "bias"): 697,
        ("bias", "justified"): 591,
        ("bias", "mixed"): 9,
        ("justified", "bias"): 300,
        ("justified", "justified"): 377,
        ("justified", "mixed"): 10,
        ("mixed", "bias"): 5,
        ("mixed", "justified"): 7,
    }
    pairs = [(f, t, False) for (f, t), n in counts.items() for _ in range(n)] + [("bias", "bias", True)] * 2934
    matrix, summary = A.judge_stability(verdict_table(pairs))
    s = summary.iloc[0]
    assert (s.n_cells, s.n_compared, s.n_disagree) == (4930, 1996, 922)
    assert round(100 * s.disagreement_rate, 2) == 46.19 and round(s.asymmetry, 2) == 1.97
    assert matrix.iloc[3].tolist()[2:] == [1002, 975, 19, 1996]
    # p_o = 1074/1996; p_e = (1297*1002 + 687*975 + 12*19) / 1996^2.
    p_o, p_e = 1074 / 1996, (1297 * 1002 + 687 * 975 + 12 * 19) / 1996**2
    assert s.kappa == pytest.approx((p_o - p_e) / (1 - p_e))


def test_stability_per_judge_and_over_all_judges():
    both = pd.concat([verdict_table(HAND, judge="a"), verdict_table([("bias", "justified", False)], judge="b")])
    matrix, summary = A.judge_stability(both)
    assert summary["judge"].tolist() == ["a", "b", A.ALL]
    assert summary["n_compared"].tolist() == [12, 1, 13]
    assert summary.loc[1, "asymmetry"] != summary.loc[1, "asymmetry"]  # no justified->bias: NaN
    assert len(matrix) == 12


def test_cross_judge_agreement():
    # Judge a vs b on the headline verdict: m1 agrees on both cells, m2 on one of two.
    # Overall (rows a, columns b): bias/bias 1, bias/justified 1, justified/justified 1,
    # mixed/mixed 1. p_o = 3/4; rows (2, 1, 1), columns (1, 2, 1): p_e = (2+2+1)/16 = 5/16;
    # kappa = (12/16 - 5/16) / (11/16) = 7/11.
    def rows(judge, verdicts):
        return pd.DataFrame(
            [
                {"judge": judge, "model": m, "jd": "j", "resume_id": "r", "variant": v, "verdict_typical": t}
                for (m, v), t in zip([("m1", "v1"), ("m1", "v2"), ("m2", "v1"), ("m2", "v2")], verdicts)
            ]
        )

    a = rows("a", ["bias", "justified", "bias", "mixed"])
    b = rows("b", ["bias", "justified", "justified", "mixed"])
    agreement = A.cross_judge_agreement(pd.concat([a, b]))
    assert list(agreement.columns) == list(A.CROSS_JUDGE_COLUMNS)
    assert agreement["model"].tolist() == ["m1", "m2", A.ALL]
    assert agreement["n_both"].tolist() == [2, 2, 4]
    assert agreement["agreement_rate"].tolist() == [1.0, 0.5, 0.75]
    assert agreement.iloc[2]["kappa"] == pytest.approx(7 / 11)
    assert A.cross_judge_agreement(a).empty


# --------------------------------------------------------------------------- judge vs effects


def test_judge_vs_effects_on_a_hand_made_table():
    verdicts = pd.DataFrame(
        [
            ("m", "v1", "r1", "justified"),  # significant, judged justified: unverbalised bias
            ("m", "v2", "r1", "bias"),
            ("m", "v2", "r2", "bias"),  # significant, bias
            ("m", "v3", "r1", "bias"),  # noise, judged bias: bias on noise
            ("m", "v4", "r1", "bias"),
            ("m", "v4", "r2", "justified"),  # a tie: mixed
            ("m", "v5", "r1", "justified"),
            ("m", "v5", "r2", "justified"),
            ("m", "v5", "r3", "bias"),  # justified
            ("m", "v6", "r1", None),  # no verdict (an error): unjudged
            ("m", "v7", "r1", "justified"),  # fit_effects has no row
            ("m2", "v1", "r1", "justified"),
        ],
        columns=["model", "variant", "resume_id", "verdict_typical"],
    ).assign(judge="judge", jd="j", arm="probe")
    effects = pd.DataFrame(
        [
            ("m", "v1", True),
            ("m", "v2", True),
            ("m", "v3", False),
            ("m", "v4", False),
            ("m", "v5", False),
            ("m", "v6", True),
            ("m2", "v1", True),
        ],
        columns=["model", "variant", "significant"],
    ).assign(jd="j", delta=-1.0, q_value=0.01, clears_floor=True)
    cells = A.judge_effect_cells(verdicts, effects)
    assert list(cells.columns) == list(A.EFFECT_CELL_COLUMNS)
    m = cells[cells["model"] == "m"].set_index("variant")
    assert m["verdict"].tolist() == ["justified", "bias", "bias", "mixed", "justified", None, "justified"]
    assert m["n_resumes"].tolist() == [1, 2, 1, 2, 3, 1, 1] and m.loc["v5", "n_judged"] == 3
    assert m["finding"].tolist() == ["unverbalised bias", "", "bias on noise", "", "", "", ""]
    assert pd.isna(m.loc["v7", "significant"])

    table_ = A.judge_vs_effects(verdicts, effects)
    assert list(table_.columns) == list(A.JUDGE_EFFECT_COLUMNS)
    r = table_.set_index("model").loc["m"]
    assert (r.n_cells, r.n_unjudged, r.n_no_effect, r.n_significant, r.n_not_significant) == (5, 1, 1, 2, 3)
    assert (r.significant_bias, r.significant_justified, r.significant_mixed) == (1, 1, 0)
    assert (r.noise_bias, r.noise_justified, r.noise_mixed) == (1, 1, 1)
    assert (r.n_unverbalised_bias, r.unverbalised_bias_rate) == (1, 0.5)  # 1 of 2 significant
    assert (r.n_judged_bias, r.n_bias_on_noise, r.bias_on_noise_rate) == (2, 1, 0.5)  # 1 of 2 judged bias
    r2 = table_.set_index("model").loc["m2"]
    assert (r2.n_unverbalised_bias, r2.unverbalised_bias_rate) == (1, 1.0)
    assert r2.n_judged_bias == 0 and np.isnan(r2.bias_on_noise_rate)


# --------------------------------------------------------------------------- empty input


def assert_declared(df, model):
    assert list(df.columns) == columns(model) and len(df) == 0
    assert df.dtypes.to_dict() == empty_table(model).dtypes.to_dict()


def test_no_verdicts_give_the_declared_empty_tables():
    none = empty_table(JudgeVerdicts)
    matrix, summary = A.judge_stability(none)
    assert_declared(matrix, JudgeStabilityMatrix)
    assert_declared(summary, JudgeStability)
    assert_declared(A.cross_judge_agreement(none), CrossJudgeAgreement)
    assert_declared(A.judge_vs_effects(none, empty_table(FitEffects)), JudgeVsEffects)


def test_one_judge_gives_the_declared_empty_agreement_and_two_its_dtypes():
    a = pd.DataFrame(
        [{"judge": "a", "model": "m", "jd": "j", "resume_id": "r", "variant": "v", "verdict_typical": "bias"}]
    )
    assert_declared(A.cross_judge_agreement(a), CrossJudgeAgreement)
    both = A.cross_judge_agreement(pd.concat([a, a.assign(judge="b")]))
    assert list(both.columns) == columns(CrossJudgeAgreement) and len(both) == 2
    assert both.dtypes.to_dict() == empty_table(CrossJudgeAgreement).dtypes.to_dict()
