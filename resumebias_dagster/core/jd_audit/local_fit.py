"""1-10 fit scores from an embedded causal LM's next-token probabilities.

The prompt ends with the answer's opening (``{"score": ``), so the next token is the score's
first digit. Digits are single tokens for Gemma-style tokenizers, so "10" is "1" then "0":
one more decoding step after "1" (on the cached keys and values, a single token per prompt)
splits P("1") into P(1) and P(10). Scores 11-19 are not on the scale; their mass is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from resumebias_dagster.core.models.compute import ComputeSettings
from resumebias_dagster.core.models.local_llm import next_token_probs

DIGITS = tuple(str(d) for d in range(10))


def digit_token_ids(tokenizer) -> list[int]:
    """Token id of each digit 0-9 as it follows ``": "``; refuses tokenizers that merge digits."""
    ids = []
    for digit in DIGITS:
        tokens = tokenizer.encode(digit, add_special_tokens=False)
        if len(tokens) != 1:
            raise ValueError(f"digit {digit!r} is {len(tokens)} tokens for this tokenizer; fit scoring needs one")
        ids.append(tokens[0])
    return ids


def score_distribution(
    model, tokenizer, prompts: Sequence[str], settings: ComputeSettings, progress=None
) -> tuple[np.ndarray, np.ndarray]:
    """P(score = 1..10) for each prompt, shape (n, 10), rows sum to 1, plus the mass the
    model put on the scale before renormalising (low = it would mostly answer otherwise)."""
    digits = digit_token_ids(tokenizer)
    first, after_one = next_token_probs(
        model, tokenizer, prompts, digits, settings, follow_token=digits[1], progress=progress
    )
    assert after_one is not None  # given a follow_token, next_token_probs returns its step
    # After "1": "0" makes 10, another digit makes 11-19 (off the scale), anything else ends at 1.
    p_zero = after_one[:, 0]
    p_end = np.clip(1.0 - after_one.sum(axis=1), 0.0, None)
    split = p_zero / np.maximum(p_zero + p_end, 1e-300)
    scores = np.column_stack([first[:, 1] * (1 - split), first[:, 2:], first[:, 1] * split])
    mass = scores.sum(axis=1)
    return scores / np.maximum(mass, 1e-300)[:, None], mass
