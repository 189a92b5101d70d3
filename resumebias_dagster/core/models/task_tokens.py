"""The output-token limit of every task, declared in one place.

The models config's ``max_tokens`` is checked against these (``model_config``), and each task
sends its limit with every request. Kept apart from the tasks so the config can check limits
without importing them (the tasks import the config).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskTokens:
    """The output-token limit of one task. ``default``: what a request of the task carries when
    the model entry sets none, room for the answer's long cases. ``minimum``: the smallest limit
    that holds the task's answer; a config below it is refused (its answers would be cut off)."""

    task: str
    default: int
    minimum: int
    answer: str  # what the answer is, for messages


# The answer is one label word; the default leaves room for "Senior." or a short lead-in
# ("Seniority level: mid") that the parser still reads.
SENIORITY_TOKENS = TaskTokens("seniority", default=32, minimum=4, answer="one label word: junior, mid or senior")
# A fit answer (prompts/fit_scoring.txt) is about 150 tokens, a wordy one about 300: a limit
# below the minimum cuts typical answers off mid-JSON, and every cut answer is unparsable.
FIT_TOKENS = TaskTokens(
    "fit",
    default=1024,
    minimum=256,
    answer="a JSON object with score, recommend, justification, three strengths and three concerns",
)
# A verdict (JSON with a rationale and exact quotes) is about 150-350 tokens (study 003 budgets
# about 200 output tokens per prompt); a judge capped below the minimum returns cut-off JSON.
JUDGE_TOKENS = TaskTokens(
    "judge",
    default=1024,
    minimum=256,
    answer="a JSON verdict with confidence, a two- or three-sentence rationale and quoted bias signals",
)
# Notebook 004's résumés average 435 words (neutral) and 588 (overstated), about 600-900
# tokens; the longest, or one rendered as JSON fields, need up to about twice that.
GENERATION_TOKENS = TaskTokens(
    "generation",
    default=4096,
    minimum=2048,
    answer="a complete résumé, or its fields as JSON; notebook 004's average 435-588 words, the longest twice that",
)
# A ranking (prompts/ranking.txt: one full name per line) of 8 candidates is about 40 tokens;
# the default leaves room for a preamble or a reason per line, which the parser reads past.
# Below the minimum a numbered list of 8 names with short reasons is cut off, and a cut-off
# list is a partial ranking.
RANKING_TOKENS = TaskTokens(
    "ranking",
    default=512,
    minimum=128,
    answer="the candidates' full names, best first, one per line",
)
# In the order of ``core.providers.types.TASKS``.
TASK_TOKENS = {t.task: t for t in (SENIORITY_TOKENS, FIT_TOKENS, JUDGE_TOKENS, GENERATION_TOKENS, RANKING_TOKENS)}
