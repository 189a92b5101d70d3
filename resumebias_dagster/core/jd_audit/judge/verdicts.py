"""The judge's answers: parsed strictly, quotes checked verbatim against the evaluations, one row per cell and judge."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.labels import CONFIDENCES, VERDICTS
from resumebias_dagster.core.common.parsing import UNREADABLE, parse_json_object, shown
from resumebias_dagster.core.jd_audit.judge.cells import self_judging
from resumebias_dagster.core.jd_audit.judge.requests import _picked_rows, evaluation_parts, judge_requests
from resumebias_dagster.core.jd_audit.judge.terms import (
    _SAMPLE_COLUMNS,
    ARM_TEMPLATE,
    CELL_KEY,
    JUDGE_SUMMARY_COLUMNS,
    SAMPLES,
    VERDICT_COLUMNS,
)
from resumebias_dagster.core.providers.fanout import Transport

# --------------------------------------------------------------------------- answers


def parse_verdict(result: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The verdict fields of one judge result, or ``(None, "<kind>: <message>")``.

    Strict: a JSON object whose ``verdict`` is one of justified/bias/mixed and ``confidence``
    one of high/medium/low (case and surrounding spaces aside), a non-empty string
    ``rationale`` and a list of strings ``bias_signals``. Anything else, a refusal or a
    failed call included, is an error: no verdict is ever guessed.
    """
    if not result.ok:
        return None, f"{result.error_kind}: {result.error_message or ''}".rstrip(": ")
    try:
        return _verdict_fields(result)
    except UNREADABLE as exc:
        return None, f"unparsable: the answer cannot be read ({type(exc).__name__})"


def _verdict_fields(result: Any) -> tuple[dict[str, Any] | None, str | None]:
    value = result.parsed_json
    if value is None:
        parsed = parse_json_object(result.text)
        if not parsed.ok:
            return None, f"unparsable: {parsed.reason}"
        value = parsed.value
    if not isinstance(value, dict):
        return None, "unparsable: the answer is not a JSON object"
    fields: dict[str, Any] = {}
    for key, allowed in (("verdict", VERDICTS), ("confidence", CONFIDENCES)):
        raw = value.get(key)
        word = raw.strip().lower() if isinstance(raw, str) else None
        if word not in allowed:
            return None, f"unparsable: {key} {shown(raw)} is not one of {', '.join(allowed)}"
        fields[key] = word
    rationale = value.get("rationale")
    if not isinstance(rationale, str) or not rationale.strip():
        return None, f"unparsable: rationale {shown(rationale)} is not a non-empty string"
    signals = value.get("bias_signals")
    if not isinstance(signals, list) or not all(isinstance(s, str) for s in signals):
        return None, f"unparsable: bias_signals {shown(signals)} is not a list of strings"
    fields["rationale"] = rationale.strip()
    fields["bias_signals"] = signals
    return fields, None


_ASCII = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2015": "-",
        "\u2212": "-",
    }
)
_SPACE = re.compile(r"\s+")
_ELLIPSIS = re.compile(r"\s*(?:\.\s*){3,}\s*")
_EDGE = " \"'`.,;:!?-*"


def normalise_text(text: str) -> str:
    """The form quotes and evaluations are compared in (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text).translate(_ASCII)
    return _SPACE.sub(" ", text).strip().casefold()


def quote_fragments(quote: str) -> list[str]:
    """A quote's fragments: normalised, split at inner ellipses, trimmed of quote marks,
    ellipses and punctuation at the edges; empty fragments dropped."""
    parts = _ELLIPSIS.split(normalise_text(quote))
    return [f for f in (p.strip(_EDGE) for p in parts) if f]


_JSON_ESCAPE = re.compile(r'\\(?:(["\\/bfnrt])|u([0-9a-fA-F]{4}))')
_JSON_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def json_unescape(text: str) -> str:
    """``text`` with each valid JSON string escape decoded (``\\"`` -> ``"``, ``\\\\`` -> ``\\``,
    ``\\n`` -> newline, ``\\u00e9`` -> ``é``, a ``\\u`` surrogate pair -> one character);
    any other backslash is kept as it is."""
    if "\\" not in text:
        return text
    out = _JSON_ESCAPE.sub(lambda m: _JSON_SIMPLE[m[1]] if m[1] else chr(int(m[2], 16)), text)
    return _SURROGATE_PAIR.sub(lambda m: chr(0x10000 + ((ord(m[0][0]) - 0xD800) << 10) + (ord(m[0][1]) - 0xDC00)), out)


def _occurs(fragments: list[str], texts: list[str]) -> bool:
    """Whether all ``fragments`` occur, in order, within one of ``texts``."""
    for text in texts if fragments else ():
        at = 0
        for fragment in fragments:
            at = text.find(fragment, at)
            if at < 0:
                break
            at += len(fragment)
        else:
            return True
    return False


def verbatim_check(quotes: Sequence[str], parts: str | Sequence[str]) -> list[bool]:
    """Per quote: whether it occurs in the evaluation text ``parts`` (one string or its
    separately searched parts), all its fragments in order within one part; as written or,
    the judge having seen the text JSON-escaped, with its JSON escapes decoded."""
    texts = [normalise_text(p) for p in ([parts] if isinstance(parts, str) else parts)]
    out = []
    for quote in quotes:
        unescaped = json_unescape(quote)
        forms = (quote,) if unescaped == quote else (quote, unescaped)
        out.append(any(_occurs(quote_fragments(form), texts) for form in forms))
    return out


def _judged(result: Any, parts: list[str]) -> dict[str, Any]:
    fields, error = parse_verdict(result)
    if fields is None:
        return {
            "verdict": None,
            "confidence": None,
            "rationale": None,
            "bias_signals": None,
            "non_verbatim": None,
            "n_signals": 0,
            "n_non_verbatim": 0,
            "error": error,
        }
    quotes = fields["bias_signals"]
    ok = verbatim_check(quotes, parts)
    kept = [q for q, v in zip(quotes, ok) if v]
    dropped = [q for q, v in zip(quotes, ok) if not v]
    return {
        "verdict": fields["verdict"],
        "confidence": fields["confidence"],
        "rationale": fields["rationale"],
        "bias_signals": json.dumps(kept, ensure_ascii=False),
        "non_verbatim": json.dumps(dropped, ensure_ascii=False),
        "n_signals": len(kept),
        "n_non_verbatim": len(dropped),
        "error": None,
    }


def judge_verdicts(
    cells: pd.DataFrame,
    fit_scores: pd.DataFrame,
    results_first: Sequence[Any],
    results_typical: Sequence[Any],
    *,
    judge_name: str,
    judge_family: str,
    model_families: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """One row per cell (``VERDICT_COLUMNS``) from the judge's results for its two samples.

    ``verdict`` is the headline (the typical sample's); ``verdicts_agree`` is NA when either
    verdict is missing; ``self_judging`` marks models of the judge's family
    (``model_families``: audited model name -> ``family_of`` its spec).
    """
    if not len(results_first) == len(results_typical) == len(cells):
        raise ValueError("judge_verdicts: one first and one typical result per cell")
    picked = (
        {k: f.to_dict("records", into=dict) for k, f in _picked_rows(cells, fit_scores).items()} if len(cells) else {}
    )
    columns: dict[str, list] = {f"{c}_{s}": [] for s in SAMPLES for c in _SAMPLE_COLUMNS}
    resolved = []
    for i, arm in enumerate(cells["arm"]):
        for sample, results in (("first", results_first), ("typical", results_typical)):
            parts = evaluation_parts(picked[f"{sample}_variant"][i])
            if ARM_TEMPLATE.get(arm) == "redaction":
                # The removed signal shows only in the baseline's evaluation.
                parts += evaluation_parts(picked[f"{sample}_baseline"][i])
            for key, value in _judged(results[i], parts).items():
                columns[f"{key}_{sample}"].append(value)
        resolved.append(results_typical[i].resolved_model or results_first[i].resolved_model)
    out = pd.DataFrame(
        {
            "judge": judge_name,
            "judge_resolved_model": pd.Series(resolved, dtype=object),
            **{
                c: cells[c].to_numpy()
                for c in (
                    *CELL_KEY,
                    "arm",
                    "axis",
                    "level",
                    "n_runs",
                    "baseline_mean",
                    "variant_mean",
                    "mean_delta",
                    "samples_coincide",
                )
            },
            "self_judging": self_judging(judge_family, cells["model"], model_families),
            **{k: pd.Series(v, dtype=np.int64 if k.startswith("n_") else object) for k, v in columns.items()},
        },
        index=pd.RangeIndex(len(cells)),
    )
    out["verdict"] = out["verdict_typical"]
    first, typical = out["verdict_first"], out["verdict_typical"]
    # NA where either sample has no verdict.
    both = (first.notna() & typical.notna()).to_numpy()
    out["verdicts_agree"] = pd.arrays.BooleanArray((first == typical).to_numpy(dtype=bool), ~both)
    return out[list(VERDICT_COLUMNS)]


def run_judge(
    run: Transport,
    cells: pd.DataFrame,
    fit_scores: pd.DataFrame,
    prompts: Mapping[str, str],
    *,
    judge_name: str,
    judge_family: str,
    model_families: Mapping[str, str] | None = None,
    job_titles: Mapping[str, str] | None = None,
    axes: Any = None,
    temperature: float | None = None,
) -> tuple[pd.DataFrame, Any]:
    """Judge every cell through ``run(requests) -> (results, stats)``; returns (verdicts, stats),
    stats None when there was no cell to judge (and no call)."""
    requests = judge_requests(cells, fit_scores, prompts, job_titles=job_titles, axes=axes, temperature=temperature)
    results, stats = run(requests) if requests else ([], None)
    n = len(cells)
    verdicts = judge_verdicts(
        cells,
        fit_scores,
        results[:n],
        results[n:],
        judge_name=judge_name,
        judge_family=judge_family,
        model_families=model_families,
    )
    return verdicts, stats


def judge_summary(verdicts: pd.DataFrame, judge_families: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Per judge: cells, distinct calls needed, self-judged cells, failed samples, verified and
    non-verbatim quotes, and headline "bias" verdicts without one verified quote."""
    d = verdicts
    errors = d["error_first"].notna().astype(int) + (d["error_typical"].notna() & ~d["samples_coincide"]).astype(int)
    g = (
        d.assign(
            calls=2 - d["samples_coincide"].astype(int),
            errors=errors,
            signals=d["n_signals_first"] + d["n_signals_typical"].where(~d["samples_coincide"], 0),
            non_verbatim=d["n_non_verbatim_first"] + d["n_non_verbatim_typical"].where(~d["samples_coincide"], 0),
            unquoted=(d["verdict_typical"] == "bias") & (d["n_signals_typical"] == 0),
        )
        .groupby("judge", sort=False)
        .agg(
            n_cells=("model", "size"),
            n_judge_calls_needed=("calls", "sum"),
            n_self_judging=("self_judging", "sum"),
            n_errors=("errors", "sum"),
            n_signals=("signals", "sum"),
            n_non_verbatim=("non_verbatim", "sum"),
            n_bias_without_quote=("unquoted", "sum"),
        )
        .reset_index()
    )
    quotes = g["n_signals"] + g["n_non_verbatim"]
    g["non_verbatim_rate"] = np.where(quotes > 0, g["n_non_verbatim"] / quotes.where(quotes > 0, 1), np.nan)
    g["judge_family"] = g["judge"].map(dict(judge_families or {}))
    return g[list(JUDGE_SUMMARY_COLUMNS)]
