import dagster as dg
import pandas as pd
from pydantic import Field

from resumebias_dagster.core.models.finetune import classifier_table, train_or_reuse
from resumebias_dagster.core.models.model_config import load_models, models_of_kind
from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.core.seniority.leakage import shared_with_evaluation
from resumebias_dagster.defs._metadata import json_by_key, table_metadata
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.schemas import BaseResumesType, FineTunedClassifiersType
from resumebias_dagster.settings import classifiers_dir


class ClassifierTrainingSetConfig(dg.Config):
    n_per_level: int = Field(default=128, ge=2, description="training résumés per seniority level")
    seed: int = Field(default=1000, description="generator seed; must differ from base_resumes' seed")


@dg.asset(dagster_type=BaseResumesType, kinds={"python", "duckdb"}, code_version="generator-v1")
def classifier_training_set(
    context: dg.AssetExecutionContext,
    config: ClassifierTrainingSetConfig,
    catalog: CatalogResource,
    base_resumes: pd.DataFrame,
) -> pd.DataFrame:
    """Labelled résumés for fine-tuning, generated apart from the evaluation résumés
    (another seed, none of their people), so no classifier is trained on its test set."""
    df = generate_resumes(
        n_per_level=config.n_per_level,
        seed=config.seed,
        catalog_dir=catalog.folder(),
        exclude_people=frozenset(base_resumes["name"]),
        id_prefix="t",
    )
    context.add_output_metadata(
        table_metadata(df.drop(columns=["text"]), by_seniority=json_by_key(df["seniority"].value_counts()))
    )
    return df


@dg.asset_check(
    asset=classifier_training_set,
    blocking=True,
    additional_ins={"base_resumes": dg.AssetIn("base_resumes")},
    description="the training set shares no résumé, text, name or e-mail with the evaluation résumés",
)
def training_set_disjoint_from_evaluation(
    classifier_training_set: pd.DataFrame, base_resumes: pd.DataFrame
) -> dg.AssetCheckResult:
    shared = shared_with_evaluation(classifier_training_set, base_resumes)
    return dg.AssetCheckResult(
        passed=not shared,
        description=None
        if not shared
        else "training set overlaps the evaluation set: "
        + "; ".join(f"{k}: {len(v)} shared, e.g. {v[:3]}" for k, v in shared.items()),
        metadata={f"shared_{k}": len(v) for k, v in shared.items()} or {"shared": 0},
    )


@dg.asset(
    dagster_type=FineTunedClassifiersType,
    kinds={"pytorch", "duckdb"},
    pool="gpu",
)
def fine_tuned_classifiers(
    context: dg.AssetExecutionContext,
    compute: ComputeResource,
    catalog: CatalogResource,
    shared_files: SharedFilesResource,
    classifier_training_set: pd.DataFrame,
) -> pd.DataFrame:
    """One fine-tuned junior/mid/senior classifier per `fine-tuned` entry of the models config,
    saved as safetensors under the data directory. Unchanged data and settings never retrain:
    each model lives in a folder named by the content hash of everything that shapes it."""
    settings = compute.settings()
    shared = shared_files.files()
    trained = []
    for spec in models_of_kind(load_models(catalog_dir=catalog.folder()), "fine-tuned"):
        model = train_or_reuse(spec, classifier_training_set, settings, classifiers_dir(), log=context.log.info)
        trained.append(model)
        if shared is not None:
            # Other machines fetch the folder by its content hash (seniority_predictions).
            shared.put_folder(model.row["path"], "classifiers")
            context.add_output_metadata(
                {
                    f"{spec.name}/shared_folder": dg.MetadataValue.text(
                        shared.location("classifiers", model.row["content_sha256"])
                    )
                }
            )
        metrics = model.metrics
        context.add_output_metadata(
            {
                f"{spec.name}/loss_curve": dg.MetadataValue.json(metrics["loss_curve"]),
                f"{spec.name}/heldout_accuracy": dg.MetadataValue.float(
                    float(metrics["heldout_accuracy"] or float("nan"))
                ),
                f"{spec.name}/label_map": dg.MetadataValue.json(metrics["label2id"]),
                f"{spec.name}/config": dg.MetadataValue.json(metrics["config"]),
            }
        )
    df = classifier_table(trained)
    context.add_output_metadata(table_metadata(df))
    return df
