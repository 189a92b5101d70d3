"""Train/test separation: a classifier must never see an evaluation résumé or person."""

from __future__ import annotations

import pandas as pd


def shared_with_evaluation(train: pd.DataFrame, evaluation: pd.DataFrame) -> dict[str, list[str]]:
    """Values the training set shares with the evaluation résumés, per kind of overlap.

    Texts are compared after whitespace normalisation so a reformatted copy still counts.
    """

    def norm_text(s: pd.Series) -> pd.Series:
        return s.str.split().str.join(" ").str.lower()

    def norm(s: pd.Series) -> pd.Series:
        return s.str.strip().str.lower()

    shared = {
        "resume_id": sorted(set(train["resume_id"]) & set(evaluation["resume_id"])),
        "text": sorted(set(norm_text(train["text"])) & set(norm_text(evaluation["text"]))),
        "name": sorted(set(norm(train["name"])) & set(norm(evaluation["name"]))),
        "email": sorted(set(norm(train["email"])) & set(norm(evaluation["email"]))),
    }
    shared["text"] = [t[:60] + "..." for t in shared["text"]]
    return {k: v for k, v in shared.items() if v}
