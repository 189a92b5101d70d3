"""Validity pairs (issue 42) on real résumés of the generator and of the user-résumé corpus: every
twin one signal away from its set's baseline, its direction the job description's requirements,
equal twins in every set, one name a set; an edit a résumé cannot take says why."""

import re

import pandas as pd
import pytest

from resumebias_dagster.core.common.diffing import changed_tokens, tokens
from resumebias_dagster.core.jd_audit.job_descriptions import JobRequirements, load_job_requirements
from resumebias_dagster.core.jd_audit.probes import load_probe_axes, select_probe_resumes
from resumebias_dagster.core.jd_audit.validity import (
    ARM,
    check_validity_pairs,
    skip_summary,
    twin_problems,
    validity_pairs,
)
from resumebias_dagster.core.jd_audit.validity.edits import add_skill, add_years, mentions
from resumebias_dagster.core.jd_audit.validity.pairs import PAIR_COLUMNS
from resumebias_dagster.core.resumes.reader import read_resume
from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.core.tables import ValidityPairs
from resumebias_dagster.testing.resume_corpus import corpus

STAFF = "staff-software-engineer"
GROUPS = ["white_male", "black_female"]
POOLS = next(a for a in load_probe_axes().axes if a.edit == "person_name").levels
YEARS = re.compile(r"(\d+) years? of professional experience|less than one year of professional experience")


@pytest.fixture(scope="module")
def base():
    # The default design's résumés: 3 software engineers a level of the generator's seed 0.
    return select_probe_resumes(generate_resumes(n_per_level=40, seed=0))


@pytest.fixture(scope="module")
def requirements():
    return load_job_requirements()


@pytest.fixture(scope="module")
def built(base, requirements):
    jds = {jd: requirements[jd] for jd in (STAFF, "principal-performance-architect", "junior-java-developer")}
    return validity_pairs(base, jds, GROUPS)


def _years(text: str) -> int:
    m = YEARS.search(text)
    return int(m.group(1)) if m and m.group(1) else 0


def _twin(pairs, jd, resume_id, variant):
    rows = pairs[(pairs["jd"] == jd) & (pairs["resume_id"] == resume_id)].set_index("variant")
    return rows.loc[variant.split(":")[0] + ":baseline"], rows.loc[variant]


def test_every_twin_changes_one_signal_and_the_table_is_valid(built, requirements):
    pairs, skipped = built
    ValidityPairs.validate(pairs)
    assert list(pairs.columns) == PAIR_COLUMNS
    assert (pairs["arm"] == ARM).all()
    assert not skipped["reason"].str.startswith("dropped").any()
    assert check_validity_pairs(pairs, requirements).empty
    roles = set(pairs["role"])
    assert roles == {"baseline", "better", "worse", "equal"}
    assert set(pairs["edit"]) >= {"skill", "years", "degree", "reorder", "blank_line"}


def test_a_bad_edit_is_caught_by_the_check_and_dropped_by_the_builder(built, requirements):
    pairs, _ = built
    tampered = pairs.copy()
    row = tampered.index[(tampered["jd"] == STAFF) & (tampered["variant"] == "white_male:better:skill")][0]
    text = tampered.at[row, "text"]
    # A second signal slipped into the skill twin: the employer of the current role renamed.
    employer = read_resume(text).positions[0].employer
    tampered.at[row, "text"] = text.replace(employer, "Globex Corporation")
    problems = check_validity_pairs(tampered, requirements)
    assert set(problems["variant"]) == {"white_male:better:skill"}
    assert problems["problem"].str.contains("tokens changed outside the signal").any()
    assert problems["problem"].str.contains("not the edit of the set's baseline").any()
    # The builder's own check: a twin whose text differs from its signal beyond the skill is refused.
    baseline = pairs.at[pairs.index[(pairs["jd"] == STAFF) & (pairs["variant"] == "white_male:baseline")][0], "text"]
    layout = read_resume(baseline)
    twin = add_skill(layout, requirements[STAFF])
    bad = twin.signal.text.replace("SUMMARY", "PROFILE")
    assert any("outside the signal" in p for p in twin_problems(baseline, layout, twin, bad, "skill"))
    assert twin_problems(baseline, layout, twin, twin.signal.text, "skill") == []


def test_the_direction_follows_the_job_description(built, requirements):
    pairs, _ = built
    staff = requirements[STAFF]
    required = {s.lower() for alternatives in staff.required_skills for s in alternatives}
    twins = pairs[(pairs["jd"] == STAFF) & (pairs["role"] != "baseline")]
    for row in twins.itertuples():
        base, twin = _twin(pairs, STAFF, row.resume_id, row.variant)
        removed, added = changed_tokens(base["text"], twin["text"])
        if row.edit == "skill" and row.role == "better":
            skill = row.detail.split("adds ", 1)[1].split(" (")[0]
            assert skill.lower() in required and not mentions(skill, base["text"]) and mentions(skill, twin["text"])
        if row.edit == "years":
            assert (_years(twin["text"]) > _years(base["text"])) == (row.role == "better")
            assert (
                _years(base["text"]) < staff.min_years
                if row.role == "better"
                else _years(twin["text"]) < staff.min_years
            )
    # A skill the résumé lists once, required: the worse twin takes it out; one it lacks, the better adds.
    resume = pairs[(pairs["jd"] == STAFF) & (pairs["variant"] == "white_male:baseline")].iloc[0]
    lines = resume["text"].split("\n")
    skills = lines[lines.index("SKILLS") + 1].split(", ")
    listed_once = next(s for s in skills if mentions(s, resume["text"]) == 1)
    own = pd.DataFrame({"resume_id": [resume["resume_id"]], "text": [resume["text"]]})
    req = JobRequirements(required_skills=((listed_once,), ("Haskell",)), min_years=None, degree="master")
    mine, skipped = validity_pairs(own, {"own": req}, ["white_male"])
    by = mine.set_index("variant")
    assert f"removes {listed_once} (required)" == by.loc["white_male:worse:skill", "detail"]
    assert by.loc["white_male:better:skill", "detail"] == "adds Haskell (required)"
    assert "the job description states no minimum years of experience" in set(
        skipped.loc[skipped["edit"] == "years", "reason"]
    )


def test_the_degree_moves_towards_the_level_the_job_description_asks(built):
    pairs, skipped = built
    jd = "principal-performance-architect"  # asks a master's degree
    degrees = pairs[(pairs["jd"] == jd) & (pairs["edit"] == "degree")]
    assert set(degrees["role"]) == {"better", "worse"}
    for row in degrees.itertuples():
        base, twin = _twin(pairs, jd, row.resume_id, row.variant)
        removed, added = changed_tokens(base["text"], twin["text"])
        assert (removed, added) == ((["b"], ["m"]) if row.role == "better" else (["m"], ["b"]))
    # junior-java-developer asks a bachelor's: no résumé goes below one, and none needs more.
    java = skipped[(skipped["jd"] == "junior-java-developer") & (skipped["edit"] == "degree")]
    assert not len(pairs[(pairs["jd"] == "junior-java-developer") & (pairs["edit"] == "degree")])
    assert java["reason"].str.contains("already meets|still meet|no degree one level").all()


def test_every_set_has_equal_twins_and_carries_one_name_of_its_group(built):
    pairs, _ = built
    for (_, _, group), rows in pairs.groupby(["jd", "resume_id", "group"]):
        assert (rows["role"] == "baseline").sum() == 1
        assert {"reorder", "blank_line"} <= set(rows.loc[rows["role"] == "equal", "edit"])
        (name,) = rows["name"].unique()
        assert name in POOLS[group]
        assert all(set(tokens(name)) <= set(tokens(t)) for t in rows["text"])
        assert all(v.startswith(f"{group}:") for v in rows["variant"])
    reorder = pairs[pairs["edit"] == "reorder"].iloc[0]
    assert reorder["detail"].startswith("swaps ")


def test_a_job_description_without_requirements_says_which_edits_it_cannot_make(base):
    pairs, skipped = validity_pairs(base.head(2), {"bare": JobRequirements()}, ["white_male"])
    assert set(pairs.loc[pairs["role"] != "baseline", "edit"]) == {"reorder", "blank_line"}
    reasons = skip_summary(skipped, ["white_male"])
    said = dict(zip(reasons["edit"], reasons["reason"]))
    assert said["skill"] == "the job description states no required or preferred skills"
    assert said["years"] == "the job description states no minimum years of experience"
    assert said["degree"] == "the job description states no degree"
    assert set(reasons["group"]) == {"all"}


def test_user_resumes_say_per_resume_which_edit_they_cannot_take(requirements):
    found = corpus(1, layouts=["comma_title_txt", "no_education_txt"])
    texts = [r.data.decode() for r in found]
    # A third résumé without its skills section.
    texts.append(texts[0].split("\nSkills\n")[0] + "\n")
    base = pd.DataFrame({"resume_id": ["u-txt", "u-noedu", "u-noskills"], "text": texts})
    req = JobRequirements(required_skills=(("Kubernetes",), ("SQL",)), min_years=8, degree="master")
    pairs, skipped = validity_pairs(base, {"mine": req}, ["white_female"])
    assert check_validity_pairs(pairs, {"mine": req}).empty
    why = {(r.resume_id, r.role, r.edit): r.reason for r in skipped.itertuples()}
    assert why[("u-noedu", "better", "degree")].startswith("no degree found in an Education section")
    assert why[("u-noskills", "better", "skill")].startswith("no skills found in a skills section")
    assert why[("u-noskills", "equal", "reorder")].startswith("no skills found")
    txt = pairs[pairs["resume_id"] == "u-txt"].set_index("variant")
    assert txt.loc["white_female:better:skill", "detail"] == "adds Kubernetes (required)"
    assert txt.loc["white_female:better:degree", "detail"].startswith("B.S. -> M.S.")
    # Year-only dates ("2021–2024") move as written: the twin keeps the timeline's form.
    assert "white_female:better:years" in txt.index
    assert re.search(r"\(20\d\d–Present\)", txt.loc["white_female:better:years", "text"])


def test_an_unknown_group_is_refused(base, requirements):
    with pytest.raises(ValueError, match=r"'martian' is not a level of the name axis 'firstName'"):
        validity_pairs(base.head(1), {STAFF: requirements[STAFF]}, ["martian"])


def test_twin_problems_reports_a_timeline_the_baseline_lacks(built, requirements):
    pairs, _ = built
    resume_id = pairs.loc[(pairs["jd"] == STAFF) & (pairs["edit"] == "years"), "resume_id"].iloc[0]
    base, _ = _twin(pairs, STAFF, resume_id, "white_male:better:years")
    layout = read_resume(base["text"])
    twin = add_years(layout, requirements[STAFF])
    # The twin with the current role's start put back: the older history moved, the role did not.
    moved = read_resume(twin.signal.text).positions[0].dates
    wrong = twin.signal.text.replace(moved, layout.positions[0].dates, 1)
    problems = twin_problems(base["text"], layout, twin, wrong, "years")
    assert any(p.startswith("timeline: unexplained gap") for p in problems)
    assert twin_problems(base["text"], layout, twin, twin.signal.text, "years") == []
