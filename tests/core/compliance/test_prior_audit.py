"""Local Law 144 over time (issue 44): the published summary is produced from an audit snapshot,
states that audit's date and the date by which the next is due (a bias audit within one year
before use, §5-301), and gives the prior audit's rates and impact ratios beside this one's."""

import json

import numpy as np
import pytest

from resumebias_dagster.core.compliance.summary import (
    AuditSnapshot,
    DataSource,
    audit_summary,
    bias_audit_rates,
    summary_csv,
    summary_json,
    with_prior,
)
from resumebias_dagster.core.tables import BiasAuditSummary
from tests.core.compliance.test_ll144 import GROUPS, hand_scores, seniority_frame

SOURCE = DataSource(generator="offline template generator", generator_seed=0, n_base_resumes=12)


def _rates(penalty: float = 0.0):
    scores = hand_scores()
    scores.loc[scores["level"] == "bf", "score"] -= penalty
    seniority = seniority_frame().assign(model="e")  # another tool
    rates, problems = bias_audit_rates({"jd_audit": scores, "seniority": seniority}, groups=GROUPS)
    assert not problems
    return rates


def _row(t, study, dimension, category, outcome="above_median"):
    hit = t[(t["study"] == study) & (t["dimension"] == dimension) & (t["category"] == category)]
    hit = hit[hit["outcome"] == outcome]
    assert len(hit) == 1
    return hit.iloc[0]


def test_each_rate_has_the_prior_audits_beside_it():
    before, now = _rates(), _rates(penalty=3)
    both = with_prior(now, before)
    assert len(both) == len(now) and list(both.columns[: len(now.columns)]) == list(now.columns)
    black = _row(both, "jd_audit", "race_ethnicity", "Black or African American")
    was = _row(before, "jd_audit", "race_ethnicity", "Black or African American")
    assert black["prior_impact_ratio"] == pytest.approx(was["impact_ratio"])
    assert black["prior_rate"] == pytest.approx(was["rate"]) and black["prior_n"] == was["n"]
    assert black["impact_ratio"] < black["prior_impact_ratio"]  # the penalty lowered it
    # A category the prior audit had no row for, or no prior audit at all: no prior figures.
    only_fit = with_prior(now, before[before["study"] == "jd_audit"])
    assert only_fit.loc[only_fit["study"] == "seniority", "prior_rate"].isna().all()
    alone = with_prior(now, None)
    assert alone["prior_impact_ratio"].isna().all() and alone["prior_n"].isna().all()


def test_the_summary_states_the_snapshots_date_the_due_date_and_the_prior_audit():
    rates = _rates()
    audits = {
        "e": AuditSnapshot("e@20261201T100000+0000-aaaa", "2026-12-01", "e@20251203T100000+0000-bbbb", "2025-12-03"),
        "m": AuditSnapshot("m@20240229T100000+0000-cccc", "2024-02-29"),
    }
    summary = BiasAuditSummary.validate(audit_summary(rates, audit_date="2026-12-03", source=SOURCE, snapshots=audits))
    by = summary.set_index("model")
    # The audit's date is its snapshot's, not the day the summary was written.
    e = by.loc["e"]
    assert (e["audit_date"], e["snapshot_id"]) == ("2026-12-01", "e@20261201T100000+0000-aaaa")
    assert (e["prior_audit_date"], e["audit_due_by"]) == ("2025-12-03", "2027-12-01")
    m = by.loc["m"]
    assert (m["audit_date"], m["prior_snapshot_id"], m["prior_audit_date"]) == ("2024-02-29", "", "")
    assert m["audit_due_by"] == "2025-02-28"  # a year after 29 February
    # A model no snapshot holds: the date given, no snapshot named.
    others = audit_summary(rates, audit_date="2026-12-03", source=SOURCE)
    assert set(others["audit_date"]) == {"2026-12-03"} and set(others["snapshot_id"]) == {""}


def test_the_published_files_carry_the_prior_figures():
    before, now = _rates(), _rates(penalty=3)
    audits = {"m": AuditSnapshot("m@2", "2026-12-01", "m@1", "2025-12-03")}
    summary = audit_summary(now, audit_date="2026-12-03", source=SOURCE, snapshots=audits)
    both = with_prior(now, before)
    doc = json.loads(json.dumps(summary_json(summary, both)))
    fit = next(a for a in doc["audits"] if a["model"] == "m" and a["study"] == "jd_audit")
    assert (fit["prior_audit_date"], fit["prior_snapshot_id"], fit["audit_due_by"]) == (
        "2025-12-03",
        "m@1",
        "2026-12-01".replace("2026", "2027"),
    )
    row = next(
        r for r in fit["rates"] if r["category"] == "Black or African American" and r["measure"] == "scoring_rate"
    )
    assert row["prior_impact_ratio"] == pytest.approx(
        _row(before, "jd_audit", "race_ethnicity", "Black or African American")["impact_ratio"]
    )
    flat = summary_csv(summary, both)
    assert {"prior_n", "prior_rate", "prior_impact_ratio", "prior_audit_date"} <= set(flat.columns)
    assert np.isfinite(flat["prior_impact_ratio"]).any()


def test_an_audit_date_that_is_not_a_date_is_refused_naming_the_model():
    with pytest.raises(ValueError, match=r"LL144 summary, model 'm': audit date '2026-13-01' is not a date"):
        audit_summary(
            _rates(), audit_date="2026-12-03", source=SOURCE, snapshots={"m": AuditSnapshot("m@1", "2026-13-01")}
        )
    with pytest.raises(ValueError, match=r"LL144 summary: audit date 'today' is not a date \(YYYY-MM-DD\)"):
        audit_summary(_rates(), audit_date="today", source=SOURCE)
