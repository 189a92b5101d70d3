import copy
import functools
import hashlib
import json
import re
import shutil

import pytest
import yaml

from resumebias_dagster.catalog import PACKAGED_DIR, CatalogError, load_yaml
from resumebias_dagster.core.common.diffing import tokens
from resumebias_dagster.core.common.labels import SENIORITY_LEVELS
from resumebias_dagster.core.jd_audit.probes import (
    check_probe_variants,
    load_probe_axes,
    probe_variants,
    select_probe_resumes,
)
from resumebias_dagster.core.providers import run_requests
from resumebias_dagster.core.resumes.layout import (
    COLUMNS,
    REFERENCE_INDEX,
    REFERENCE_MONTH,
    REFERENCE_YEAR,
)
from resumebias_dagster.core.seniority.generation import generate_resumes, occupation_labels
from resumebias_dagster.core.seniority.llm_generation import (
    GenerationError,
    ResumeAnswerError,
    generate_neutral_resumes,
    llm_base_resumes,
    resume_from_answer,
)
from resumebias_dagster.core.seniority.style_validation import word_count
from resumebias_dagster.testing import fake_providers as fp

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
        "resume_id",
        "seniority",
        "occupation",
        "name",
        "first_name",
        "last_name",
        "email",
        "phone",
        "city",
        "years_experience",
        "employers",
        "degree",
        "school",
        "graduation_year",
        "skills",
        "text",
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
        assert set(tokens(local)) <= {
            row.first_name.lower(),
            row.last_name.lower(),
            (row.first_name + row.last_name).lower(),
        }
        assert row.first_name.lower() in local and row.last_name.lower() in local
        if row.linkedin:
            assert row.linkedin.startswith("linkedin.com/in/") and row.linkedin in row.text
    assert resumes["name"].is_unique and resumes["email"].is_unique


def test_name_tokens_occur_only_in_name_and_contact_lines(resumes):
    pools = load_yaml("name_pools.yaml")
    people = load_yaml("people.yaml")
    every_name = {
        n.lower() for group in ("first_names", "last_names") for names in pools[group].values() for n in names
    }
    every_name |= {n.lower() for n in people["first_names"] + people["last_names"]}
    for row in resumes.itertuples():
        body = "\n".join(row.text.split("\n")[2:])
        assert not set(tokens(body)) & every_name, (row.resume_id, set(tokens(body)) & every_name)


def test_original_pool_is_disjoint_from_demographic_pools_and_large():
    pools = load_yaml("name_pools.yaml")
    people = load_yaml("people.yaml")
    demographic = {
        n.lower() for group in ("first_names", "last_names") for names in pools[group].values() for n in names
    }
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


# --------------------------------------------------------------------------- one renderer

# sha256 of the texts ("\x00"-joined) and of the CSV of generate_resumes(), taken before the
# renderer was factored out of the template: the template's output stayed byte-identical.
# A deliberate change of the generator or its catalog updates them.
TEMPLATE_HASHES = {
    (40, 0): (
        "5e4155ea0e4abd76253acaa0616dbb1ba3b404e410ec963405920c6c6e818dd2",
        "8201b2b164ba1477050b1bc94c3f64b6722dcac6a7047724941650aabdac2818",
    ),
    (5, 7): (
        "793620b7c5fde397a052b20b4c0414c413b72449800b4b1e3c29231c94a61965",
        "c57354312870926fe0f1875e2a9cdff567ba780e7094c915ecec8a8cde3ed450",
    ),
}


@pytest.mark.parametrize("n_per_level, seed", sorted(TEMPLATE_HASHES))
def test_template_output_is_unchanged_by_the_shared_renderer(n_per_level, seed):
    df = generate_resumes(n_per_level=n_per_level, seed=seed)
    texts = hashlib.sha256("\x00".join(df["text"]).encode()).hexdigest()
    table = hashlib.sha256(df.to_csv(index=False).encode()).hexdigest()
    assert (texts, table) == TEMPLATE_HASHES[n_per_level, seed]


# --------------------------------------------------------------------------- structured answers

OCCUPATIONS = frozenset(occupation_labels())


def _answer(level="mid", occupation="software_engineer", person=1):
    return fp.structured_resume(level, person, occupation, REFERENCE_INDEX)


def _read(answer, level="mid"):
    return resume_from_answer(answer, resume_id="g0007", seniority=level, occupations=OCCUPATIONS)


def test_a_structured_answer_becomes_a_row_of_the_offline_generator_columns():
    answer = _answer("senior")
    row = _read(answer, "senior")
    assert list(row) == COLUMNS
    assert row["name"] == answer["name"] and row["first_name"] + " " + row["last_name"] == answer["name"]
    assert row["occupation"] == "software_engineer" and row["n_positions"] == 4
    assert row["graduation_year"] == answer["education"][0]["year"]
    lines = row["text"].split("\n")
    assert lines[1] == f"{row['email']} | {row['phone']} | {row['city']}" + (
        f" | {row['linkedin']}" if row["linkedin"] else ""
    )
    newest = answer["positions"][0]
    assert newest["title"] in lines and f"{newest['employer']} | {newest['city']} | " in row["text"]
    assert f"{row['years_experience']} years of professional experience" in row["text"]


def _set(path, value):
    def edit(answer):
        *parents, last = path
        target = answer
        for key in parents:
            target = target[key]
        if value is KeyError:
            del target[last]
        else:
            target[last] = value(answer) if callable(value) else value

    return edit


def _months_before(answer, i, months):
    """'YYYY-MM' ``months`` before the start of position ``i``."""
    year, month = map(int, answer["positions"][i]["start"].split("-"))
    index = year * 12 + month - 1 - months
    return f"{index // 12}-{index % 12 + 1:02d}"


MALFORMED = {
    "missing field": (_set(["education"], KeyError), r"^education: missing$"),
    "missing nested field": (_set(["positions", 0, "employer"], KeyError), r"^positions\[0\]\.employer: missing$"),
    "end before start": (
        _set(["positions", 1, "end"], lambda a: _months_before(a, 1, 1)),
        r"^positions\[1\]\.end: '\d{4}-\d\d' is before the start '\d{4}-\d\d'$",
    ),
    "unknown occupation": (
        _set(["occupation"], "astronaut"),
        r"^occupation: 'astronaut' is not a catalog occupation; one of \[.*'software_engineer'",
    ),
    "date after the reference month": (
        _set(["positions", 0, "start"], "2025-09"),
        r"^positions\[0\]\.start: '2025-09' is after the reference month 2025-06$",
    ),
    "date not YYYY-MM": (
        _set(["positions", 1, "start"], "March 2019"),
        r"^positions\[1\]\.start: 'March 2019' is not a month 'YYYY-MM'$",
    ),
    "level word": (
        _set(["positions", 0, "title"], "Senior Software Engineer"),
        r"^positions\[0\]\.title: uses the level word 'Senior'",
    ),
    "other seniority": (_set(["seniority"], "senior"), r"^seniority: 'senior', but the prompt asked for 'mid'$"),
    "unknown field": (_set(["hobbies"], ["chess"]), r"^hobbies: unknown field"),
    "year not a number": (_set(["education", 0, "year"], "2016"), r"^education\[0\]\.year: '2016' is not a year"),
    "name in a bullet": (
        _set(["positions", 0, "bullets", 0], lambda a: f"Mentored by {a['name'].split()[1]}'s team."),
        r"^positions\[0\]\.bullets\[0\]: mentions the candidate's name",
    ),
    "employer in the summary": (
        _set(["summary"], lambda a: f"Engineer at {a['positions'][0]['employer']}."),
        r"^summary: names the employer '.+'; it belongs on its own line only$",
    ),
    "years stated otherwise": (
        _set(["summary"], "Engineer with 8+ years of experience."),
        r"^summary: states '8\+ years'; write the years as 'N years of professional experience'$",
    ),
    "two fields in one": (
        _set(["positions", 0, "employer"], "Acme | Remote"),
        r"^positions\[0\]\.employer: contains '\|'",
    ),
    # The parser reads headers in any case ("Experience:"), so a line like one is refused too.
    "a section header": (
        _set(["positions", 0, "bullets", 0], "Experience:"),
        r"^positions\[0\]\.bullets\[0\]: 'Experience:' is a section header of the layout$",
    ),
    "not newest first": (
        lambda a: a["positions"].reverse(),
        r"^positions\[1\]: .* must end before positions\[0\] starts .*newest first",
    ),
    "an unexplained gap": (
        _set(["positions", 1, "end"], lambda a: _months_before(a, 0, 3)),
        r"^timeline: unexplained gap of 2 months between",
    ),
    "too many positions": (
        lambda a: a["positions"].extend(copy.deepcopy(a["positions"][-1:]) * 4),
        r"^positions: has 6 entries; at most 5$",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_answer_names_the_field(case):
    edit, message = MALFORMED[case]
    answer = _answer()
    edit(answer)
    with pytest.raises(ResumeAnswerError) as caught:
        _read(answer)
    assert re.search(message, str(caught.value)), str(caught.value)


def test_an_answer_that_is_not_an_object_is_refused():
    with pytest.raises(ResumeAnswerError, match=r"^answer: must be a JSON object, got a list$"):
        _read([])


@pytest.fixture
def structured(fake_server, settings_for, store, fake_key):
    server = fake_server("openai", answer=fp.structured_resume_answers())
    return server, functools.partial(
        run_requests, settings_for("openai", server.base_url, max_concurrency=1), store=store
    )


def test_generated_resumes_feed_every_probe_axis_without_problems(structured):
    from resumebias_dagster.schemas import BaseResumes

    server, run = structured
    base, stats = llm_base_resumes(run, n_per_level=2)
    BaseResumes.validate(base)
    assert list(base.columns) == COLUMNS and base["seniority"].tolist() == ["junior", "mid", "senior"] * 2
    assert stats.calls_made == 6 == server.count  # one call per résumé: the facts come with it
    assert all(r.body["response_format"] == {"type": "json_object"} for r in server.requests)
    prompt = server.requests[0].prompt
    assert prompt.startswith("Generate a complete, realistic resume for a junior-level professional.")
    assert "software_engineer (Software Engineer)" in prompt and "Today is 2025-06" in prompt
    arm = select_probe_resumes(base, "software_engineer", SENIORITY_LEVELS, per_level=1)
    assert arm["seniority"].tolist() == ["junior", "mid", "senior"]
    configured = {(a.id, level) for a in load_probe_axes().axes for level in a.levels}
    for chosen in (arm, base):  # the default arm's occupation, and every generated résumé
        variants = probe_variants(chosen)
        for resume_id, rows in variants[variants["variant"] != "baseline"].groupby("resume_id"):
            assert set(zip(rows["axis"], rows["level"])) == configured, resume_id
        problems = check_probe_variants(variants)
        assert problems.empty, problems.head().to_string()


def test_a_malformed_answer_is_drawn_again_and_stays_in_the_store(structured):
    server, run = structured
    bad = _answer("junior")
    bad["occupation"] = "astronaut"
    server.script(fp.answer(json.dumps(bad)))
    rows, _ = generate_neutral_resumes(run, n_per_level=1)
    assert rows["error"].isna().all() and rows["draws"].tolist() == [2, 1, 1]
    calls = server.count
    again, _ = generate_neutral_resumes(run, n_per_level=1)
    assert server.count == calls == 4  # the refused answer was stored before it was read
    assert again.drop(columns="resolved_model").equals(rows.drop(columns="resolved_model"))


@pytest.mark.parametrize(
    "reply, message",
    [
        (lambda a: a["positions"][0].pop("bullets"), r"g0000: invalid_resume: positions\[0\]\.bullets: missing"),
        (
            lambda a: a.update(occupation="astronaut"),
            r"g0000: invalid_resume: occupation: 'astronaut' is not a catalog",
        ),
        (None, r"g0000: unparsable: "),
    ],
)
def test_an_answer_failing_every_draw_is_an_error_row_and_a_clear_refusal(structured, reply, message):
    server, run = structured
    bad = _answer("junior", person=0)
    text = "Here is the resume: {name: Rowan" if reply is None else (reply(bad), json.dumps(bad))[1]
    server.script(fp.answer(text))
    rows, _ = generate_neutral_resumes(run, n_per_level=1, max_attempts=1)
    failed = rows[rows["error"].notna()]
    assert failed["resume_id"].tolist() == ["g0000"] and failed[["name", "text"]].isna().all().all()
    assert re.search(message, f"g0000: {failed['error'].iloc[0]}")
    with pytest.raises(
        GenerationError, match=r"generated résumés: 1 of 3 unusable after 1 draw\(s\) each, e\.g\. " + message
    ):
        llm_base_resumes(run, n_per_level=1, max_attempts=1)
