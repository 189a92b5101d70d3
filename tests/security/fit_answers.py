"""One provider model and one baseline résumé: what the security tests of a fit answer feed
``predict_fit_with_provider`` (a paid answer's fate through the fit task, not its statistics)."""

import pandas as pd

from resumebias_dagster.core.models.model_config import parse_models


def openai_fit_spec(base_url: str):
    """A ``provider: openai`` entry at ``base_url`` without a key, one run per cell."""
    entry = {
        "name": "m",
        "kind": "provider",
        "provider": "openai",
        "model": "x",
        "runs_per_cell": 1,
        "base_url": base_url,
        "api_key_env": "",
    }
    return parse_models({"models": [entry]}, "t")[0]


def one_baseline_variant() -> pd.DataFrame:
    """One résumé's baseline, as ``probe_variants`` writes its rows."""
    return pd.DataFrame(
        {
            "resume_id": ["r"],
            "variant": ["baseline"],
            "arm": ["baseline"],
            "axis": ["baseline"],
            "level": [""],
            "text": ["A résumé."],
        }
    )
