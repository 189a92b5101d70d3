"""Validity beside bias (issue 42): résumé twins a screener should rank (better, worse, equal by
the job description's requirements), and their fit scores by (model, JD), as fit_scores."""

import dagster as dg
import pandas as pd

from resumebias_dagster.core.common.snapshots import separate_snapshots
from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.jd_audit.design import load_fit_design
from resumebias_dagster.core.jd_audit.job_descriptions import load_job_requirements
from resumebias_dagster.core.jd_audit.probes import select_probe_resumes
from resumebias_dagster.core.jd_audit.validity import check_validity_pairs, skip_summary, validity_pairs
from resumebias_dagster.core.jd_audit.validity_stats import validity_summary
from resumebias_dagster.core.jd_audit.validity_stats import validity_verdicts as compute_validity_verdicts
from resumebias_dagster.defs._metadata import UPDATE_WITH_UPSTREAM, json_by_key, table_metadata, verdicts_metadata
from resumebias_dagster.defs.jd_audit.fit import build_fit_scores
from resumebias_dagster.partitions import model_jd_partitions
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.schemas import ValidityPairsType, VerdictsType

# Skipped (résumé, edit) rows listed one by one in validity_pairs' metadata (all are counted).
SKIPPED_LISTED = 200


@dg.asset(name="validity_pairs", dagster_type=ValidityPairsType, kinds={"python", "duckdb"})
def validity_pairs_asset(
    context: dg.AssetExecutionContext,
    catalog: CatalogResource,
    base_resumes: pd.DataFrame,
    job_descriptions: pd.DataFrame,
) -> pd.DataFrame:
    """Per (JD of fit_design.yaml, base résumé, name group): a baseline carrying one name of the
    group and its twins, each one edit away: better or worse by the JD's stated requirements (a
    required skill, years in the current role, a degree level, a certification) or equal (two skills of the same
    weight swapped, a placebo edit). `validity` of fit_design.yaml sets the groups and résumés. An
    edit a résumé cannot take, or a twin the one-signal check refuses, is listed in the metadata."""
    design = load_fit_design(catalog.folder())
    chosen = select_probe_resumes(base_resumes, design.occupation, design.levels, design.validity.per_level)
    if chosen.empty:
        raise dg.Failure(
            f"validity_pairs: no base résumé of occupation {design.occupation!r} at levels {design.levels}"
        )
    missing = [jd for jd in design.job_descriptions if jd not in set(job_descriptions["jd"])]
    if missing:
        raise dg.Failure(
            f"validity_pairs: job description {missing[0]!r} is not in job_descriptions; re-materialise it"
        )
    requirements = load_job_requirements(catalog_dir=catalog.folder())
    try:
        df, skipped = validity_pairs(
            chosen, {jd: requirements[jd] for jd in design.job_descriptions}, design.validity.groups, catalog.folder()
        )
    except ValueError as exc:
        raise dg.Failure(str(exc)) from None
    listed = skip_summary(skipped, design.validity.groups)
    dropped = skipped[skipped["reason"].str.startswith("dropped")]
    for row in dropped.itertuples(index=False):
        context.log.warning(f"validity_pairs: {row.jd}/{row.resume_id}/{row.group}:{row.role}:{row.edit} {row.reason}")
    context.add_output_metadata(
        table_metadata(
            df.drop(columns=["text"]),
            preview_rows=50,
            resumes=dg.MetadataValue.json([str(r) for r in chosen["resume_id"]]),
            groups=dg.MetadataValue.json(list(design.validity.groups)),
            sets=dg.MetadataValue.int(int(df[["jd", "resume_id", "group"]].drop_duplicates().shape[0])),
            twins_per_role=json_by_key(df.loc[df["role"] != "baseline", "role"].value_counts().sort_index()),
            twins_per_edit=json_by_key(df.loc[df["role"] != "baseline", "edit"].value_counts().sort_index()),
            dropped_twins=dg.MetadataValue.int(len(dropped)),
            skipped=dg.MetadataValue.md(
                listed.head(SKIPPED_LISTED).to_markdown(index=False) if len(listed) else "(none)"
            ),
        )
    )
    return df


@dg.asset_check(
    asset=validity_pairs_asset,
    name="change_one_signal",  # shown beside its asset: "validity_pairs: change_one_signal"
    blocking=True,
    description="every twin is its edit of the set's baseline (re-derived from the JD's requirements) and "
    "changes that one signal; every set has one baseline and one name of its group",
)
def validity_pairs_change_one_signal(validity_pairs: pd.DataFrame, catalog: CatalogResource) -> dg.AssetCheckResult:
    problems = check_validity_pairs(
        validity_pairs, load_job_requirements(catalog_dir=catalog.folder()), catalog.folder()
    )
    return dg.AssetCheckResult(
        passed=problems.empty,
        description=None
        if problems.empty
        else "; ".join(f"{r.jd}/{r.resume_id}/{r.variant}: {r.problem}" for r in problems.head(5).itertuples()),
        metadata={"twins_with_problems": int(problems["variant"].nunique()) if len(problems) else 0},
    )


VALIDITY_SCORES_DESCRIPTION = (
    "Fit scores of every validity pair (validity_pairs: the baseline and its better, worse and equal twins) for "
    "each (model, JD) partition, `runs_per_cell` runs each, by the fit task exactly as fit_scores (arm `validity`; "
    "axis the edit, level the role)."
)


def build_validity_scores(
    partitions_def: dg.MultiPartitionsDefinition, kinds: set[str] | None = None
) -> dg.AssetsDefinition:
    """The validity-score asset over (model, jd) partitions: fit_scores' builder on validity_pairs."""
    return build_fit_scores(
        partitions_def,
        kinds,
        name="validity_scores",
        variants="validity_pairs",
        description=VALIDITY_SCORES_DESCRIPTION,
    )


validity_scores = build_validity_scores(model_jd_partitions)


@dg.asset(dagster_type=VerdictsType, kinds={"python", "duckdb"}, automation_condition=UPDATE_WITH_UPSTREAM)
def validity_verdicts(
    context: dg.AssetExecutionContext,
    catalog: CatalogResource,
    validity_pairs: pd.DataFrame,
    validity_scores: pd.DataFrame,
) -> pd.DataFrame:
    """Per model: does it tell the better candidate from the worse (criterion validity: the share
    of better and worse twins it orders right, against chance and the declared target), does it
    leave equal twins alike (discriminant validity), and does it do both as well with every
    group's names (each group against the design's first). The résumé is the unit; methods.md
    says what each interval assumes."""
    folder = catalog.folder()
    groups = load_fit_design(folder).validity.groups
    scores = separate_snapshots(validity_scores, partition=("model", "jd"))
    df = compute_validity_verdicts(
        scores, validity_pairs, load_inference_settings(folder), reference=groups[0] if groups else None
    )
    context.add_output_metadata(
        {**verdicts_metadata(df), "measures_qualification": dg.MetadataValue.json(validity_summary(df))}
    )
    return df
