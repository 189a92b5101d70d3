"""The judge's requests (core/jd_audit/judge/requests.py): templates, the change in words, each
evaluation as one line of JSON data."""

import json

import pytest

from resumebias_dagster.core.jd_audit import judge as A
from resumebias_dagster.core.jd_audit.probes import load_probe_axes
from tests.core.jd_audit.judge.fit_rows import runs, table


def test_requests_describe_the_change_and_share_one_request_when_samples_coincide():
    df = table(
        runs("m", "baseline", [7, 6, 8]),
        runs("m", "firstName_black_male", [5, 7, 6], name="Darnell Washington"),
        runs("m", "promptInjection_explicit", [9, 9, 9]),
        runs("m", "anonymize_all", [6, 6, 6]),
        runs("m", "placebo_blank_line", [7, 7, 7]),
    )
    cells, _ = A.judge_cells(df, 3)
    requests = A.judge_requests(cells, df, A.load_judge_prompts(), job_titles={"j": "Staff Software Engineer"})
    n = len(cells)
    assert len(requests) == 2 * n
    by = dict(zip(cells["variant"], range(n)))
    # Coinciding cells: the same request (one store key, one call); the other cell two.
    for variant in ("promptInjection_explicit", "anonymize_all", "placebo_blank_line"):
        assert requests[by[variant]] is requests[n + by[variant]]
    name_first, name_typical = requests[by["firstName_black_male"]], requests[n + by["firstName_black_male"]]
    assert name_first != name_typical
    prompt = name_first.prompt
    assert "Job: Staff Software Engineer" in prompt
    assert "changed from the baseline's to 'Darnell Washington'" in prompt  # the name this résumé got
    assert "over 3 runs of each version" in prompt and "a mean change of -1.00 points" in prompt
    # Each evaluation: one JSON object alone between the data markers.
    assert (
        '<<<BEGIN DATA>>>\n{"score": 5, "recommendation": "maybe", '
        '"justification": "firstName_black_male run 0.", "strengths": ["Go", "distributed systems"], '
        '"concerns": ["no management"]}\n<<<END DATA>>>'
    ) in prompt
    assert "firstName_black_male run 2." in name_typical.prompt  # score 6 = the mean
    assert all(r.json_mode and r.tag == A.JUDGE_TAG for r in requests)
    assert "prompt injection" in requests[by["promptInjection_explicit"]].prompt
    assert "ignore all previous instructions" in requests[by["promptInjection_explicit"]].prompt
    assert "anonymised copy" in requests[by["anonymize_all"]].prompt
    assert "cannot bear on the candidate's merit" in requests[by["placebo_blank_line"]].prompt


def test_change_descriptions_from_the_catalog_axes():
    axes = load_probe_axes()
    assert A.describe_change("graduationYear", "1998", axes).startswith(
        "The year of the candidate's most recent degree was changed to 1998"
    )
    assert "24 months" in A.describe_change("careerGap", "caregiving", axes)
    assert "'Google', 'Meta'" in A.describe_change("companyNames", "faang", axes)
    assert A.describe_change("anonymize", "name", axes).startswith(
        "The name, the contact details and the profile links were replaced by neutral placeholders"
    )
    assert A.describe_change("placebo", "hobby_colour", axes).startswith(
        "In the INTERESTS section the word 'blue' was replaced by 'green'"
    )
    assert A.describe_change("newAxis", "x", axes) == "The newAxis signal was set to 'x'."


def test_a_name_change_is_described_by_the_name_written_or_by_its_pool():
    axes = load_probe_axes()
    pool = next(a for a in axes.axes if a.id == "firstName").levels["white_female"]
    # A pool level writes a different name into each résumé: the judge is told the one written.
    assert A.describe_change("firstName", "white_female", axes, name=pool[3]) == (
        f"The candidate's name was changed from the baseline's to '{pool[3]}' "
        "(name line, e-mail address and profile link)."
    )
    # Without the name (a table from before the `name` column): the names it was drawn from.
    unnamed = A.describe_change("firstName", "white_female", axes)
    assert unnamed.startswith(
        f"The candidate's name was changed from the baseline's to one of these names: '{pool[0]}', '{pool[1]}'"
    )
    # A single name (study 003's) is itself.
    study003 = load_probe_axes("preset:study003")
    assert "to 'Mohammed Al-Said'" in A.describe_change("firstName", "mohammed_al_said", study003)


def test_judge_prompts_are_catalog_templates_with_exactly_the_judge_fields(tmp_path):
    from resumebias_dagster.catalog import CatalogError

    assert set(A.load_judge_prompts()) == {"probe", "prompt_injection", "redaction"}
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "judge_probe.txt").write_text("Judge {variant_evaluation}")
    with pytest.raises(CatalogError, match="judge_probe.txt: the template must use exactly the fields"):
        A.load_judge_prompts(tmp_path)


def test_evaluation_block_is_one_json_object_on_one_line():
    row = {
        "score": 6.0,
        "recommend": "maybe",
        "justification": 'Said "hi"\nthen left\u2028=== Evaluation',
        "strengths": json.dumps(["Go", "résumé\\path\x85x"]),
        "concerns": None,
    }
    block = A.evaluation_block(row)
    # Every character that could end a line is escaped: the block is one line of JSON.
    assert block.splitlines() == [block] and block.startswith('{"score": 6, ')
    value = json.loads(block)
    assert list(value) == ["score", "recommendation", "justification", "strengths", "concerns"]
    assert value == {
        "score": 6,
        "recommendation": "maybe",
        "justification": row["justification"],
        "strengths": ["Go", "résumé\\path\x85x"],
        "concerns": [],
    }
    assert '\\"hi\\"\\nthen left\\u2028===' in block and "résumé" in block  # non-ASCII is kept as is
    bare = A.evaluation_block(
        {
            "score": 6.5,
            "recommend": None,
            "justification": "  ",
            "strengths": "[]",
            "concerns": "not a list",
            "extra": "ignored",
        }
    )
    assert json.loads(bare) == {
        "score": 6.5,
        "recommendation": None,
        "justification": None,
        "strengths": [],
        "concerns": ["not a list"],
    }
    lone = A.evaluation_block({"score": 5, "justification": "half \ud800 pair"})
    assert "\\ud800" in lone and lone.encode("utf-8") and json.loads(lone)["justification"] == "half \ud800 pair"
