"""The LLM-as-judge audit (study 003) over fit_scores: verdicts, the judge's stability, and the
judge held against the statistics. No judge configured: nothing materialises, and the log says why."""

import dagster as dg
import pandas as pd

from resumebias_dagster.core.jd_audit.judge import (
    cross_judge_agreement as compute_agreement,
)
from resumebias_dagster.core.jd_audit.judge import (
    family_of,
    judge_cells,
    judge_summary,
    load_judge_prompts,
    run_judge,
)
from resumebias_dagster.core.jd_audit.judge import (
    judge_stability as compute_stability,
)
from resumebias_dagster.core.jd_audit.judge import (
    judge_vs_effects as compute_judge_vs_effects,
)
from resumebias_dagster.core.jd_audit.probes import load_probe_axes
from resumebias_dagster.core.models.model_config import load_judges, load_models
from resumebias_dagster.core.tables import JudgeVerdicts, empty_table
from resumebias_dagster.defs._metadata import UPDATE_WITH_UPSTREAM, table_metadata
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.providers import (
    ProvidersResource,
    stats_metadata,
)
from resumebias_dagster.schemas import (
    CrossJudgeAgreementType,
    JudgeStabilityMatrixType,
    JudgeStabilityType,
    JudgeVerdictsType,
    JudgeVsEffectsType,
)

NO_JUDGE = (
    "no judge configured: list a provider model under `judges:` in the models config (study 003 used "
    "gemini-2.5-pro) and export its API key; the audit never invents verdicts"
)


@dg.asset(
    dagster_type=JudgeVerdictsType,
    kinds={"python", "duckdb"},
    output_required=False,
    automation_condition=UPDATE_WITH_UPSTREAM,
)
def judge_verdicts(
    context: dg.AssetExecutionContext,
    catalog: CatalogResource,
    providers: ProvidersResource,
    fit_scores: pd.DataFrame,
    job_descriptions: pd.DataFrame,
):
    """Per judge and (model, JD, résumé, variant) cell with every run collected: the judge's
    verdict (justified / bias / mixed) on the first and on the most typical evaluation pair,
    with confidence, rationale and bias_signals checked to be verbatim quotes; samples_coincide,
    verdicts_agree and a self_judging flag when the judge is of the audited model's family."""
    judges = load_judges(catalog_dir=catalog.folder())
    if not judges:
        # An empty table, not a skip: the judge's tables and the report then say "no judge"
        # instead of not existing; no verdict is ever invented.
        context.log.warning(f"judge_verdicts: no verdicts: {NO_JUDGE}")
        yield dg.Output(
            empty_table(JudgeVerdicts),
            metadata={"judged": dg.MetadataValue.bool(False), "why_not": dg.MetadataValue.text(NO_JUDGE)},
        )
        return
    specs = load_models(catalog_dir=catalog.folder(), include_disabled=True)
    runs = {s.name: s.runs_per_cell for s in specs}
    families = {s.name: family_of(s) for s in specs}
    cells, skipped = judge_cells(fit_scores, runs)
    prompts = load_judge_prompts(catalog.folder())
    axes = load_probe_axes(catalog.folder())
    titles = {str(jd): str(title) for jd, title in zip(job_descriptions["jd"], job_descriptions["title"])}
    frames, meta = [], {}
    for judge in judges:
        run = providers.run_of(judge.name, context.log)
        verdicts, stats = run_judge(
            run,
            cells,
            fit_scores,
            prompts,
            judge_name=judge.name,
            judge_family=family_of(judge),
            model_families=families,
            job_titles=titles,
            axes=axes,
        )
        frames.append(verdicts)
        if stats is not None:
            meta.update({f"{judge.name}/{k}": v for k, v in stats_metadata(stats).items()})
    df = pd.concat(frames, ignore_index=True)
    summary = judge_summary(df, {j.name: family_of(j) for j in judges})
    reasons = {str(k): int(v) for k, v in skipped["reason"].value_counts().items()}
    yield dg.Output(
        df,
        metadata={
            **table_metadata(df.drop(columns=[c for c in df.columns if c.startswith("rationale")]), preview_rows=20),
            **meta,
            "judges": dg.MetadataValue.md(summary.to_markdown(index=False)),
            "cells_judged": dg.MetadataValue.int(len(cells)),
            "cells_skipped": dg.MetadataValue.int(len(skipped)),
            "skipped_because": dg.MetadataValue.json(reasons),
            "self_judging_rows": dg.MetadataValue.int(int(df["self_judging"].sum())),
        },
    )


@dg.multi_asset(
    outs={
        "judge_stability": dg.AssetOut(
            dagster_type=JudgeStabilityType, kinds={"python", "duckdb"}, automation_condition=UPDATE_WITH_UPSTREAM
        ),
        "judge_stability_matrix": dg.AssetOut(
            dagster_type=JudgeStabilityMatrixType,
            kinds={"python", "duckdb"},
            automation_condition=UPDATE_WITH_UPSTREAM,
        ),
    },
)
def judge_stability(context: dg.AssetExecutionContext, judge_verdicts: pd.DataFrame):
    """Does the judge flip? Over cells whose two samples are different runs: the 3x3 matrix of
    first-sample x typical-sample verdicts, disagreement rate with its denominator, Cohen's
    kappa, and the asymmetry bias->justified vs justified->bias (study 003)."""
    matrix, summary = compute_stability(judge_verdicts)
    yield dg.Output(summary, output_name="judge_stability", metadata=table_metadata(summary))
    yield dg.Output(
        matrix,
        output_name="judge_stability_matrix",
        metadata={"matrix": dg.MetadataValue.md(matrix.to_markdown(index=False) if len(matrix) else "(empty)")},
    )


@dg.asset(
    dagster_type=CrossJudgeAgreementType,
    kinds={"python", "duckdb"},
    automation_condition=UPDATE_WITH_UPSTREAM,
)
def cross_judge_agreement(context: dg.AssetExecutionContext, judge_verdicts: pd.DataFrame) -> pd.DataFrame:
    """With a second judge: agreement and Cohen's kappa of the two judges' headline verdicts per model."""
    df = compute_agreement(judge_verdicts)
    context.add_output_metadata(table_metadata(df))
    return df


@dg.asset(
    dagster_type=JudgeVsEffectsType,
    kinds={"python", "duckdb"},
    automation_condition=UPDATE_WITH_UPSTREAM,
)
def judge_vs_effects(
    context: dg.AssetExecutionContext, judge_verdicts: pd.DataFrame, fit_effects: pd.DataFrame
) -> pd.DataFrame:
    """The judge against the numbers, per judge and model: significant deltas (q < 0.05, above
    the placebo floor) the judge calls justified ("unverbalised bias") and bias verdicts on
    deltas that are noise, with both rates."""
    df = compute_judge_vs_effects(judge_verdicts, fit_effects)
    context.add_output_metadata(table_metadata(df))
    return df
