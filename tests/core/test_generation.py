import re
import shutil

import pytest
import yaml

from resumebias_dagster.catalog import PACKAGED_DIR, CatalogError, load_yaml
from resumebias_dagster.core.diffing import tokens
from resumebias_dagster.core.generation import REFERENCE_MONTH, REFERENCE_YEAR, generate_resumes
from resumebias_dagster.core.labels import SENIORITY_LEVELS
from resumebias_dagster.core.validation import word_count

FORBIDDEN = re.compile(r"(?i)\b(junior|senior|mid|mid-level|entry[- ]level)\b")
PRONOUNS = re.compile(r"(?i)\b(he|she|his|her|hers|him|himself|herself)\b")
DATES = re.compile(r"^(.+) \| (.+) \| (\w{3}) (\d{4}) – (?:(\w{3}) (\d{4})|Present)$")
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


@pytest.fixture(scope="module")
def resumes():
    return generate_resumes()


def test_counts_columns_and_types(resumes):
    assert len(resumes) == 120
    assert resumes["seniority"].value_counts().to_dict() == {"junior": 40, "mid": 40, "senior": 40}
    assert set(resumes["seniority"]) == set(SENIORITY_LEVELS)
    for column in [
        "resume_id", "seniority", "occupation", "name", "first_name", "last_name", "email", "phone", "city",
        "years_experience", "employers", "degree", "school", "graduation_year", "skills", "text",
    ]:
        assert column in resumes.columns, column
    assert resumes["resume_id"].is_unique
    assert resumes["resume_id"].iloc[0] == "r0000"
    assert resumes["years_experience"].dtype == "int64"
    assert resumes["graduation_year"].dtype == "int64"


def test_same_seed_same_output_different_seed_different_output(resumes):
    again = generate_resumes()
    assert again.equals(resumes)
    assert "".join(again["text"]) == "".join(resumes["text"])
    other = generate_resumes(seed=1)
    assert (other["text"] != resumes["text"]).all()
    assert set(other["name"]) != set(resumes["name"])


def test_small_and_custom_prefix():
    df = generate_resumes(n_per_level=2, seed=5, id_prefix="t")
    assert list(df["resume_id"]) == [f"t{i:04d}" for i in range(6)]
    assert sorted(df["seniority"]) == ["junior", "junior", "mid", "mid", "senior", "senior"]


def test_occupations_are_varied_and_balanced_per_level(resumes):
    assert resumes["occupation"].nunique() >= 10
    per_level = resumes.groupby("seniority")["occupation"].nunique()
    assert (per_level >= 8).all()


def test_no_seniority_words_or_gendered_pronouns(resumes):
    for text in resumes["text"]:
        assert not FORBIDDEN.search(text), FORBIDDEN.search(text).group(0)
        assert not PRONOUNS.search(text), PRONOUNS.search(text).group(0)


def test_sections_and_layout(resumes):
    for row in resumes.itertuples():
        lines = row.text.split("\n")
        assert lines[0] == row.name == f"{row.first_name} {row.last_name}"
        assert lines[1].startswith(row.email + " | " + row.phone + " | " + row.city)
        headers = [line for line in lines if line in ("SUMMARY", "EXPERIENCE", "EDUCATION", "SKILLS")]
        assert headers == ["SUMMARY", "EXPERIENCE", "EDUCATION", "SKILLS"]
        assert sum(line.startswith("- ") for line in lines) >= 8
        assert row.degree in lines and f"{row.school} | {row.graduation_year}" in lines
        assert lines[lines.index("SKILLS") + 1] == row.skills
        assert "Present" in row.text


def test_word_counts_in_range(resumes):
    words = resumes["text"].map(word_count)
    assert 300 <= words.mean() <= 450
    assert words.min() >= 200 and words.max() <= 520


def test_seniority_is_carried_by_facts(resumes):
    years = resumes.groupby("seniority")["years_experience"].agg(["min", "max"])
    assert years.loc["junior"].tolist()[0] >= 0 and years.loc["junior", "max"] <= 2
    assert years.loc["mid", "min"] >= 3 and years.loc["mid", "max"] <= 7
    assert years.loc["senior", "min"] >= 8 and years.loc["senior", "max"] <= 20
    positions = resumes.groupby("seniority")["n_positions"].mean()
    assert positions["junior"] < positions["mid"] < positions["senior"]
    senior_text = " ".join(resumes.loc[resumes["seniority"] == "senior", "text"])
    junior_text = " ".join(resumes.loc[resumes["seniority"] == "junior", "text"])
    for cue in ("direct reports", "Hired", "Mentored", "budget"):
        assert senior_text.count(cue) > junior_text.count(cue), cue


def test_dates_match_years_of_experience(resumes):
    now = REFERENCE_YEAR * 12 + REFERENCE_MONTH - 1
    for row in resumes.itertuples():
        spans = []
        for line in row.text.split("\n"):
            m = DATES.match(line)
            if m:
                start = int(m.group(4)) * 12 + MONTHS.index(m.group(3))
                end = now if m.group(5) is None else int(m.group(6)) * 12 + MONTHS.index(m.group(5))
                spans.append((start, end))
        jobs = spans[: row.n_positions]
        assert len(jobs) == row.n_positions and jobs[0][1] == now
        assert all(later[0] == earlier[1] + 1 for later, earlier in zip(jobs, jobs[1:]))
        assert (now - jobs[-1][0] + 1) // 12 == row.years_experience
        assert row.graduation_year * 12 <= jobs[-1][0]


def test_email_and_slug_derive_from_the_name(resumes):
    for row in resumes.itertuples():
        local = row.email.split("@")[0]
        assert set(tokens(local)) <= {row.first_name.lower(), row.last_name.lower(), (row.first_name + row.last_name).lower()}
        assert row.first_name.lower() in local and row.last_name.lower() in local
        if row.linkedin:
            assert row.linkedin.startswith("linkedin.com/in/") and row.linkedin in row.text
    assert resumes["name"].is_unique and resumes["email"].is_unique


def test_name_tokens_occur_only_in_name_and_contact_lines(resumes):
    pools = load_yaml("name_pools.yaml")
    people = load_yaml("people.yaml")
    every_name = {n.lower() for group in ("first_names", "last_names") for names in pools[group].values() for n in names}
    every_name |= {n.lower() for n in people["first_names"] + people["last_names"]}
    for row in resumes.itertuples():
        body = "\n".join(row.text.split("\n")[2:])
        assert not set(tokens(body)) & every_name, (row.resume_id, set(tokens(body)) & every_name)


def test_original_pool_is_disjoint_from_demographic_pools_and_large():
    pools = load_yaml("name_pools.yaml")
    people = load_yaml("people.yaml")
    demographic = {n.lower() for group in ("first_names", "last_names") for names in pools[group].values() for n in names}
    assert len(people["first_names"]) >= 60 and len(people["last_names"]) >= 60
    assert not {n.lower() for n in people["first_names"] + people["last_names"]} & demographic


def test_exclude_people_gives_disjoint_names_and_emails(resumes):
    excluded = frozenset(resumes["name"])
    train = generate_resumes(n_per_level=200, seed=1, exclude_people=excluded, id_prefix="t")
    assert len(train) == 600 and train["name"].is_unique
    assert not set(train["name"]) & excluded
    assert not set(train["email"]) & set(resumes["email"])
    # Without the exclusion these seeds do share people, so the check above can fail.
    unfiltered = generate_resumes(n_per_level=200, seed=1, id_prefix="t")
    assert set(unfiltered["name"]) & excluded


def test_too_many_people_is_refused():
    people = load_yaml("people.yaml")
    capacity = len(people["first_names"]) * len(people["last_names"])
    with pytest.raises(ValueError, match="distinct people"):
        generate_resumes(n_per_level=capacity // 3 + 1)


def test_catalog_refuses_a_name_that_is_also_an_ordinary_word(tmp_path):
    shutil.copy(PACKAGED_DIR / "people.yaml", tmp_path / "people.yaml")
    data = yaml.safe_load((tmp_path / "people.yaml").read_text())
    data["last_names"].append("Budget")
    (tmp_path / "people.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(CatalogError, match="budget"):
        generate_resumes(n_per_level=1, catalog_dir=tmp_path)


def test_user_catalog_overrides_occupations(tmp_path):
    data = yaml.safe_load((PACKAGED_DIR / "occupations.yaml").read_text())
    data["occupations"] = {"teacher": data["occupations"]["teacher"]}
    (tmp_path / "occupations.yaml").write_text(yaml.safe_dump(data))
    df = generate_resumes(n_per_level=3, catalog_dir=tmp_path)
    assert set(df["occupation"]) == {"teacher"}
