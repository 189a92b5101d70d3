"""The job-description audit (study 003): probes, fit scores by model x JD, effects."""

import dagster as dg
import pandas as pd
from pydantic import Field

from resumebias_dagster.core.common.snapshots import separate_snapshots, snapshots_of
from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.jd_audit.fit_pooled import axis_summary
from resumebias_dagster.core.jd_audit.fit_stats import (
    fit_effects as compute_fit_effects,
)
from resumebias_dagster.core.jd_audit.fit_stats import model_summary
from resumebias_dagster.core.jd_audit.fit_task import predict_fit
from resumebias_dagster.core.jd_audit.job_descriptions import (
    load_fit_template,
    load_job_descriptions,
)
from resumebias_dagster.core.jd_audit.probes import (
    DEFAULT_ARM,
    axis_arms,
    check_probe_variants,
    select_probe_resumes,
)
from resumebias_dagster.core.jd_audit.probes import (
    probe_variants as make_probe_variants,
)
from resumebias_dagster.core.jd_audit.probes.applicability import resumes_left_out, skip_reasons, skipped_probes
from resumebias_dagster.core.jd_audit.probes.axes import load_probe_axes
from resumebias_dagster.core.jd_audit.probes.variants import applying_axes
from resumebias_dagster.defs._cells import model_jd_cells, record_cell
from resumebias_dagster.defs._metadata import UPDATE_WITH_UPSTREAM, json_by_key, table_metadata
from resumebias_dagster.defs.user_resumes.source import RESUMES_DESCRIPTION, ResumeSource
from resumebias_dagster.partitions import kind_tags, model_jd_partitions
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import (
    ProvidersResource,
    progress_logger,
)
from resumebias_dagster.resources.runtime import model_runtime
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.schemas import (
    FitAxisSummaryType,
    FitEffectsType,
    FitModelSummaryType,
    FitScoresType,
    JobDescriptionsType,
    ProbeVariantsType,
)


@dg.asset(dagster_type=JobDescriptionsType, kinds={"python", "duckdb"})
def job_descriptions(context: dg.AssetExecutionContext, catalog: CatalogResource) -> pd.DataFrame:
    """The job descriptions of the audit: the 17 packaged roles of study 003, or the `job_descriptions/`
    folder of the user's catalog folder."""
    df = load_job_descriptions(catalog_dir=catalog.folder())
    context.add_output_metadata(table_metadata(df.drop(columns=["text"]), preview_rows=20))
    return df


# The skipped (résumé, axis) pairs listed one by one in probe_variants' metadata (all are counted).
SKIPPED_LISTED = 200


class ProbeVariantsConfig(dg.Config):
    """The base résumés of the arm; the defaults are fit_design.yaml's (of $RESUMEBIAS_CATALOG_DIR
    or the packaged catalog, read when the definitions load)."""

    resumes: ResumeSource = Field(
        default=ResumeSource.generated,
        description=RESUMES_DESCRIPTION + ": every one of them, each with the probe axes that user_resume_probes "
        "says apply to it (the skipped axes are listed in the metadata); occupation, levels and per_level "
        "then do not apply. probe_variants only: rankings take the generated résumés",
    )
    occupation: str = Field(
        default=DEFAULT_ARM["occupation"],
        description="occupation of the base résumés probed (the JDs are software roles); default from fit_design.yaml",
    )
    levels: list[str] = Field(
        default_factory=lambda: list(DEFAULT_ARM["levels"]),
        description="seniority levels of the base résumés probed; default from fit_design.yaml",
    )
    per_level: int = Field(
        default=DEFAULT_ARM["per_level"],
        ge=1,
        description="base résumés per level (the first ones of each level); default from fit_design.yaml",
    )


def choose_base_resumes(
    context: dg.AssetExecutionContext, config: ProbeVariantsConfig, base_resumes: pd.DataFrame, asset: str
) -> pd.DataFrame:
    """The first `per_level` base résumés of the occupation at each level; none is a failure,
    fewer than asked a warning (the levels are then unbalanced). Generated résumés only:
    `resumes: user` is a failure here (rankings inherit the setting)."""
    if config.resumes is not ResumeSource.generated:
        raise dg.Failure(
            f"{asset}: resumes {config.resumes.value!r} is not supported: {asset} takes the generated base_resumes "
            "(leave resumes at 'generated'); only probe_variants and name_variants run on your own résumés"
        )
    chosen = select_probe_resumes(base_resumes, config.occupation, config.levels, config.per_level)
    if chosen.empty:
        raise dg.Failure(f"{asset}: no base résumé of occupation {config.occupation!r} at levels {config.levels}")
    per_level = chosen["seniority"].value_counts().reindex(config.levels, fill_value=0)
    short = {level: int(n) for level, n in per_level.items() if n < config.per_level}
    if short:
        context.log.warning(
            f"{asset}: fewer than {config.per_level} base résumés of {config.occupation!r} at {short}: "
            "the levels are unbalanced (more base_resumes, or a smaller per_level, balances them)"
        )
    return chosen


def _user_probe_variants(
    context: dg.AssetExecutionContext, catalog: CatalogResource, user_resumes: pd.DataFrame, probes: pd.DataFrame
) -> tuple[pd.DataFrame, dict]:
    """The variants of the user's résumés, each with the axes user_resume_probes says apply, and
    the metadata listing what is skipped."""
    if not len(user_resumes):
        raise dg.Failure(
            "probe_variants: resumes 'user', but user_resumes has no résumé: materialise user_resumes with a "
            "folder (or csv) of your résumés first, then user_resume_probes"
        )
    spec = load_probe_axes(catalog.folder())
    axes = [a.id for a in spec.axes]
    try:
        applying_axes(user_resumes["resume_id"], probes, spec)
    except ValueError as exc:
        raise dg.Failure(
            f"{exc}. user_resume_probes does not match user_resumes and probe_axes.yaml: materialise "
            "user_resume_probes again (after user_resumes)"
        ) from None
    source = user_resumes.set_index("resume_id")["source"]
    left_out = resumes_left_out(probes[probes["resume_id"].isin(source.index)], axes)
    if len(left_out) == len(user_resumes):
        raise dg.Failure(
            f"probe_variants: no probe axis applies to any of your {len(user_resumes)} résumés "
            f"({', '.join(source[left_out].head(10))}): user_resume_probes says why per axis; the probes edit "
            "résumés in the generated layout (sections, 'Employer | City | dates' and 'School | year' lines)"
        )
    try:
        df = make_probe_variants(user_resumes, catalog_dir=catalog.folder(), applicability=probes)
    except ValueError as exc:
        raise dg.Failure(f"{exc} (user_resume_probes said the axis applies: materialise it again)") from None
    skipped = skipped_probes(probes[probes["resume_id"].isin(source.index)], axes)
    for r in left_out:
        context.log.warning(f"probe_variants: {source[r]} ({r}) left out: no probe axis applies to it")
    reasons = skip_reasons(skipped)
    used = user_resumes[~user_resumes["resume_id"].isin(left_out)]
    return df, {
        "resume_source": dg.MetadataValue.text(ResumeSource.user.value),
        "resumes": dg.MetadataValue.json(used["resume_id"].tolist()),
        "resumes_per_level": json_by_key(used["seniority"].fillna("unlabelled").value_counts().sort_index()),
        "skipped_pairs": dg.MetadataValue.int(len(skipped)),
        "skipped_per_axis": json_by_key(skipped["axis"].value_counts().reindex(axes, fill_value=0)),
        "skip_reasons": dg.MetadataValue.md(reasons.to_markdown(index=False) if len(reasons) else "(none)"),
        "skipped": dg.MetadataValue.md(
            skipped.assign(source=skipped["resume_id"].map(source))[["source", "resume_id", "axis", "reason"]]
            .head(SKIPPED_LISTED)
            .to_markdown(index=False)
            if len(skipped)
            else "(none)"
        ),
        "left_out_resumes": dg.MetadataValue.md(
            "\n".join(f"- {source[r]} ({r}): no probe axis applies" for r in left_out) or "(none)"
        ),
    }


@dg.asset(dagster_type=ProbeVariantsType, kinds={"python", "duckdb"})
def probe_variants(
    context: dg.AssetExecutionContext,
    config: ProbeVariantsConfig,
    catalog: CatalogResource,
    base_resumes: pd.DataFrame,
    user_resumes: pd.DataFrame,
    user_resume_probes: pd.DataFrame,
) -> pd.DataFrame:
    """Per base résumé: the baseline and one variant per (axis, level) of `probe_axes.yaml`,
    each changing exactly one signal (probes, anonymisation, prompt injection, placebo). A name
    level's pool gives each résumé its own name (the `name` column). With `resumes: user`: every
    résumé of user_resumes, with the axes user_resume_probes says apply to it; the skipped
    (résumé, axis) pairs and their reasons are in the metadata, and a résumé no axis applies
    to is left out."""
    if config.resumes is ResumeSource.user:
        df, meta = _user_probe_variants(context, catalog, user_resumes, user_resume_probes)
    else:
        chosen = choose_base_resumes(context, config, base_resumes, "probe_variants")
        df = make_probe_variants(chosen, catalog_dir=catalog.folder())
        meta = {
            "resume_source": dg.MetadataValue.text(ResumeSource.generated.value),
            "resumes": dg.MetadataValue.json(chosen["resume_id"].tolist()),
            "resumes_per_level": json_by_key(chosen["seniority"].value_counts().reindex(config.levels, fill_value=0)),
        }
    context.add_output_metadata(
        table_metadata(
            df.drop(columns=["text"]),
            preview_rows=50,
            variants_per_resume=dg.MetadataValue.int(int(df.groupby("resume_id").size().max())),
            **meta,
        )
    )
    return df


@dg.asset_check(
    asset=probe_variants,
    name="change_one_signal",  # shown beside its asset: "probe_variants: change_one_signal"
    additional_ins={"user_resume_probes": dg.AssetIn("user_resume_probes")},
    blocking=True,
    description="every variant differs from its baseline in exactly its one signal; an axis user_resume_probes "
    "says does not apply to a user résumé is expected to be missing",
)
def probe_variants_change_one_signal(
    probe_variants: pd.DataFrame, catalog: CatalogResource, user_resume_probes: pd.DataFrame
) -> dg.AssetCheckResult:
    # The generated résumés have no rows in user_resume_probes: every axis is expected of them.
    problems = check_probe_variants(probe_variants, catalog_dir=catalog.folder(), applicability=user_resume_probes)
    return dg.AssetCheckResult(
        passed=problems.empty,
        description=None
        if problems.empty
        else "; ".join(f"{r.resume_id}/{r.variant}: {r.problem}" for r in problems.head(5).itertuples()),
        metadata={"variants_with_problems": int(problems["variant"].nunique()) if len(problems) else 0},
    )


FIT_SCORES_DESCRIPTION = (
    "Fit scores (1-10, recommendation, justification, strengths, concerns) of every probe variant for each "
    "(model, JD) partition, `runs_per_cell` runs each. An embedded LLM gives the 1-10 distribution from next-token "
    "probabilities and samples from it (no text, noted per row)."
)


def build_fit_scores(
    partitions_def: dg.MultiPartitionsDefinition,
    kinds: set[str] | None = None,
    *,
    name: str = "fit_scores",
    variants: str = "probe_variants",
    description: str = FIT_SCORES_DESCRIPTION,
) -> dg.AssetsDefinition:
    """The fit-score asset over (model, jd) partitions (the models config's and the catalog's by
    default) of the variants table ``variants`` (probe_variants; validity_pairs, whose rows each
    name their JD, gives each partition its JD's rows): one implementation for every fit table."""

    @dg.asset(
        name=name,
        description=description,
        dagster_type=FitScoresType,
        partitions_def=partitions_def,
        ins={"variant_rows": dg.AssetIn(variants)},
        metadata={"partition_expr": {"model": "model", "jd": "jd"}},
        kinds=kinds if kinds is not None else kind_tags("fit"),
        backfill_policy=dg.BackfillPolicy.multi_run(max_partitions_per_run=17),
    )
    def _fit_scores(
        context: dg.AssetExecutionContext,
        compute: ComputeResource,
        catalog: CatalogResource,
        providers: ProvidersResource,
        shared_files: SharedFilesResource,
        variant_rows: pd.DataFrame,
        job_descriptions: pd.DataFrame,
    ) -> pd.DataFrame:
        template = load_fit_template(catalog.folder())
        runtime = model_runtime(compute, providers, shared=shared_files.files(), log=context.log.info)
        frames = []
        cells = model_jd_cells(
            context, partitions_def, catalog_dir=catalog.folder(), job_descriptions=job_descriptions, asset=name
        )
        for spec, jd, text in cells:
            rows = variant_rows[variant_rows["jd"] == jd] if "jd" in variant_rows.columns else variant_rows
            if not len(rows):
                raise dg.Failure(f"{name}: {variants} has no row for job description {jd!r}; re-materialise it")
            frame, stats = predict_fit(
                spec,
                rows.reset_index(drop=True),
                jd=jd,
                jd_text=text,
                template=template,
                runtime=runtime,
                progress=progress_logger(context.log, f"{spec.name} x {jd}"),
            )
            record_cell(context, spec, jd, frame, stats, "scores")
            frames.append(frame)
        df = pd.concat(frames, ignore_index=True)
        context.add_output_metadata(
            table_metadata(
                df.drop(columns=["justification", "strengths", "concerns", "score_distribution"]),
                failed_runs=dg.MetadataValue.int(int(df["score"].isna().sum())),
                mean_score=dg.MetadataValue.float(float(df["score"].mean())),
            )
        )
        return df

    return _fit_scores


fit_scores = build_fit_scores(model_jd_partitions)


@dg.asset(
    dagster_type=FitEffectsType,
    kinds={"python", "duckdb"},
    automation_condition=UPDATE_WITH_UPSTREAM,
)
def fit_effects(context: dg.AssetExecutionContext, catalog: CatalogResource, fit_scores: pd.DataFrame) -> pd.DataFrame:
    """Per (model, JD, variant): the change against the baseline with the résumé as the unit
    (exact expected scores where the model gives them), its 95% interval, the sign-flip test
    over résumés (one résumé: its runs permuted), the adjusted p within its arm and axis,
    equivalence, the minimal detectable effect, the placebo arm as an empirical null, and a
    verdict."""
    scores = separate_snapshots(fit_scores, partition=("model", "jd"))
    settings = load_inference_settings(catalog.folder())
    df = compute_fit_effects(scores, axis_arms(catalog.folder()), settings, snapshots=snapshots_of(scores))
    context.add_output_metadata(
        table_metadata(
            df.sort_values("q_value").head(30),
            cells=dg.MetadataValue.int(len(df)),
            beyond_noise_cells=dg.MetadataValue.int(int(df["significant"].sum())),
        )
    )
    return df


@dg.asset(
    dagster_type=FitModelSummaryType,
    kinds={"python", "duckdb"},
    automation_condition=UPDATE_WITH_UPSTREAM,
)
def fit_model_summary(context: dg.AssetExecutionContext, fit_effects: pd.DataFrame) -> pd.DataFrame:
    """Per model: bias index (the probe arm's effects, root mean square, sampling noise taken
    out), the largest penalty beyond noise, noise floor, cells beyond noise, prompt-injection
    and anonymisation."""
    df = model_summary(fit_effects)
    context.add_output_metadata(
        {"table": dg.MetadataValue.md(df.round(3).to_markdown(index=False) if len(df) else "(empty)")}
    )
    return df


@dg.asset(
    dagster_type=FitAxisSummaryType,
    kinds={"python", "duckdb"},
    automation_condition=UPDATE_WITH_UPSTREAM,
)
def fit_axis_summary(
    context: dg.AssetExecutionContext, catalog: CatalogResource, fit_effects: pd.DataFrame, fit_scores: pd.DataFrame
) -> pd.DataFrame:
    """Per (model, axis, level) over the JDs: the cells' spread and how many are beyond noise,
    and the change averaged over the JDs with the résumé as the unit, its interval and p."""
    scores = separate_snapshots(fit_scores, partition=("model", "jd"))
    df = axis_summary(fit_effects, scores, load_inference_settings(catalog.folder()), axis_arms(catalog.folder()))
    context.add_output_metadata(table_metadata(df, preview_rows=60))
    return df
