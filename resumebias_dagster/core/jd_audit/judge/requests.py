"""What the judge is asked: the arm's prompt, the change in words, the two evaluations side by side."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.catalog import CatalogError, catalog_path
from resumebias_dagster.core.common.prompts import load_prompt
from resumebias_dagster.core.jd_audit.fit_stats import BASELINE
from resumebias_dagster.core.jd_audit.judge.terms import (
    ARM_TEMPLATE,
    DATA_BEGIN,
    DATA_END,
    EVALUATION_FIELDS,
    JUDGE_FIELDS,
    JUDGE_TAG,
    SAMPLES,
    TEMPLATES,
)

# --------------------------------------------------------------------------- requests


def without_header(text: str) -> str:
    """A judge template without its header: the lines starting with ``#`` at its top (the
    reasons for its rubric, for the people who edit it) and the blank lines after them."""
    lines = text.split("\n")
    start = 0
    while start < len(lines) and lines[start].startswith("#"):
        start += 1
    if start:
        while start < len(lines) and not lines[start].strip():
            start += 1
    return "\n".join(lines[start:])


def load_judge_prompts(catalog_dir=None) -> dict[str, str]:
    """The three judge templates (probe, prompt_injection, redaction), each without its header
    comment (``without_header``), with exactly ``JUDGE_FIELDS`` and each evaluation field alone on
    the line between a ``DATA_BEGIN`` and a ``DATA_END`` line."""
    prompts = {}
    for kind, name in TEMPLATES.items():
        text = without_header(load_prompt(name, catalog_dir, JUDGE_FIELDS))
        lines = text.split("\n")
        for field in EVALUATION_FIELDS:
            at = [i for i, line in enumerate(lines) if line == f"{{{field}}}"]
            if (
                len(at) != 1
                or not (0 < at[0] < len(lines) - 1)
                or (lines[at[0] - 1], lines[at[0] + 1]) != (DATA_BEGIN, DATA_END)
            ):
                path = catalog_path(f"prompts/{name}.txt", catalog_dir)
                raise CatalogError(
                    f"{path}: {{{field}}} must stand alone on the line between a {DATA_BEGIN} line and a "
                    f"{DATA_END} line (the screener's text is data, kept apart from the instructions)"
                )
        prompts[kind] = text
    return prompts


def _quoted_list(values: Sequence[Any]) -> str:
    return ", ".join(f"'{v}'" for v in values)


_PLACEBO = {
    "blank_line": lambda v: "a blank line was added before the experience section",
    "trailing_space": lambda v: "two trailing spaces were added to one line",
    "bullet_glyph": lambda v: f"the bullet character of every list item was changed to '{v.get('glyph')}'",
    "replace_word": lambda v: (
        f"in the {v.get('section')} section the word '{v.get('find')}' was replaced by '{v.get('replace')}'"
    ),
}
_BLINDED = {
    "name": "the name",
    "contact": "the contact details",
    "links": "the profile links",
    "employers": "the employer names",
    "schools": "the school names",
    "locations": "the locations",
    "dates": "the dates (each position's dates became its length)",
}


def _change_text(axis: Any, level: str, value: Any, name: str | None = None) -> str:
    """What one probe level changed, in words, by the edit that wrote it (core/jd_audit/probes/).
    ``name``: the name a person_name variant wrote (its ``name`` column), when known."""
    edit = axis.edit
    if edit == "person_name":
        written = name or (value if isinstance(value, str) else None)
        if written is None:  # a pool level, the name unrecorded: the names it draws from
            return (
                f"the candidate's name was changed from the baseline's to one of these names: {_quoted_list(value)} "
                "(name line, e-mail address and profile link)"
            )
        return (
            f"the candidate's name was changed from the baseline's to '{written}' "
            "(name line, e-mail address and profile link)"
        )
    if edit == "graduation_year":
        return (
            f"the year of the candidate's most recent degree was changed to {value} "
            "(earlier degrees moved with it); the same positions, in the same order and with the same "
            "titles and duties, now span the career since that degree, so the dates and the summary's "
            "years of experience changed with it (age and career length move together)"
        )
    if edit == "address":
        return f"the candidate's location on the contact line was changed to '{value}'"
    if edit == "career_gap":
        months = axis.params.get("months")
        return (
            f"an employment gap of {months} months, with the line '{value}', was inserted before the candidate's "
            "most recent position; the older positions and the degree moved earlier by that time, so every "
            "position's length and the total experience are unchanged"
        )
    if edit == "employer_names":
        return f"the candidate's employer names were replaced, in order, by names from this list: {_quoted_list(value)}"
    if edit == "employer_locations":
        return f"the cities of the candidate's employers were replaced by cities from this list: {_quoted_list(value)}"
    if edit == "school":
        return f"the candidate's school was changed to '{value}' (degree and year unchanged)"
    if edit == "anonymize":
        blinded = [_BLINDED.get(s, s) for s in value]
        listed = blinded[0] if len(blinded) == 1 else ", ".join(blinded[:-1]) + " and " + blinded[-1]
        name = (axis.params.get("placeholders") or {}).get("name", "Candidate A")
        return f"{listed} were replaced by neutral placeholders (such as '{name}')"
    if edit == "add_line":
        where = "at the top, after the contact line" if value.get("where") == "top" else "at the end"
        return f'this line was added {where}: "{value.get("text")}"'
    if edit == "placebo":
        describe = _PLACEBO.get(value.get("op"), lambda v: f"a formatting edit ({v.get('op')})")
        return describe(value) + "; an edit that cannot bear on the candidate's merit"
    return f"the {axis.label} was set to '{value}'"


def describe_change(axis_id: str, level: str, axes: Any = None, name: str | None = None) -> str:
    """The changed signal of variant ``<axis>_<level>`` in words, from ``probe_axes.yaml``
    (``axes``: a loaded ``ProbeAxes``); an axis or level it does not know is described by its ids.
    ``name``: the name a name variant wrote (a pool level writes a different one per résumé)."""
    axis = next((a for a in getattr(axes, "axes", ()) if a.id == axis_id), None)
    if axis is None or level not in axis.levels:
        text = f"the {axis_id} signal was set to '{name or level}'"
    else:
        text = _change_text(axis, level, axis.levels[level], name)
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _items(value: Any) -> list[str]:
    """The items of a strengths/concerns cell (JSON list text as fit_task stores it)."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return []
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return [value] if value.strip() else []
        value = parsed
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    return [str(value)] if str(value).strip() else []


def _text(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value).strip()


def _written(value: Any) -> str | None:
    """A written field exactly as the screener wrote it; None when missing or blank."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    value = str(value)
    return value if value.strip() else None


# What json.dumps(ensure_ascii=False) leaves raw but must not reach the judge raw: line breaks
# JSON does not escape (NEL, U+2028, U+2029; str.splitlines and many tokenizers end a line
# there), the other C1 controls and DEL, and lone surrogates (not encodable as UTF-8).
_RAW_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def evaluation_block(row: Mapping[str, Any]) -> str:
    """One fit row as the judge sees it: one JSON object on one line (see the module docstring).

    Keys ``EVALUATION_KEYS``: the score (an int when whole), the recommendation and the
    justification as written (null when blank), the strengths and concerns as lists.
    ``json.loads`` gives back every text exactly.
    """
    score = float(row["score"])
    value = {
        "score": int(score) if score.is_integer() else score,
        "recommendation": _written(row.get("recommend")),
        "justification": _written(row.get("justification")),
        "strengths": _items(row.get("strengths")),
        "concerns": _items(row.get("concerns")),
    }
    text = json.dumps(value, ensure_ascii=False)
    return _RAW_UNSAFE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def evaluation_parts(row: Mapping[str, Any]) -> list[str]:
    """The written parts of one evaluation a quote may come from."""
    parts = [_text(row.get("justification")), *_items(row.get("strengths")), *_items(row.get("concerns"))]
    return [p for p in parts if p]


def _picked_rows(cells: pd.DataFrame, fit_scores: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The fit rows of each cell's four picks (first/typical x baseline/variant), in cell order."""
    index = pd.MultiIndex.from_frame(
        fit_scores[["model", "jd", "resume_id", "variant", "run"]].astype({"run": np.int64})
    )
    picked = {}
    for sample in SAMPLES:
        for side in ("baseline", "variant"):
            variant = np.full(len(cells), BASELINE, dtype=object) if side == "baseline" else cells["variant"].to_numpy()
            keys = pd.MultiIndex.from_arrays(
                [
                    cells["model"].to_numpy(),
                    cells["jd"].to_numpy(),
                    cells["resume_id"].to_numpy(),
                    variant,
                    cells[f"{sample}_{side}_run"].to_numpy(dtype=np.int64),
                ]
            )
            at = index.get_indexer(keys)
            if (at < 0).any():
                raise ValueError("judge: a picked run of judge_cells is not in fit_scores (pass the same table)")
            picked[f"{sample}_{side}"] = fit_scores.iloc[at].reset_index(drop=True)
    return picked


def _signed(x: float) -> str:
    return f"{x:+.2f}"


def judge_requests(
    cells: pd.DataFrame,
    fit_scores: pd.DataFrame,
    prompts: Mapping[str, str],
    *,
    job_titles: Mapping[str, str] | None = None,
    axes: Any = None,
    temperature: float | None = None,
) -> list:
    """The judge's requests: ``2 * len(cells)``, cell ``i``'s first sample at ``i`` and its
    typical sample at ``len(cells) + i``.

    A cell whose samples coincide gets the same request twice: one store key, one call.
    ``prompts``: ``load_judge_prompts()``; ``job_titles``: jd -> title (default the jd id);
    ``axes``: the ``ProbeAxes`` that describe each change (default the catalog's);
    ``temperature``: None uses the judge entry's own.
    """
    from resumebias_dagster.core.jd_audit.probes import load_probe_axes
    from resumebias_dagster.core.providers.types import ChatRequest

    if axes is None:
        axes = load_probe_axes()
    titles = dict(job_titles or {})
    picked = _picked_rows(cells, fit_scores)
    # The name each cell's variant wrote (fit_scores' `name`, from probe_variants): a pool level
    # writes a different name into each résumé, so the change is described by that name.
    variant_rows = picked["first_variant"]
    names = (
        variant_rows["name"].to_numpy(dtype=object)
        if "name" in variant_rows.columns
        else np.full(len(cells), None, dtype=object)
    )
    changes: dict[tuple[str, str, str | None], str] = {}
    blocks = {k: [evaluation_block(r) for r in frame.to_dict("records", into=dict)] for k, frame in picked.items()}
    out: dict[str, list] = {s: [] for s in SAMPLES}
    for i, cell in enumerate(cells.to_dict("records", into=dict)):
        template = prompts[ARM_TEMPLATE.get(cell["arm"], "probe")]
        name = None if pd.isna(names[i]) else str(names[i])
        change_key = (str(cell["axis"]), str(cell["level"]), name)
        if change_key not in changes:
            changes[change_key] = describe_change(*change_key[:2], axes=axes, name=name)
        fields = {
            "job_title": titles.get(cell["jd"], cell["jd"]),
            "change": changes[change_key],
            "n_runs": int(cell["n_runs"]),
            "baseline_mean": f"{cell['baseline_mean']:.2f}",
            "variant_mean": f"{cell['variant_mean']:.2f}",
            "mean_delta": _signed(cell["mean_delta"]),
        }
        for sample in SAMPLES:
            if sample == "typical" and cell["samples_coincide"]:
                out[sample].append(out["first"][i])
                continue
            prompt = template.format(
                **fields,
                baseline_evaluation=blocks[f"{sample}_baseline"][i],
                variant_evaluation=blocks[f"{sample}_variant"][i],
            )
            out[sample].append(
                ChatRequest.from_prompt(prompt, json_mode=True, temperature=temperature, tag=JUDGE_TAG, task="judge")
            )
    return out["first"] + out["typical"]
