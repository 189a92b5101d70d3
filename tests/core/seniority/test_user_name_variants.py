"""The seniority study's name test on the user's own résumés: a résumé whose name cannot be
swapped is skipped with its reason (``name_variants_skipping``), the others go on unchanged."""

import pandas as pd
import pytest

from resumebias_dagster.core.common.labels import DEMOGRAPHICS
from resumebias_dagster.core.resumes.user_files import read_resume_folder
from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.core.seniority.names import (
    SKIPPED_COLUMNS,
    name_variants,
    name_variants_skipping,
    variant_problems,
)
from resumebias_dagster.testing.resume_files import FREE_FORM_RESUME, write

# The middle initial keeps "Doe" of the e-mail address out of replace_person's reach.
JANE = FREE_FORM_RESUME


@pytest.fixture(scope="module")
def generated():
    return generate_resumes(1, seed=3)


@pytest.fixture
def user_rows(tmp_path, generated):
    """Three user résumés read from files: two generated texts and Jane, labelled."""
    write(tmp_path / "a.txt", generated["text"].iloc[0])
    write(tmp_path / "jane.md", JANE)
    write(tmp_path / "c.txt", generated["text"].iloc[2])
    write(tmp_path / "labels.csv", "file,seniority\na.txt,junior\njane.md,mid\nc.txt,senior\n")
    rows, problems = read_resume_folder(tmp_path)
    assert problems == []
    return rows.sort_values("source").reset_index(drop=True)  # a.txt, c.txt, jane.md


def test_a_refused_swap_skips_the_resume_and_says_why(user_rows):
    df, skipped = name_variants_skipping(user_rows, seed=1)
    jane = user_rows.loc[user_rows["source"] == "jane.md", "resume_id"].iloc[0]
    assert list(skipped.columns) == SKIPPED_COLUMNS
    assert skipped["resume_id"].tolist() == [jane] and skipped["original_idx"].tolist() == [2]
    reason = skipped["reason"].iloc[0]
    assert reason.startswith(f"{DEMOGRAPHICS[0]} (")
    assert reason.endswith("'doe' of the name 'Jane Q. Doe' is still in the text after replacement")
    assert set(df["resume_id"]) == set(user_rows["resume_id"]) - {jane}
    assert df.groupby("original_idx").size().to_dict() == {0: 4, 1: 4}
    assert variant_problems(df) == []
    # The name found in the file is the one replaced.
    first = user_rows.iloc[0]
    assert not df.loc[df["original_idx"] == 0, "text"].str.contains(first["last_name"]).any()
    assert (df.loc[df["original_idx"] == 0, "seniority"] == "junior").all()


def test_without_skipping_the_refusal_still_stops_the_table(user_rows):
    with pytest.raises(ValueError, match=r"name_variants: résumé u-\w+ \(caucasian_male\): 'doe' of the name"):
        name_variants(user_rows, seed=1)


def test_a_skipped_resume_draws_its_names_so_the_others_keep_theirs(user_rows, generated):
    # Jane's file replaced by one that swaps cleanly: the other résumés get the same names.
    clean = user_rows.copy()
    clean.loc[clean["source"] == "jane.md", ["text", "first_name", "last_name"]] = [
        generated["text"].iloc[1],
        generated["first_name"].iloc[1],
        generated["last_name"].iloc[1],
    ]
    skipping, _ = name_variants_skipping(user_rows, seed=5)
    everyone = name_variants(clean, seed=5)
    assert skipping.equals(everyone[everyone["original_idx"] < 2].reset_index(drop=True))


def test_generated_resumes_get_the_same_table_either_way(generated):
    df, skipped = name_variants_skipping(generated, seed=2, scope="first_line")
    assert skipped.empty and list(skipped.columns) == SKIPPED_COLUMNS
    assert df.equals(name_variants(generated, seed=2, scope="first_line"))
    assert pd.api.types.is_integer_dtype(skipped["original_idx"])
