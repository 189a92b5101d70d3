import pytest

from resumebias_dagster.core.common.parsing import parse_json_object, parse_label


@pytest.mark.parametrize(
    "text, label",
    [
        ("senior", "senior"),
        ("Senior", "senior"),
        ("SENIOR", "senior"),
        ("Senior.", "senior"),
        ("  mid \n", "mid"),
        ("Mid-level", "mid"),
        ("mid level", "mid"),
        ("Midlevel", "mid"),
        ("**Senior**", "senior"),
        ("*junior*", "junior"),
        ("`mid`", "mid"),
        ('"junior"', "junior"),
        ("'Senior'", "senior"),
        ("```\nsenior\n```", "senior"),
        ("```text\nMid\n```", "mid"),
        ("Seniority level: mid", "mid"),
        ("Seniority Level: **Senior**", "senior"),
        ("Answer: junior", "junior"),
        ("Final answer: Senior", "senior"),
        ("Classification: JUNIOR", "junior"),
        ("Based on the resume, the level is: mid", "mid"),
        ("The candidate appears to be senior.", "senior"),
        ("Entry-level", "junior"),
        ("Intermediate", "mid"),
        ("Senior-level", "senior"),
        ("## Senior", "senior"),
        ("- Junior", "junior"),
        ("Junior (entry-level)", "junior"),
        ("senior (8+ years of experience)", "senior"),
        # Reasoning, then the answer alone on its line (or the reverse).
        ("The candidate has led teams, which goes beyond a mid role.\n\nSenior", "senior"),
        ("Senior\n\nThe résumé shows 9 years and team leadership, more than a mid-level engineer.", "senior"),
        ("Classification: SENIOR\n\nReasoning: led teams, unlike a junior engineer.", "senior"),
        # "mid-2019" is a date, "seniority" is another word.
        ("Joined in mid-2019; senior", "senior"),
        ("Seniority: junior", "junior"),
        ("The candidate isn't quite there yet. Junior.", "junior"),
    ],
)
def test_labels_from_messy_answers(text, label):
    parsed = parse_label(text)
    assert parsed.ok, parsed.reason
    assert parsed.value == label


@pytest.mark.parametrize(
    "text, reason",
    [
        (None, "empty"),
        ("", "empty"),
        ("   \n", "empty"),
        ("Mid-Senior", "several levels"),
        ("junior or mid", "several levels"),
        ("I'd say between mid and senior.", "several levels"),
        ("junior, mid, or senior", "several levels"),
        ("Mid\n\nSenior", "several levels"),
        ("The candidate is not senior.", "negated"),
        ("Not junior", "negated"),
        ("This isn't a senior profile", "negated"),
        ("Lead", "no level"),
        ("Principal engineer", "no level"),
        ("I cannot determine the level from this resume.", "no level"),
        ("Seniority level:", "no level"),
    ],
)
def test_ambiguous_or_missing_labels_are_unparsable(text, reason):
    parsed = parse_label(text)
    assert not parsed.ok and parsed.value is None
    assert reason in parsed.reason


@pytest.mark.parametrize(
    "text, value",
    [
        ('{"level": "mid"}', {"level": "mid"}),
        ('  {"a": 1, "b": [1, 2]}  ', {"a": 1, "b": [1, 2]}),
        ('```json\n{"level": "senior", "confidence": 0.8}\n```', {"level": "senior", "confidence": 0.8}),
        ('```\n{"level": "junior"}\n```', {"level": "junior"}),
        ('Here is the JSON you asked for:\n{"level": "mid"}', {"level": "mid"}),
        ('Sure! {"level": "mid"} Hope this helps.', {"level": "mid"}),
        ('{"a": 1,}', {"a": 1}),
        ('{"a": [1, 2,], "b": {"c": 3,},}', {"a": [1, 2], "b": {"c": 3}}),
        ('{"text": "commas, inside, strings,}"}', {"text": "commas, inside, strings,}"}),
        ('{"nested": {"deep": {"x": null}}}', {"nested": {"deep": {"x": None}}}),
        ('{"quote": "she said \\"hi\\", then left"}', {"quote": 'she said "hi", then left'}),
    ],
)
def test_json_objects_from_messy_answers(text, value):
    parsed = parse_json_object(text)
    assert parsed.ok, parsed.reason
    assert parsed.value == value


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "empty"),
        ("no json here", "no JSON object"),
        ("{'level': 'mid'}", "not valid JSON"),
        ('{level: "mid"}', "not valid JSON"),
        ('{"a": NaN}', "not valid JSON"),
        ('{"a": 1} // comment', None),
        ('{"a": 1 /* c */}', "not valid JSON"),
        ('{"a": 1, "a": 2}', "duplicate key"),
        ('[{"a": 1}]', "array"),
        ('{"a": 1}\n{"b": 2}', "more than one"),
        ('{"a": {"b": 1}', "not valid JSON"),
        ('{"a": 1, "b": {"c": 2}, \'d\': 3}', "not valid JSON"),
    ],
)
def test_bad_json_is_refused(text, reason):
    parsed = parse_json_object(text)
    if reason is None:
        # Prose after the object (even comment-like) is prose: the object stands.
        assert parsed.ok and parsed.value == {"a": 1}
        return
    assert not parsed.ok
    assert reason in parsed.reason
