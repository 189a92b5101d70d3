"""The ranking task on an embedded causal LM: the probability of each candidate's name as the
answer to "The best candidate is", normalised over the candidates shown.

``log P(name | prompt)`` is the sum of the log-probabilities of the name's tokens (" Brad
McCarthy": each token given the prompt and the name's tokens before it), read from one pass
over the prompt (its keys and values kept) and one short batched pass over the names. Summed,
not averaged: it is the probability of the whole name as the continuation, so a name of more
tokens is not penalised when its later tokens follow surely from its first (the name is in
the prompt to copy). Softmax over the candidates gives P(ranked first).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from resumebias_dagster.core.models.compute import ComputeSettings

# The cue after the ranking prompt: the model's next words are the best candidate's name.
LOCAL_CUE = "\nThe best candidate is"


def _padded(sequences: list[list[int]], pad_id: int):
    import torch

    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, seq in enumerate(sequences):
        ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
        mask[row, : len(seq)] = 1
    return ids, mask


def _logits(model, hidden):
    """fp32 vocabulary logits of decoder states, with the model's final soft-capping if any."""
    import torch

    head = model.get_output_embeddings()
    logits = torch.nn.functional.linear(
        hidden.float(), head.weight.float(), None if head.bias is None else head.bias.float()
    )
    cap = getattr(model.config, "final_logit_softcapping", None)
    return torch.tanh(logits / cap) * cap if cap else logits


def continuation_logprobs(
    model, tokenizer, prompt: str, continuations: Sequence[str], settings: ComputeSettings
) -> np.ndarray:
    """``log P(continuation | prompt)`` of each continuation (summed over its tokens), shape (k,).

    The prompt is tokenised with the tokenizer's special tokens, each continuation without, and
    the two joined as token lists. The prompt's last token is run with the continuations, so
    its next-token distribution scores their first token."""
    import torch

    if not continuations:
        return np.zeros(0)
    settings.apply()
    prompt_ids = tokenizer(prompt, add_special_tokens=True)["input_ids"]
    conts = [tokenizer.encode(c, add_special_tokens=False) for c in continuations]
    if not prompt_ids or not all(conts):
        raise ValueError("the prompt and every continuation must be at least one token")
    limit = getattr(model.config, "max_position_embeddings", None)
    longest = len(prompt_ids) + max(map(len, conts))
    if limit and longest > limit:
        raise ValueError(f"the prompt and a name are {longest} tokens, over the model's {limit}")
    head, last = prompt_ids[:-1], prompt_ids[-1]
    device = torch.device(settings.device)
    decoder = model.get_decoder()
    n = len(conts)
    with torch.inference_mode(), settings.autocast_context():
        cache = None
        if head:
            cache = decoder(input_ids=torch.tensor([head], device=device), use_cache=True).past_key_values
            cache = copy.deepcopy(cache)
            cache.batch_repeat_interleave(n)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        ids, mask = _padded([[last] + c for c in conts], pad)
        ids, mask = ids.to(device), mask.to(device)
        full_mask = torch.cat([torch.ones((n, len(head)), dtype=mask.dtype, device=device), mask], dim=1)
        positions = torch.arange(len(head), len(head) + ids.shape[1], device=device).expand(n, -1)
        out = decoder(
            input_ids=ids,
            attention_mask=full_mask,
            position_ids=positions,
            past_key_values=cache,
            use_cache=cache is not None,
        )
    with torch.inference_mode():
        logp = torch.log_softmax(_logits(model, out.last_hidden_state), dim=-1)
        # Position j predicts token j + 1 of [last] + continuation.
        picked = logp[:, :-1].gather(2, ids[:, 1:, None]).squeeze(2) * mask[:, 1:]
        return picked.sum(dim=1).double().cpu().numpy()


def first_choice_probs(
    model,
    tokenizer,
    prompts: Sequence[str],
    names: Sequence[Sequence[str]],
    settings: ComputeSettings,
    *,
    progress=None,
) -> list[np.ndarray]:
    """Per prompt, P(each of its ``names`` is the best candidate): the softmax over those names
    of ``continuation_logprobs(prompt + LOCAL_CUE, " " + name)``; each row sums to 1."""
    out = []
    for i, (prompt, shown) in enumerate(zip(prompts, names, strict=True)):
        lp = continuation_logprobs(model, tokenizer, prompt + LOCAL_CUE, [" " + n for n in shown], settings)
        w = np.exp(lp - lp.max())
        out.append(w / w.sum())
        if progress is not None:
            progress(i + 1, len(prompts))
    return out
