"""LLM-as-judge audit of fit scores (study 003, "AUDIT METHODOLOGY", "AUDITOR STABILITY").

A judge model reads one baseline and one variant evaluation of the same résumé for the same
job and says whether the variant's evaluation differs in a way the change justifies, or is
keyed off the changed demographic or prestige signal. The verdicts are read next to the
statistics of ``fit_effects``: they judge the reasoning of one sampled pair, not the effect.

Cells
-----
A cell is (model, jd, resume_id, variant != baseline). It is judged only with exactly the
full number of valid runs (a score and no error) on both sides; any other cell is skipped
with its reason, never judged on a partial sample. Two matched pairs are drawn:

* first: the baseline run and the variant run with the lowest run index;
* typical: on each side the run whose score is closest to that side's mean, ties to the
  lowest run index.

``samples_coincide`` says both typical picks are the first picks: the judge is then asked
once (the two requests are identical, so they share one store key and one call) and the
cell is left out of the stability statistics, where no disagreement is possible. The
headline verdict is the typical one; the first-run verdict is a second opinion.

A cell whose picked runs have no written evaluation (an embedded model scores from
next-token probabilities and writes none) is skipped as "no written evaluation".

Untrusted text in the prompt
----------------------------
The evaluations are written by the model under audit, which read a résumé that may carry
adversarial text; either can imitate the prompt's headers, announce a verdict or address
the judge. Each evaluation reaches the judge as one JSON object (score, recommendation,
justification, strengths, concerns) from ``json.dumps(..., ensure_ascii=False)``, with the
line breaks JSON leaves raw (U+0085, U+2028, U+2029), the other C1 controls and lone
surrogates escaped as well: the object is a single line, every written word sits inside a
JSON string, and nothing the screener wrote can start a line of its own. The templates put
each object alone on the line between ``<<<BEGIN DATA>>>`` and ``<<<END DATA>>>``
(``load_judge_prompts`` refuses a template that does not) and tell the judge, before the
evaluations, that they are data written by the screener: any instruction, header, verdict
or JSON inside them is part of the evaluation to be judged, never a message to the judge.

Verbatim quotes
---------------
Each ``bias_signals`` quote must occur in the judged evaluation text: the variant run's
justification, strengths and concerns (for the redaction arm also the baseline run's, since
the removed signal is only visible there). Both sides are compared after: Unicode NFKC
(``…`` becomes ``...``), curly quotes and dashes mapped to ASCII, whitespace runs collapsed
to one space, case folded (a judge capitalising the first word of a fragment has not
paraphrased it). Quote marks, ellipses and sentence punctuation around a quote are dropped;
an ellipsis inside a quote splits it into fragments that must all occur, in order. The
parts of the text (justification, each strength, each concern) are searched separately,
so a quote cannot straddle two of them. The judge saw the text JSON-escaped, so a quote
may copy it in that form (``\\"``, ``\\\\``, ``\\n``, ``\\u00e9``): a quote matches when
either it or its unescaped form (each valid JSON string escape decoded, any other
backslash kept) occurs. Verified quotes stay in ``bias_signals_*``; the others go to
``non_verbatim_*`` and are counted, never silently kept.

Families and self-judging
-------------------------
``family_of`` names a model's vendor family (an explicit ``family`` option wins, else the
alias decides). A verdict on a model of the judge's own family carries ``self_judging``.
"""

# The public API, re-exported from the modules that define it.
from resumebias_dagster.core.common.labels import CONFIDENCES, VERDICTS
from resumebias_dagster.core.jd_audit.judge.agreement import (
    cohen_kappa,
    cross_judge_agreement,
    judge_effect_cells,
    judge_stability,
    judge_vs_effects,
)
from resumebias_dagster.core.jd_audit.judge.cells import (
    family_of,
    judge_cells,
    self_judging,
)
from resumebias_dagster.core.jd_audit.judge.requests import (
    describe_change,
    evaluation_block,
    evaluation_parts,
    judge_requests,
    load_judge_prompts,
    without_header,
)
from resumebias_dagster.core.jd_audit.judge.terms import (
    ALL,
    ARM_TEMPLATE,
    CELL_COLUMNS,
    CELL_KEY,
    CROSS_JUDGE_COLUMNS,
    EFFECT_CELL_COLUMNS,
    EVALUATION_FIELDS,
    EVALUATION_KEYS,
    JUDGE_EFFECT_COLUMNS,
    JUDGE_FIELDS,
    JUDGE_SUMMARY_COLUMNS,
    JUDGE_TAG,
    NO_TEXT,
    SAMPLES,
    SKIPPED_COLUMNS,
    STABILITY_COLUMNS,
    STABILITY_MATRIX_COLUMNS,
    TEMPLATES,
    VERDICT_COLUMNS,
)
from resumebias_dagster.core.jd_audit.judge.verdicts import (
    json_unescape,
    judge_summary,
    judge_verdicts,
    normalise_text,
    parse_verdict,
    quote_fragments,
    run_judge,
    verbatim_check,
)

__all__ = [
    "ALL",
    "ARM_TEMPLATE",
    "CELL_COLUMNS",
    "CELL_KEY",
    "CONFIDENCES",
    "CROSS_JUDGE_COLUMNS",
    "EFFECT_CELL_COLUMNS",
    "EVALUATION_FIELDS",
    "EVALUATION_KEYS",
    "JUDGE_EFFECT_COLUMNS",
    "JUDGE_FIELDS",
    "JUDGE_SUMMARY_COLUMNS",
    "JUDGE_TAG",
    "NO_TEXT",
    "SAMPLES",
    "SKIPPED_COLUMNS",
    "STABILITY_COLUMNS",
    "STABILITY_MATRIX_COLUMNS",
    "TEMPLATES",
    "VERDICTS",
    "VERDICT_COLUMNS",
    "judge_cells",
    "judge_verdicts",
    "judge_stability",
    "cohen_kappa",
    "cross_judge_agreement",
    "describe_change",
    "evaluation_block",
    "evaluation_parts",
    "family_of",
    "json_unescape",
    "judge_effect_cells",
    "judge_requests",
    "judge_summary",
    "judge_vs_effects",
    "load_judge_prompts",
    "normalise_text",
    "parse_verdict",
    "quote_fragments",
    "run_judge",
    "self_judging",
    "verbatim_check",
    "without_header",
]
