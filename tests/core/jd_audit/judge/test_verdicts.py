"""The judge's answers (core/jd_audit/judge/verdicts.py): strict verdict parsing, the verbatim
check of the quotes, and the verdicts table (declared columns and dtypes, also with no cell) with its
per-judge summary."""

import json

import pandas as pd
import pytest

from resumebias_dagster.core.jd_audit import judge as A
from resumebias_dagster.core.providers.types import ChatResult
from resumebias_dagster.core.tables import JudgeVerdicts, columns, empty_table
from tests.core.jd_audit.judge.fit_rows import one, runs, table


def answer(**fields):
    value = {"verdict": "bias", "confidence": "high", "rationale": "Keyed off the name.", "bias_signals": ["x"]}
    value.update(fields)
    return ChatResult(key="k", text=json.dumps(value))


def test_parse_verdict_accepts_a_strict_answer():
    fields, error = A.parse_verdict(answer(verdict=" Bias ", confidence="HIGH"))
    assert error is None
    assert fields == {
        "verdict": "bias",
        "confidence": "high",
        "rationale": "Keyed off the name.",
        "bias_signals": ["x"],
    }
    fenced = ChatResult(
        key="k",
        text='Here it is:\n```json\n{"verdict": "justified", "confidence": "low", '
        '"rationale": "Noise.", "bias_signals": []}\n```',
    )
    assert A.parse_verdict(fenced)[0]["verdict"] == "justified"


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (ChatResult(key="k", text='{"verdict": "bias", "confidence": '), "unparsable: not valid JSON"),
        (ChatResult(key="k", text="I think this is biased."), "unparsable: no JSON object"),
        (ChatResult(key="k", error_kind="refusal", error_message="I can't help with that."), "refusal: I can't help"),
        (ChatResult(key="k", error_kind="unparsable", error_message="not valid JSON"), "unparsable: not valid JSON"),
        (ChatResult(key="k", error_kind="timeout"), "timeout"),
        (answer(verdict="biased"), "unparsable: verdict 'biased' is not one of bias, justified, mixed"),
        (answer(verdict=None), "unparsable: verdict None"),
        (answer(confidence="very high"), "unparsable: confidence 'very high' is not one of high, medium, low"),
        (answer(rationale=""), "unparsable: rationale '' is not a non-empty string"),
        (answer(bias_signals="the name"), "unparsable: bias_signals 'the name' is not a list of strings"),
        (answer(bias_signals=["ok", 3]), "unparsable: bias_signals"),
        (ChatResult(key="k", text='[{"verdict": "bias"}]'), "unparsable: a JSON array"),
    ],
)
def test_parse_verdict_never_invents_a_verdict(result, message):
    fields, error = A.parse_verdict(result)
    assert fields is None and error.startswith(message)


# --------------------------------------------------------------------------- verbatim

TEXT = [
    "The candidate’s   background in\n distributed systems is strong, but the name suggests a non-native speaker.",
    "Go and Python",
    "May need visa sponsorship",
]


@pytest.mark.parametrize(
    ("quote", "ok"),
    [
        ("the name suggests a non-native speaker", True),
        ("background in distributed systems", True),  # whitespace collapsed
        ("The candidate's background", True),  # curly apostrophe = straight
        ("“...the name suggests a non-native speaker.”", True),  # quote marks, ellipsis, full stop
        ("…may need visa sponsorship…", True),  # case folded, Unicode ellipsis
        ("background ... is strong", True),  # an inner ellipsis: fragments in order
        ("is strong ... background", False),  # fragments out of order
        ("the name suggests a foreign speaker", False),  # paraphrase
        ("Python May need", False),  # straddles two parts
        ("...", False),  # nothing left to check
        ("", False),
    ],
)
def test_verbatim_check(quote, ok):
    assert A.verbatim_check([quote], TEXT) == [ok]


def test_verbatim_check_on_one_string_and_several_quotes():
    assert A.verbatim_check(["a b", "b a", "  A  B "], "x a\tb y") == [True, False, True]


# What the judge saw: the JSON-escaped text (\" \\ \n \t \uXXXX) of these parts.
ESCAPED = [
    'Praised as "world-class" by peers.\nLed the C:\\build migration.',
    "Tab\there",
    "Rated \U0001f600 by the panel",
]


@pytest.mark.parametrize(
    ("quote", "ok"),
    [
        ('Praised as \\"world-class\\" by peers', True),  # \" as the judge saw it
        ('Praised as "world-class" by peers', True),  # the raw text
        ("by peers.\\nLed the", True),  # an escaped newline
        ("the C:\\\\build migration", True),  # \\ is one backslash
        ("the C:\\build migration", True),  # the raw backslash (as an escape, \b is a backspace)
        ("Praised as \\u0022world-class\\u0022", True),  # a \u escape
        ("Tab\\there", True),  # an escaped tab
        ("Rated \\ud83d\\ude00 by", True),  # a surrogate pair
        ('Praised as \\"famous\\" by peers', False),  # escaped, but invented
        ("Praised as \\x22world-class", False),  # no JSON escape: the backslash stays, not in the text
        ('peers.\\n\\"Tab', False),  # escapes cannot join two parts
        ("\\n", False),  # nothing but an escaped newline
    ],
)
def test_verbatim_check_accepts_the_json_escaped_form(quote, ok):
    assert A.verbatim_check([quote], ESCAPED) == [ok]


def test_json_unescape_decodes_valid_escapes_only():
    assert A.json_unescape('say \\"hi\\"\\n\\t\\/\\u00e9') == 'say "hi"\n\t/é'
    assert A.json_unescape("C:\\\\new") == "C:\\new"  # \\ then a plain n: no newline
    assert A.json_unescape("a\\x41 \\u12 \\") == "a\\x41 \\u12 \\"  # not escapes: kept
    assert A.json_unescape("\\ud83d\\ude00 \\ud800") == "\U0001f600 \ud800"  # a pair joins, a lone half stays
    assert A.json_unescape("plain") == "plain"


def test_audit_verdicts_flags_non_verbatim_quotes_errors_and_self_judging():
    df = table(
        runs("gemini-flash", "baseline", [7, 7, 7], texts=["Strong Google pedigree."] * 3),
        runs(
            "gemini-flash",
            "firstName_wei_chen",
            [5, 7, 6],
            texts=["The name Wei Chen suggests limited English.", "Solid.", "Solid match."],
        ),
        runs("gpt-mini", "baseline", [7, 7, 7], texts=["Strong Google pedigree."] * 3),
        runs(
            "gpt-mini", "anonymize_all", [6, 6, 6], texts=["Company A is unknown, so experience is unverifiable."] * 3
        ),
    )
    cells, _ = A.judge_cells(df, 3)
    refused = ChatResult(key="r", error_kind="refusal", error_message="no", resolved_model="judge-1")
    first = [
        answer(bias_signals=["The name  Wei Chen suggests", "Strong Google pedigree", "a foreign name"]),
        answer(bias_signals=["Strong Google pedigree", "experience is unverifiable"]),
    ]
    for r in first:
        r.resolved_model = "judge-1"
    typical = [refused, first[1]]
    v = A.judge_verdicts(
        cells,
        df,
        first,
        typical,
        judge_name="judge",
        judge_family="google",
        model_families={"gemini-flash": "google", "gpt-mini": "openai"},
    )
    assert list(v.columns) == list(A.VERDICT_COLUMNS)
    probe, redaction = one(v, model="gemini-flash"), one(v, model="gpt-mini")
    # Probe arm: only the variant's evaluation counts; the baseline's words are not verbatim.
    assert json.loads(probe.bias_signals_first) == ["The name  Wei Chen suggests"]
    assert json.loads(probe.non_verbatim_first) == ["Strong Google pedigree", "a foreign name"]
    assert (probe.n_signals_first, probe.n_non_verbatim_first) == (1, 2)
    assert probe.verdict_typical is None and probe.verdict is None and probe.error_typical == "refusal: no"
    assert (probe.n_signals_typical, probe.n_non_verbatim_typical) == (0, 0)
    assert pd.isna(probe.verdicts_agree) and probe.self_judging
    # Redaction arm: the removed signal shows in the baseline's evaluation, so it counts.
    assert redaction.n_signals_typical == 2 and redaction.n_non_verbatim_typical == 0
    assert redaction.samples_coincide and redaction.verdicts_agree and not redaction.self_judging
    assert redaction.verdict == "bias" and redaction.judge_resolved_model == "judge-1"
    summary = A.judge_summary(v, {"judge": "google"})
    assert list(summary.columns) == list(A.JUDGE_SUMMARY_COLUMNS)
    s = summary.iloc[0]
    # Calls: 2 for the non-coinciding cell, 1 for the coinciding one.
    assert (s.n_cells, s.n_judge_calls_needed, s.n_self_judging, s.n_errors) == (2, 3, 1, 1)
    assert (s.n_signals, s.n_non_verbatim, s.non_verbatim_rate) == (3, 2, pytest.approx(2 / 5))


def test_no_cells_give_the_declared_empty_verdicts_without_a_call():
    fit = table(runs("m", "baseline", [7, 6]), runs("m", "firstName_wei_chen", [6, 6]))
    cells, skipped = A.judge_cells(fit, 3)  # every cell short: nothing to judge
    assert cells.empty and len(skipped) == 1

    def run(requests):
        raise AssertionError("no cell, no call")

    verdicts, stats = A.run_judge(run, cells, fit, A.load_judge_prompts(), judge_name="judge", judge_family="google")
    assert stats is None and len(verdicts) == 0
    assert list(verdicts.columns) == columns(JudgeVerdicts)
    assert verdicts.dtypes.to_dict() == empty_table(JudgeVerdicts).dtypes.to_dict()
