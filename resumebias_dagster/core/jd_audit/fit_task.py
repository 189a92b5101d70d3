"""The fit-scoring task (study 003): a job description and a résumé variant in, a 1-10 score
with its recommendation, justification, strengths and concerns out.

``predict_fit`` runs the task on a model of any kind through the kind's runner
(``core/models/kinds``), reading each form of answer in ``FitWork``: an embedded LLM's 1-10
distribution from next-token probabilities (``local_fit``), a provider's JSON answer or an
endpoint's reply through the transport (``core.providers``), a Python function's answers.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.parsing import UNREADABLE, parse_json_object, shown, valid_utf8
from resumebias_dagster.core.jd_audit.job_descriptions import fit_prompt
from resumebias_dagster.core.models.kinds import run_task
from resumebias_dagster.core.models.runtime import ModelRuntime, Progress
from resumebias_dagster.core.models.spec import ModelSpec
from resumebias_dagster.core.providers.fanout import Transport
from resumebias_dagster.core.providers.http_scorer import ScorerWork
from resumebias_dagster.core.tables import FitScores, columns

SCORES = tuple(range(1, 11))
RECOMMENDATIONS = ("yes", "no", "maybe")
# The fit_scores table's columns (core/tables/): those up to `run` name the row (and carry the
# variant's name), the rest are the fields of an answer.
FIT_COLUMNS = tuple(columns(FitScores))
ROW_COLUMNS = FIT_COLUMNS[: FIT_COLUMNS.index("run") + 1]
FIELD_COLUMNS = FIT_COLUMNS[len(ROW_COLUMNS) :]
# What an embedded base model is asked to continue: the answer's first field, so the next
# token is the score's first digit.
LOCAL_SCORE_CUE = ' {"score": '
NO_TEXT_NOTE = "scored from next-token probabilities: an embedded base model writes no justification"
PYTHON_NOTE = "scored by a Python function: it writes no justification"
HTTP_NOTE = "scored by an HTTP endpoint: it writes no justification"


def parse_fit_answer(value: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The fields of a parsed JSON answer, or the reason it is unusable.

    Strict on what the statistics read (an integer score 1-10; "8" and 8.0 are accepted as 8,
    "8/10" or 7.5 are not) and lenient on the prose fields, which are kept as given, save that
    they are made valid UTF-8 (a lone surrogate would fail the table write on every re-run).
    """
    try:
        return _fit_fields(value)
    except UNREADABLE as exc:
        return None, f"the answer cannot be read ({type(exc).__name__})"


def _fit_fields(value: Any) -> tuple[dict[str, Any] | None, str | None]:
    if not isinstance(value, dict):
        return None, "the answer is not a JSON object"
    raw = value.get("score")
    if isinstance(raw, bool) or raw is None:
        return None, f"score {shown(raw)} is not an integer from 1 to 10"
    if isinstance(raw, str) and raw.strip().isdigit() and len(raw.strip()) <= 3:
        raw = int(raw.strip())
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    if not isinstance(raw, int) or not 1 <= raw <= 10:
        return None, f"score {shown(raw)} is not an integer from 1 to 10"
    recommend = value.get("recommend")
    recommend = recommend.strip().lower() if isinstance(recommend, str) else None
    if recommend is not None and recommend not in RECOMMENDATIONS:
        return None, f"recommend {shown(value.get('recommend'))} is not one of yes, no, maybe"

    def listed(key: str) -> str | None:
        items = value.get(key)
        if items is None:
            return None
        if not isinstance(items, list):
            items = [items]
        return valid_utf8(json.dumps([str(i) for i in items], ensure_ascii=False))

    justification = value.get("justification")
    return {
        "score": float(raw),
        "recommend": recommend,
        "justification": None if justification is None else valid_utf8(str(justification)),
        "strengths": listed("strengths"),
        "concerns": listed("concerns"),
    }, None


class FitPrompt(str):
    """A fit prompt that knows how many of its leading characters every prompt of its job
    description shares (``shared_chars``: the template up to the résumé, the job description
    filled in): the prefix a provider's prompt cache can serve (``fit_requests``)."""

    shared_chars: int

    def __new__(cls, text: str, shared_chars: int = 0) -> FitPrompt:
        prompt = super().__new__(cls, text)
        prompt.shared_chars = shared_chars
        return prompt


_RESUME_MARK = "\x00resume\x00"


def fit_prompts(variants: pd.DataFrame, job_description: str, template: str) -> list[str]:
    """The fit prompt of each variant (``FitPrompt``s: each knows its shared prefix)."""
    # The shared prefix: what the template makes before the résumé, the job description filled in.
    marked = fit_prompt(template, job_description, _RESUME_MARK)
    shared = max(0, marked.find(_RESUME_MARK))
    prompts: list[str] = []
    for text in variants["text"]:
        prompt = fit_prompt(template, job_description, text)
        prompts.append(FitPrompt(prompt, shared if prompt[:shared] == marked[:shared] else 0))
    return prompts


def local_fit_prompts(variants: pd.DataFrame, job_description: str, template: str) -> list[str]:
    """The fit prompts an embedded LLM scores: each ends with ``LOCAL_SCORE_CUE``."""
    return [p + LOCAL_SCORE_CUE for p in fit_prompts(variants, job_description, template)]


def fit_rows(variants: pd.DataFrame, model: str, jd: str, runs: int, fields: dict[str, np.ndarray]) -> pd.DataFrame:
    """Rows (variant-major, ``runs`` per variant) from per-row field arrays of length n*runs."""
    n = len(variants)
    rep = np.repeat(np.arange(n), runs)
    out = pd.DataFrame(
        {
            "model": model,
            "jd": jd,
            "resume_id": variants["resume_id"].to_numpy()[rep],
            "variant": variants["variant"].to_numpy()[rep],
            "arm": variants["arm"].to_numpy()[rep],
            "axis": variants["axis"].to_numpy()[rep],
            "level": variants["level"].to_numpy()[rep],
            # A variants table from before the `name` column (or a hand-made one) names nobody.
            "name": (
                variants["name"].to_numpy(dtype=object)
                if "name" in variants.columns
                else np.full(n, None, dtype=object)
            )[rep],
            "run": np.tile(np.arange(runs, dtype=np.int64), n),
        }
    )
    assert tuple(out.columns) == ROW_COLUMNS, "fit_rows must build the row columns of FitScores"
    for column in FIELD_COLUMNS:
        out[column] = fields.get(column, np.full(n * runs, None, dtype=object))
    return out.astype({"score": float, "latency_s": float, "expected_score": float})


def fit_requests(prompts: list[str], runs: int) -> list:
    """The provider requests of one (model, JD): ``runs`` per prompt, prompt-major; each marks
    its prompt's shared prefix (``FitPrompt.shared_chars``; none for a plain string) for the
    provider's prompt cache, which does not change its key."""
    from resumebias_dagster.core.providers.types import ChatRequest

    return [
        ChatRequest.from_prompt(
            str(p), json_mode=True, sample_index=r, task="fit", cache_prefix_chars=getattr(p, "shared_chars", 0)
        )
        for p in prompts
        for r in range(runs)
    ]


def predict_fit_with_provider(run: Transport, variants: pd.DataFrame, *, jd: str, jd_text: str, template: str, spec):
    """Fit rows of one (model, JD) through a provider; returns (rows, stats)."""
    return FitWork(variants, jd=jd, jd_text=jd_text, template=template).with_chat(spec, run)


def fit_rows_from_chat(variants: pd.DataFrame, spec, jd: str, results, stats) -> pd.DataFrame:
    """Fit rows of a chat model's answers (one per variant and run), each parsed strictly
    (``parse_fit_answer``); an unreadable answer is an "unparsable" row, counted in ``stats``."""
    fields: dict[str, list] = {c: [] for c in FIELD_COLUMNS}
    for result in results:
        parsed, problem = (None, None)
        if result.ok:
            value = result.parsed_json if result.parsed_json is not None else parse_json_object(result.text).value
            parsed, problem = parse_fit_answer(value)
        error = (
            None
            if parsed
            else f"unparsable: {problem}"
            if result.ok
            else f"{result.error_kind}: {result.error_message or ''}".rstrip(": ")
        )
        if result.ok and not parsed:
            stats.errors["unparsable"] += 1
        row = parsed or {"score": np.nan, "recommend": None, "justification": None, "strengths": None, "concerns": None}
        for key, value in row.items():
            fields[key].append(value)
        fields["resolved_model"].append(result.resolved_model)
        fields["latency_s"].append(result.latency_s)
        fields["error"].append(error)
        fields["expected_score"].append(np.nan)
        fields["score_distribution"].append(None)
        fields["note"].append(None)
    arrays = {k: np.asarray(v, dtype=object) for k, v in fields.items()}
    return fit_rows(variants, spec.name, jd, spec.runs_per_cell, arrays)


def predict_fit_with_local_llm(
    spec, variants, *, jd: str, jd_text: str, template: str, settings, cache_dir, progress=None, log=None
):
    """Fit rows of one (model, JD): the 1-10 distribution per variant, ``runs_per_cell`` scores
    sampled from it at the configured temperature."""
    import json
    import time

    from resumebias_dagster.core.jd_audit.local_fit import score_distribution
    from resumebias_dagster.core.models.calibration import calibrated_settings
    from resumebias_dagster.core.models.local_llm import (
        count_prompt_tokens,
        load_causal_lm,
        sample_labels,
        sampling_seed,
        tempered,
    )
    from resumebias_dagster.core.models.model_sources import resolved_source

    source = spec.option("source")
    model, tokenizer = load_causal_lm(source, cache_dir, settings, setting=f"models.{spec.name}.source")
    prompts = local_fit_prompts(variants, jd_text, template)
    settings, _ = calibrated_settings(
        settings,
        lambda st, ps: score_distribution(model, tokenizer, ps, st)[0],
        prompts,
        functools.partial(count_prompt_tokens, tokenizer),
        model=source,
        task="fit",
        cache_dir=cache_dir,
        log=log,
    )
    started = time.perf_counter()
    probs, _mass = score_distribution(model, tokenizer, prompts, settings, progress)
    per_variant = (time.perf_counter() - started) / max(1, len(prompts))
    runs = spec.runs_per_cell
    dist = tempered(probs, spec.temperature)
    samples = sample_labels(probs, spec.temperature, runs, sampling_seed(spec.name, salt=f"fit|{jd}"))
    n = len(variants)
    expected = dist @ np.arange(1, 11)
    fields = {
        "score": (samples.reshape(-1) + 1).astype(float),
        "resolved_model": np.full(n * runs, resolved_source(source), dtype=object),
        "latency_s": np.full(n * runs, per_variant),
        "note": np.full(n * runs, NO_TEXT_NOTE, dtype=object),
        "error": np.full(n * runs, None, dtype=object),
        "expected_score": np.repeat(expected, runs),
        "score_distribution": np.repeat(
            np.array([json.dumps([round(float(x), 6) for x in row]) for row in dist], dtype=object), runs
        ),
    }
    return fit_rows(variants, spec.name, jd, runs, fields)


def fit_item_id(jd: str, row: Any) -> str:
    """The id a scorer of the user's sees for one probe variant: ``<jd>:<resume_id>:<variant>``."""
    return f"{jd}:{row.resume_id}:{row.variant}"


class FitWork(ScorerWork):
    """The fit task on ``variants`` for one job description, in every form of answer it reads."""

    task = "fit"
    table = FitScores

    def __init__(self, variants: pd.DataFrame, *, jd: str, jd_text: str, template: str):
        self.variants = variants
        self.jd = jd
        self.jd_text = jd_text
        self.template = template

    def chat_requests(self, spec) -> list:
        return fit_requests(fit_prompts(self.variants, self.jd_text, self.template), spec.runs_per_cell)

    def from_chat(self, spec, results, stats) -> pd.DataFrame:
        return fit_rows_from_chat(self.variants, spec, self.jd, results, stats)

    def with_causal_lm(self, spec, runtime: ModelRuntime, progress: Progress | None) -> pd.DataFrame:
        return predict_fit_with_local_llm(
            spec,
            self.variants,
            jd=self.jd,
            jd_text=self.jd_text,
            template=self.template,
            settings=runtime.compute,
            cache_dir=runtime.cache_dir,
            progress=progress,
            log=runtime.log,
        )

    def scorer_items(self) -> list[dict[str, Any]]:
        return [
            {"id": fit_item_id(self.jd, row), "task": "fit", "resume": row.text, "job_description": self.jd_text}
            for row in self.variants.itertuples(index=False)
        ]

    def from_answers(self, spec, answers, resolved_model: str) -> pd.DataFrame:
        """A scorer's one answer per variant is every run's (no distribution, no text:
        justification, strengths and concerns are None)."""
        runs = spec.runs_per_cell
        n = len(answers)

        def per_row(values, dtype=object) -> np.ndarray:
            return np.repeat(np.asarray(values, dtype=dtype).reshape(n), runs)

        fields = {
            "score": per_row([a.score for a in answers], float),
            "recommend": per_row([a.recommend for a in answers]),
            "resolved_model": np.full(n * runs, resolved_model, dtype=object),
            "latency_s": per_row([a.latency_s for a in answers], float),
            "note": np.full(n * runs, PYTHON_NOTE, dtype=object),
            "error": np.full(n * runs, None, dtype=object),
            "expected_score": np.full(n * runs, np.nan),
        }
        return fit_rows(self.variants, spec.name, self.jd, runs, fields)

    def from_replies(self, spec, results, replies) -> pd.DataFrame:
        """One row per call: a failed call is an error row, a reply the answer paths cannot read
        an "unparsable" one (none readable has stopped the run: the paths are wrong, and the
        stored replies make fixing them cost no call)."""
        n = len(results)
        fields = {
            "score": np.asarray([np.nan if isinstance(r, str) else r.score for r in replies], dtype=float),
            "recommend": np.asarray([None if isinstance(r, str) else r.recommend for r in replies], dtype=object),
            "resolved_model": np.asarray([r.resolved_model for r in results], dtype=object),
            "latency_s": np.asarray([r.latency_s for r in results], dtype=float),
            "note": np.full(n, HTTP_NOTE, dtype=object),
            "error": np.asarray([r if isinstance(r, str) else None for r in replies], dtype=object),
            "expected_score": np.full(n, np.nan),
        }
        return fit_rows(self.variants, spec.name, self.jd, spec.runs_per_cell, fields)


def predict_fit(
    spec: ModelSpec,
    variants: pd.DataFrame,
    *,
    jd: str,
    jd_text: str,
    template: str,
    runtime: ModelRuntime,
    progress: Progress | None = None,
) -> tuple[pd.DataFrame, Any]:
    """Fit rows of model ``spec`` for one job description, and the transport run's stats (None
    for a model that runs here), by the kind's runner (``core/models/kinds``)."""
    return run_task(spec, FitWork(variants, jd=jd, jd_text=jd_text, template=template), runtime, progress)
