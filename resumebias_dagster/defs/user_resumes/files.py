"""The user's résumé files, read under the data directory's rules, and the probes each admits."""

import dagster as dg
import pandas as pd
from pydantic import Field

from resumebias_dagster.core.jd_audit.probes.applicability import probe_applicability
from resumebias_dagster.core.resumes.user_files import read_resume_csv, read_resume_folder
from resumebias_dagster.core.tables import ProbeApplicability, UserResumes, conform, empty_table
from resumebias_dagster.defs._metadata import json_by_key, table_metadata
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.storage import EMPTY_UNTIL_MATERIALISED
from resumebias_dagster.schemas import ProbeApplicabilityType, UserResumesType
from resumebias_dagster.settings import checked_path


class UserResumesConfig(dg.Config):
    folder: str = Field(
        default="",
        description="a folder of .pdf/.docx/.md/.txt résumés (not its subfolders), with an optional labels.csv "
        "(columns file, seniority[, name]); under the allowed folders",
    )
    csv: str = Field(default="", description="or a CSV file with one résumé a row; under the allowed folders")
    text_column: str = Field(default="text", description="the CSV's column holding each résumé's text")
    label_column: str = Field(default="", description="the CSV's column holding the seniority label (empty: none)")
    name_column: str = Field(default="", description="the CSV's column holding the candidate's name (empty: found)")


@dg.asset(
    dagster_type=UserResumesType,
    kinds={"python", "duckdb"},
    # No job materialises it unasked: until then it reads as no résumé.
    metadata={EMPTY_UNTIL_MATERIALISED: "UserResumes"},
)
def user_resumes(context: dg.AssetExecutionContext, config: UserResumesConfig) -> pd.DataFrame:
    """Your own résumés: the text of every PDF, DOCX, Markdown or text file of `folder` (or row
    of `csv`), the candidate's name found in its first lines, and the seniority label where
    labels.csv gives one. A file that cannot be read (corrupt, encrypted, no text layer, not
    UTF-8, no name found) is listed with the reason, and the others go on. Texts stay in the
    DuckDB file under the data directory."""
    if config.folder and config.csv:
        raise dg.Failure("user_resumes: give either folder or csv, not both")
    if config.folder:
        rows, problems = read_resume_folder(checked_path(config.folder, "user_resumes.folder"))
    elif config.csv:
        rows, problems = read_resume_csv(
            checked_path(config.csv, "user_resumes.csv"),
            text_column=config.text_column,
            label_column=config.label_column or None,
            name_column=config.name_column or None,
        )
    else:
        rows, problems = empty_table(UserResumes), []
    for problem in problems:
        context.log.warning(f"user_resumes: not read: {problem}")
    if config.folder and not len(rows):
        # Nothing to audit: say which, instead of the empty table downstream assets refuse later.
        if not problems:
            raise dg.Failure(f"user_resumes: the folder {config.folder} holds no résumé file (.pdf, .docx, .md, .txt)")
        reasons = "; ".join(str(p) for p in problems)
        raise dg.Failure(
            f"user_resumes: the folder {config.folder}: none of its {len(problems)} file(s) could be read: {reasons}"
        )
    df = conform(rows, UserResumes) if len(rows) else empty_table(UserResumes)
    context.add_output_metadata(
        table_metadata(
            df.drop(columns=["text", "name", "first_name", "last_name", "email", "phone"]),
            not_read=dg.MetadataValue.md("\n".join(f"- {p}" for p in problems) or "(none)"),
            by_seniority=json_by_key(df["seniority"].fillna("unlabelled").value_counts()),
        )
    )
    return df


@dg.asset(
    dagster_type=ProbeApplicabilityType,
    kinds={"python", "duckdb"},
    metadata={EMPTY_UNTIL_MATERIALISED: "ProbeApplicability"},
)
def user_resume_probes(
    context: dg.AssetExecutionContext, catalog: CatalogResource, user_resumes: pd.DataFrame
) -> pd.DataFrame:
    """Per user résumé and probe axis of probe_axes.yaml: whether the axis applies (every level
    edits the résumé and passes the variant check), else why not; a skipped axis is a row with
    its reason here, never a silent gap."""
    if not len(user_resumes):
        return empty_table(ProbeApplicability)
    df = conform(probe_applicability(user_resumes, catalog_dir=catalog.folder()), ProbeApplicability)
    applies = df.groupby("axis")["applies"].mean().round(3)
    context.add_output_metadata(table_metadata(df, preview_rows=30, share_applying=json_by_key(applies)))
    return df
