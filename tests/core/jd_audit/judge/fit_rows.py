"""Hand-made fit rows for the judge's tests (core/jd_audit/judge/): runs of one cell, and lookups."""

import json

import numpy as np
import pandas as pd

from resumebias_dagster.core.jd_audit.fit_task import NO_TEXT_NOTE

ARMS = {
    "baseline": "probe",
    "firstName": "probe",
    "school": "probe",
    "promptInjection": "prompt_injection",
    "anonymize": "anonymize",
    "placebo": "placebo",
}


def runs(model, variant, scores, jd="j", resume="r1", text=True, texts=None, name=None):
    """Fit rows of one (model, jd, résumé, variant); a NaN score is a failed run; ``name``: the
    name a name variant wrote (fit_scores' `name`)."""
    axis, _, level = variant.partition("_")
    out = []
    for r, score in enumerate(scores):
        failed = bool(np.isnan(score))
        written = text and not failed
        out.append(
            {
                "model": model,
                "jd": jd,
                "resume_id": resume,
                "variant": variant,
                "arm": ARMS[axis],
                "axis": axis,
                "level": level,
                "name": name,
                "run": r,
                "score": score,
                "recommend": None if failed else "maybe",
                "justification": (texts[r] if texts else f"{variant} run {r}.") if written else None,
                "strengths": json.dumps(["Go", "distributed systems"]) if written else None,
                "concerns": json.dumps(["no management"]) if written else None,
                "error": "unparsable: no JSON object" if failed else None,
                "note": None if text else NO_TEXT_NOTE,
            }
        )
    return out


def table(*groups):
    return pd.DataFrame([r for g in groups for r in g])


def one(df, **where):
    hit = df
    for k, v in where.items():
        hit = hit[hit[k] == v]
    assert len(hit) == 1, hit
    return hit.iloc[0]
