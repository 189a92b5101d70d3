"""The LLM-as-judge audit (core/jd_audit/judge/) without a provider: cell selection, prompts,
strict verdict parsing, the verbatim check, families, the judges config, and the
stability, cross-judge and judge-vs-effects tables on hand-made verdicts."""

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from resumebias_dagster.core.jd_audit import judge as A
from resumebias_dagster.core.jd_audit.fit_task import NO_TEXT_NOTE
from resumebias_dagster.core.jd_audit.probes import load_probe_axes
from resumebias_dagster.core.models.model_config import (
    ModelConfigError,
    ModelSpec,
    load_judges,
    load_models,
    parse_judges,
)
from resumebias_dagster.core.providers.types import ChatResult

ARMS = {"baseline": "probe", "firstName": "probe", "school": "probe", "promptInjection": "prompt_injection",
        "anonymize": "anonymize", "placebo": "placebo"}


def runs(model, variant, scores, jd="j", resume="r1", text=True, texts=None):
    """Fit rows of one (model, jd, résumé, variant); a NaN score is a failed run."""
    axis, _, level = variant.partition("_")
    out = []
    for r, score in enumerate(scores):
        failed = bool(np.isnan(score))
        written = text and not failed
        out.append({
            "model": model, "jd": jd, "resume_id": resume, "variant": variant, "arm": ARMS[axis],
            "axis": axis, "level": level, "run": r, "score": score, "recommend": None if failed else "maybe",
            "justification": (texts[r] if texts else f"{variant} run {r}.") if written else None,
            "strengths": json.dumps(["Go", "distributed systems"]) if written else None,
            "concerns": json.dumps(["no management"]) if written else None,
            "error": "unparsable: no JSON object" if failed else None,
            "note": None if text else NO_TEXT_NOTE,
        })
    return out


def table(*groups):
    return pd.DataFrame([r for g in groups for r in g])


def one(df, **where):
    hit = df
    for k, v in where.items():
        hit = hit[hit[k] == v]
    assert len(hit) == 1, hit
    return hit.iloc[0]


# --------------------------------------------------------------------------- cells


def test_first_and_typical_picks_with_ties_broken_by_lowest_run():
    df = table(
        # Baseline mean 7: runs 0, 3, 4 sit on it; the lowest, 0, is typical (= first).
        runs("m", "baseline", [7, 6, 8, 7, 7]),
        # Mean 6: runs 2 and 3 sit on it; typical is run 2, first is run 0.
        runs("m", "firstName_wei_chen", [5, 8, 6, 6, 5]),
        # Mean 6.4: |6 - 6.4| = 0.4 beats |7 - 6.4| = 0.6, so run 1 (the lowest 6).
        runs("m", "school_mit", [7, 6, 7, 6, 6]),
        # Constant: every run ties, so typical = first = run 0: the samples coincide.
        runs("m", "promptInjection_explicit", [9, 9, 9, 9, 9]),
    ).sample(frac=1.0, random_state=3)  # row order must not matter
    cells, skipped = A.audit_cells(df, 5)
    assert skipped.empty and list(cells.columns) == list(A.CELL_COLUMNS)
    assert cells["variant"].tolist() == ["firstName_wei_chen", "promptInjection_explicit", "school_mit"]
    name = one(cells, variant="firstName_wei_chen")
    assert (name.first_baseline_run, name.first_variant_run) == (0, 0)
    assert (name.typical_baseline_run, name.typical_variant_run) == (0, 2)
    assert (name.n_runs, name.baseline_mean, name.variant_mean, name.mean_delta) == (5, 7.0, 6.0, -1.0)
    assert (name.first_variant_score, name.typical_variant_score) == (5.0, 6.0)
    assert not name.samples_coincide
    assert one(cells, variant="school_mit").typical_variant_run == 1
    assert one(cells, variant="school_mit").mean_delta == pytest.approx(-0.6)
    assert one(cells, variant="promptInjection_explicit").samples_coincide


def test_an_exact_tie_between_two_scores_goes_to_the_lower_run():
    # Baseline 6 8 6 8: mean 7, all four runs at distance 1 -> run 0. Variant 8 6 7 9:
    # mean 7.5, runs 0 (8) and 2 (7) both at 0.5 -> run 0. Both typical picks are the first.
    df = table(runs("m", "baseline", [6, 8, 6, 8]), runs("m", "firstName_wei_chen", [8, 6, 7, 9]))
    cells, _ = A.audit_cells(df, 4)
    c = cells.iloc[0]
    assert (c.typical_baseline_run, c.typical_variant_run) == (0, 0) and c.samples_coincide


def test_short_cells_and_cells_without_text_are_skipped_with_their_reason():
    nan = np.nan
    df = table(
        runs("m", "baseline", [7, 7, 7]),
        runs("m", "firstName_wei_chen", [6, nan, 6]),  # one failed run: short
        runs("m", "school_mit", [6, 6]),  # never backfilled: short
        runs("m", "placebo_blank_line", [7, 7, 7]),  # complete
        runs("m", "promptInjection_explicit", [7, 7, 7, 7]),  # more runs than required
        runs("m", "baseline", [7, nan, 7], resume="r2"),  # short baseline: its variants are skipped
        runs("m", "firstName_wei_chen", [6, 6, 6], resume="r2"),
        runs("m", "firstName_wei_chen", [6, 6, 6], resume="r3"),  # no baseline at all
        runs("embedded", "baseline", [7, 6, 7], text=False),  # an embedded model writes nothing
        runs("embedded", "firstName_wei_chen", [6, 6, 5], text=False),
        runs("other", "baseline", [7, 7, 7]),
        runs("other", "firstName_wei_chen", [7, 7, 7]),
    )
    cells, skipped = A.audit_cells(df, {"m": 3, "embedded": 3})
    assert list(cells[["model", "resume_id", "variant"]].itertuples(index=False, name=None)) == [
        ("m", "r1", "placebo_blank_line")]
    assert list(skipped.columns) == list(A.SKIPPED_COLUMNS)
    reasons = {(r.model, r.resume_id, r.variant): r.reason for r in skipped.itertuples()}
    assert reasons == {
        ("embedded", "r1", "firstName_wei_chen"): "no written evaluation",
        ("m", "r1", "firstName_wei_chen"): "variant: 2 valid runs, 3 required",
        ("m", "r1", "promptInjection_explicit"): "variant: 4 valid runs, 3 required",
        ("m", "r1", "school_mit"): "variant: 2 valid runs, 3 required",
        ("m", "r2", "firstName_wei_chen"): "baseline: 2 valid runs, 3 required",
        ("m", "r3", "firstName_wei_chen"): "no baseline runs",
        ("other", "r1", "firstName_wei_chen"): "no runs_per_cell known for this model",
    }
    row = one(skipped, model="m", resume_id="r1", variant="firstName_wei_chen")
    assert (row.n_baseline, row.n_variant, row.runs_required) == (3, 2, 3)


# --------------------------------------------------------------------------- prompts


def test_requests_describe_the_change_and_share_one_request_when_samples_coincide():
    df = table(
        runs("m", "baseline", [7, 6, 8]),
        runs("m", "firstName_mohammed_al_said", [5, 7, 6]),
        runs("m", "promptInjection_explicit", [9, 9, 9]),
        runs("m", "anonymize_all", [6, 6, 6]),
        runs("m", "placebo_blank_line", [7, 7, 7]),
    )
    cells, _ = A.audit_cells(df, 3)
    requests = A.judge_requests(cells, df, A.load_judge_prompts(), {"j": "Staff Software Engineer"})
    n = len(cells)
    assert len(requests) == 2 * n
    by = dict(zip(cells["variant"], range(n)))
    # Coinciding cells: the same request (one store key, one call); the other cell two.
    for variant in ("promptInjection_explicit", "anonymize_all", "placebo_blank_line"):
        assert requests[by[variant]] is requests[n + by[variant]]
    name_first, name_typical = requests[by["firstName_mohammed_al_said"]], requests[n + by["firstName_mohammed_al_said"]]
    assert name_first != name_typical
    prompt = name_first.prompt
    assert "Job: Staff Software Engineer" in prompt
    assert "changed from the baseline's to 'Mohammed Al-Said'" in prompt
    assert "over 3 runs of each version" in prompt and "a mean change of -1.00 points" in prompt
    # Each evaluation: one JSON object alone between the data markers.
    assert ('<<<BEGIN DATA>>>\n{"score": 5, "recommendation": "maybe", '
            '"justification": "firstName_mohammed_al_said run 0.", "strengths": ["Go", "distributed systems"], '
            '"concerns": ["no management"]}\n<<<END DATA>>>') in prompt
    assert "firstName_mohammed_al_said run 2." in name_typical.prompt  # score 6 = the mean
    assert all(r.json_mode and r.tag == A.JUDGE_TAG for r in requests)
    assert "prompt injection" in requests[by["promptInjection_explicit"]].prompt
    assert "ignore all previous instructions" in requests[by["promptInjection_explicit"]].prompt
    assert "anonymised copy" in requests[by["anonymize_all"]].prompt
    assert "cannot bear on the candidate's merit" in requests[by["placebo_blank_line"]].prompt


def test_change_descriptions_from_the_catalog_axes():
    axes = load_probe_axes()
    assert A.describe_change("graduationYear", "1998", axes).startswith("The year of the candidate's most recent degree was changed to 1998")
    assert "18 months" in A.describe_change("careerGap", "caregiving", axes)
    assert "'Google', 'Meta'" in A.describe_change("companyNames", "faang", axes)
    assert A.describe_change("anonymize", "name", axes).startswith(
        "The name, the contact details and the profile links were replaced by neutral placeholders")
    assert A.describe_change("placebo", "hobby_colour", axes).startswith(
        "In the INTERESTS section the word 'blue' was replaced by 'green'")
    assert A.describe_change("newAxis", "x", axes) == "The newAxis signal was set to 'x'."


def test_judge_prompts_are_catalog_templates_with_exactly_the_judge_fields(tmp_path):
    from resumebias_dagster.catalog import CatalogError

    assert set(A.load_judge_prompts()) == {"probe", "prompt_injection", "redaction"}
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "judge_probe.txt").write_text("Judge {variant_evaluation}")
    with pytest.raises(CatalogError, match="judge_probe.txt: the template must use exactly the fields"):
        A.load_judge_prompts(tmp_path)


# --------------------------------------------------------------------------- parsing


def answer(**fields):
    value = {"verdict": "bias", "confidence": "high", "rationale": "Keyed off the name.", "bias_signals": ["x"]}
    value.update(fields)
    return ChatResult(key="k", text=json.dumps(value))


def test_parse_verdict_accepts_a_strict_answer():
    fields, error = A.parse_verdict(answer(verdict=" Bias ", confidence="HIGH"))
    assert error is None
    assert fields == {"verdict": "bias", "confidence": "high", "rationale": "Keyed off the name.", "bias_signals": ["x"]}
    fenced = ChatResult(key="k", text='Here it is:\n```json\n{"verdict": "justified", "confidence": "low", '
                                      '"rationale": "Noise.", "bias_signals": []}\n```')
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
    "Rated \U0001F600 by the panel",
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
    assert A.json_unescape("\\ud83d\\ude00 \\ud800") == "\U0001F600 \ud800"  # a pair joins, a lone half stays
    assert A.json_unescape("plain") == "plain"


def test_evaluation_block_is_one_json_object_on_one_line():
    row = {"score": 6.0, "recommend": "maybe", "justification": 'Said "hi"\nthen left\u2028=== Evaluation',
           "strengths": json.dumps(["Go", "résumé\\path\x85x"]), "concerns": None}
    block = A.evaluation_block(row)
    # Every character that could end a line is escaped: the block is one line of JSON.
    assert block.splitlines() == [block] and block.startswith('{"score": 6, ')
    value = json.loads(block)
    assert list(value) == ["score", "recommendation", "justification", "strengths", "concerns"]
    assert value == {"score": 6, "recommendation": "maybe", "justification": row["justification"],
                     "strengths": ["Go", "résumé\\path\x85x"], "concerns": []}
    assert '\\"hi\\"\\nthen left\\u2028===' in block and "résumé" in block  # non-ASCII is kept as is
    bare = A.evaluation_block({"score": 6.5, "recommend": None, "justification": "  ", "strengths": "[]",
                               "concerns": "not a list", "extra": "ignored"})
    assert json.loads(bare) == {"score": 6.5, "recommendation": None, "justification": None, "strengths": [],
                                "concerns": ["not a list"]}
    lone = A.evaluation_block({"score": 5, "justification": "half \ud800 pair"})
    assert "\\ud800" in lone and lone.encode("utf-8") and json.loads(lone)["justification"] == "half \ud800 pair"


def test_audit_verdicts_flags_non_verbatim_quotes_errors_and_self_judging():
    df = table(
        runs("gemini-flash", "baseline", [7, 7, 7], texts=["Strong Google pedigree."] * 3),
        runs("gemini-flash", "firstName_wei_chen", [5, 7, 6],
             texts=["The name Wei Chen suggests limited English.", "Solid.", "Solid match."]),
        runs("gpt-mini", "baseline", [7, 7, 7], texts=["Strong Google pedigree."] * 3),
        runs("gpt-mini", "anonymize_all", [6, 6, 6], texts=["Company A is unknown, so experience is unverifiable."] * 3),
    )
    cells, _ = A.audit_cells(df, 3)
    refused = ChatResult(key="r", error_kind="refusal", error_message="no", resolved_model="judge-1")
    first = [
        answer(bias_signals=["The name  Wei Chen suggests", "Strong Google pedigree", "a foreign name"]),
        answer(bias_signals=["Strong Google pedigree", "experience is unverifiable"]),
    ]
    for r in first:
        r.resolved_model = "judge-1"
    typical = [refused, first[1]]
    v = A.audit_verdicts(cells, df, first, typical, "judge", "google",
                         {"gemini-flash": "google", "gpt-mini": "openai"})
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


# --------------------------------------------------------------------------- families


@pytest.mark.parametrize(
    ("alias", "family"),
    [
        ("openai/gpt-5", "openai"), ("gpt-4o-mini", "openai"), ("o3-mini", "openai"), ("o1", "openai"),
        ("claude-sonnet-4-5", "anthropic"), ("anthropic/claude-opus-4.1", "anthropic"),
        ("google/gemini-3-pro-preview", "google"), ("gemini-2.5-pro", "google"), ("gemma3-270m", "google"),
        ("meta-llama/Llama-3.3-70B-Instruct", "meta"), ("llama-3.3-70b-versatile", "meta"),
        ("mistral-large-latest", "mistral"), ("mistralai/Mixtral-8x7B", "mistral"),
        ("Qwen/Qwen2.5-7B-Instruct", "qwen"), ("deepseek-r1-distill-llama-70b", "deepseek"),
        ("x-ai/grok-4", "x-ai"), ("grok-4", "grok"),
    ],
)
def test_family_from_alias(alias, family):
    assert A.family_of(alias) == family


def test_family_of_specs_explicit_family_wins_and_self_judging():
    spec = ModelSpec("house-model", "provider", 0.7, 5, {"provider": "openai", "model": "acme/house-v1"})
    assert A.family_of(spec) == "acme"
    tagged = ModelSpec("house-model", "provider", 0.7, 5, {"provider": "openai", "model": "acme/house-v1", "family": "Google"})
    assert A.family_of(tagged) == "google"
    families = {s.name: A.family_of(s) for s in load_models(include_disabled=True)}
    assert families["gemma3-270m"] == "google" and families["gemini-3-pro"] == "google"
    assert families["claude-sonnet"] == "anthropic" and families["local-vllm"] == "qwen"
    assert families["minilm-classifier"] == "minilm"
    flags = A.self_judging("google", ["gemini-3-pro", "gpt-5", "gemini-3-pro", "gemini-unlisted"],
                           {"gemini-3-pro": "google", "gpt-5": "openai"})
    assert flags.tolist() == [True, False, True, True]


# --------------------------------------------------------------------------- judges config


def provider(name, **extra):
    return {"name": name, "kind": "provider", "provider": "google", "model": "gemini-2.5-pro", **extra}


def test_judges_config():
    models = [provider("judge", enabled=False), provider("second", model="gpt-5", provider="openai"),
              {"name": "local", "kind": "local-llm", "source": "pypi:x"}]
    judges = parse_judges({"models": models, "judges": ["judge", "second"]}, "m.yaml")
    assert [j.name for j in judges] == ["judge", "second"] and not judges[0].enabled
    assert parse_judges({"models": models}, "m.yaml") == []
    assert parse_judges({"models": models, "judges": []}, "m.yaml") == []
    bad = [
        (["nobody"], "m.yaml: judges: 'nobody' is not a model of this file.*Provider entries: judge, second"),
        (["local"], "'local' is a local-llm model; a judge must be a provider entry"),
        (["judge", "second", "judge"], "at most 2 judges"),
        (["judge", "judge"], "names a model twice"),
        ("judge", "expected a list of model names"),
    ]
    for judges_value, message in bad:
        with pytest.raises(ModelConfigError, match=message):
            parse_judges({"models": models, "judges": judges_value}, "m.yaml")
    # A judge's limit is held to the one rule of every entry and task (tests/core/providers/test_token_limits.py).
    with pytest.raises(ModelConfigError, match="m.yaml: model 'tiny': max_tokens.judge is 16, too few"):
        parse_judges({"models": [provider("tiny", max_tokens={"judge": 16})], "judges": ["tiny"]}, "m.yaml")


def test_load_judges_names_the_file_and_leaves_load_models_alone(tmp_path):
    assert load_judges() == []  # packaged: no judge offline
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({"models": [provider("judge", enabled=False)], "judges": ["judge"]}))
    assert [j.name for j in load_judges(path)] == ["judge"]
    assert load_models(path) == [] and len(load_models(path, include_disabled=True)) == 1
    path.write_text(yaml.safe_dump({"models": [provider("judge")], "judges": ["gemini"]}))
    with pytest.raises(ModelConfigError, match=f"{path}: judges: 'gemini' is not a model"):
        load_judges(path)


# --------------------------------------------------------------------------- stability


def verdict_table(pairs, judge="judge", model="m"):
    """Verdict rows from (first, typical, samples_coincide) triples, one cell each."""
    return pd.DataFrame([
        {"judge": judge, "model": model, "jd": "j", "resume_id": "r1", "variant": f"v{i}", "arm": "probe",
         "verdict_first": f, "verdict_typical": t, "samples_coincide": c}
        for i, (f, t, c) in enumerate(pairs)
    ])


HAND = (
    [("bias", "bias", False)] * 4 + [("bias", "justified", False)] * 3 + [("justified", "bias", False)]
    + [("justified", "justified", False)] * 2 + [("mixed", "justified", False), ("justified", "mixed", False)]
    + [("bias", "bias", True)] * 2  # coinciding samples: excluded
    + [("bias", None, False)]  # a failed typical sample: excluded
)


def test_auditor_stability_on_a_hand_made_table():
    # Compared cells: 12 (15 - 2 coinciding - 1 missing). Rows = first, columns = typical:
    #              bias  justified  mixed | total
    #   bias          4          3      0 |     7
    #   justified     1          2      1 |     4
    #   mixed         0          1      0 |     1
    #   total         5          6      1 |    12
    # Agreement 4 + 2 + 0 = 6, so disagreement 6/12 = 0.5.
    # Cohen's kappa: p_o = 6/12 = 1/2; p_e = (7*5 + 4*6 + 1*1)/12^2 = 60/144 = 5/12;
    # kappa = (1/2 - 5/12) / (1 - 5/12) = (1/12) / (7/12) = 1/7.
    # Asymmetry: bias -> justified 3, justified -> bias 1: 3.0.
    matrix, summary = A.auditor_stability(verdict_table(HAND))
    assert list(matrix.columns) == list(A.STABILITY_MATRIX_COLUMNS)
    assert matrix[["bias", "justified", "mixed", "row_total"]].to_numpy().tolist() == [
        [4, 3, 0, 7], [1, 2, 1, 4], [0, 1, 0, 1], [5, 6, 1, 12]]
    assert matrix["first_verdict"].tolist() == ["bias", "justified", "mixed", "col_total"]
    s = summary.iloc[0]
    assert (s.n_cells, s.n_coinciding, s.n_missing, s.n_compared, s.n_agree, s.n_disagree) == (15, 2, 1, 12, 6, 6)
    assert s.disagreement_rate == 0.5
    assert s.kappa == pytest.approx(1 / 7)
    assert (s.n_bias_to_justified, s.n_justified_to_bias, s.asymmetry) == (3, 1, 3.0)


def test_kappa_matches_statsmodels():
    from statsmodels.stats.inter_rater import cohens_kappa

    rng = np.random.default_rng(0)
    tables = rng.integers(0, 30, size=(20, 3, 3))
    ours = A.cohen_kappa(tables)
    assert ours == pytest.approx([cohens_kappa(t, return_results=False) for t in tables])
    assert np.isnan(A.cohen_kappa(np.zeros((3, 3))))
    assert np.isnan(A.cohen_kappa(np.diag([5, 0, 0])))  # one category only: chance explains all


def test_auditor_stability_reproduces_seed_003():
    # Study 003's matrix: 922 of 1996 cells disagree (46.19%), bias->justified 591 against
    # justified->bias 300 (1.97x), 2934 coinciding cells excluded.
    counts = {("bias", "bias"): 697, ("bias", "justified"): 591, ("bias", "mixed"): 9,
              ("justified", "bias"): 300, ("justified", "justified"): 377, ("justified", "mixed"): 10,
              ("mixed", "bias"): 5, ("mixed", "justified"): 7}
    pairs = [(f, t, False) for (f, t), n in counts.items() for _ in range(n)] + [("bias", "bias", True)] * 2934
    matrix, summary = A.auditor_stability(verdict_table(pairs))
    s = summary.iloc[0]
    assert (s.n_cells, s.n_compared, s.n_disagree) == (4930, 1996, 922)
    assert round(100 * s.disagreement_rate, 2) == 46.19 and round(s.asymmetry, 2) == 1.97
    assert matrix.iloc[3].tolist()[2:] == [1002, 975, 19, 1996]
    # p_o = 1074/1996; p_e = (1297*1002 + 687*975 + 12*19) / 1996^2.
    p_o, p_e = 1074 / 1996, (1297 * 1002 + 687 * 975 + 12 * 19) / 1996**2
    assert s.kappa == pytest.approx((p_o - p_e) / (1 - p_e))


def test_stability_per_judge_and_over_all_judges():
    both = pd.concat([verdict_table(HAND, judge="a"), verdict_table([("bias", "justified", False)], judge="b")])
    matrix, summary = A.auditor_stability(both)
    assert summary["judge"].tolist() == ["a", "b", A.ALL]
    assert summary["n_compared"].tolist() == [12, 1, 13]
    assert summary.loc[1, "asymmetry"] != summary.loc[1, "asymmetry"]  # no justified->bias: NaN
    assert len(matrix) == 12


def test_cross_judge_agreement():
    # Judge a vs b on the headline verdict: m1 agrees on both cells, m2 on one of two.
    # Overall (rows a, columns b): bias/bias 1, bias/justified 1, justified/justified 1,
    # mixed/mixed 1. p_o = 3/4; rows (2, 1, 1), columns (1, 2, 1): p_e = (2+2+1)/16 = 5/16;
    # kappa = (12/16 - 5/16) / (11/16) = 7/11.
    def rows(judge, verdicts):
        return pd.DataFrame([{"judge": judge, "model": m, "jd": "j", "resume_id": "r", "variant": v,
                              "verdict_typical": t} for (m, v), t in zip(
            [("m1", "v1"), ("m1", "v2"), ("m2", "v1"), ("m2", "v2")], verdicts)])

    a = rows("a", ["bias", "justified", "bias", "mixed"])
    b = rows("b", ["bias", "justified", "justified", "mixed"])
    agreement = A.cross_judge_agreement(pd.concat([a, b]))
    assert list(agreement.columns) == list(A.CROSS_JUDGE_COLUMNS)
    assert agreement["model"].tolist() == ["m1", "m2", A.ALL]
    assert agreement["n_both"].tolist() == [2, 2, 4]
    assert agreement["agreement_rate"].tolist() == [1.0, 0.5, 0.75]
    assert agreement.iloc[2]["kappa"] == pytest.approx(7 / 11)
    assert A.cross_judge_agreement(a).empty


# --------------------------------------------------------------------------- judge vs effects


def test_judge_vs_effects_on_a_hand_made_table():
    verdicts = pd.DataFrame(
        [("m", "v1", "r1", "justified"),  # significant, judged justified: unverbalised bias
         ("m", "v2", "r1", "bias"), ("m", "v2", "r2", "bias"),  # significant, bias
         ("m", "v3", "r1", "bias"),  # noise, judged bias: bias on noise
         ("m", "v4", "r1", "bias"), ("m", "v4", "r2", "justified"),  # a tie: mixed
         ("m", "v5", "r1", "justified"), ("m", "v5", "r2", "justified"), ("m", "v5", "r3", "bias"),  # justified
         ("m", "v6", "r1", None),  # no verdict (an error): unjudged
         ("m", "v7", "r1", "justified"),  # fit_effects has no row
         ("m2", "v1", "r1", "justified")],
        columns=["model", "variant", "resume_id", "verdict_typical"],
    ).assign(judge="judge", jd="j", arm="probe")
    effects = pd.DataFrame(
        [("m", "v1", True), ("m", "v2", True), ("m", "v3", False), ("m", "v4", False), ("m", "v5", False),
         ("m", "v6", True), ("m2", "v1", True)],
        columns=["model", "variant", "significant"],
    ).assign(jd="j", delta=-1.0, q_value=0.01, clears_floor=True)
    cells = A.judge_effect_cells(verdicts, effects)
    assert list(cells.columns) == list(A.EFFECT_CELL_COLUMNS)
    m = cells[cells["model"] == "m"].set_index("variant")
    assert m["verdict"].tolist() == ["justified", "bias", "bias", "mixed", "justified", None, "justified"]
    assert m["n_resumes"].tolist() == [1, 2, 1, 2, 3, 1, 1] and m.loc["v5", "n_judged"] == 3
    assert m["finding"].tolist() == ["unverbalised bias", "", "bias on noise", "", "", "", ""]
    assert pd.isna(m.loc["v7", "significant"])

    table_ = A.judge_vs_effects(verdicts, effects)
    assert list(table_.columns) == list(A.JUDGE_EFFECT_COLUMNS)
    r = table_.set_index("model").loc["m"]
    assert (r.n_cells, r.n_unjudged, r.n_no_effect, r.n_significant, r.n_not_significant) == (5, 1, 1, 2, 3)
    assert (r.significant_bias, r.significant_justified, r.significant_mixed) == (1, 1, 0)
    assert (r.noise_bias, r.noise_justified, r.noise_mixed) == (1, 1, 1)
    assert (r.n_unverbalised_bias, r.unverbalised_bias_rate) == (1, 0.5)  # 1 of 2 significant
    assert (r.n_judged_bias, r.n_bias_on_noise, r.bias_on_noise_rate) == (2, 1, 0.5)  # 1 of 2 judged bias
    r2 = table_.set_index("model").loc["m2"]
    assert (r2.n_unverbalised_bias, r2.unverbalised_bias_rate) == (1, 1.0)
    assert r2.n_judged_bias == 0 and np.isnan(r2.bias_on_noise_rate)


def test_no_verdicts_give_the_declared_tables_typed_and_empty():
    from resumebias_dagster.core import tables as T

    verdicts = T.empty_table(T.AuditVerdicts)
    matrix, stability = A.auditor_stability(verdicts)
    for table, model in ((stability, T.AuditorStability), (matrix, T.AuditorStabilityMatrix),
                         (A.cross_judge_agreement(verdicts), T.CrossJudgeAgreement),
                         (A.judge_vs_effects(verdicts, T.empty_table(T.FitEffects)), T.JudgeVsEffects)):
        assert list(table.columns) == T.columns(model) and table.empty
        model.validate(table)
