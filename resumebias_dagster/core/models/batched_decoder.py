"""The decoder passes behind ``local_llm.next_token_probs``.

Prompts' tails run in length-sorted, right-padded batches on top of a cached prefix
(``prefix_cache``); each batch keeps only the hidden states at the positions scored, which
wait in ``PendingProjection`` to go through the vocabulary projection many rows at a time.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from . import decoder_hooks
from .compute import ComputeSettings

if TYPE_CHECKING:
    import torch


class PendingProjection:
    """Hidden states of scored rows, projected onto the vocabulary in bulk.

    The projection reads the whole embedding matrix (671 MB in fp32 for Gemma 3), which per
    batch of 2 cost 2% of a pass: so rows wait until ``head_rows`` of them are pending and go
    through in one product. ``first`` (and ``follow``) fill in as they do."""

    def __init__(
        self,
        model,
        index: torch.Tensor,
        n: int,
        *,
        with_follow: bool,
        head_rows: int,
        progress: Callable[[int, int], None] | None,
    ):
        self.model = model
        self.index = index
        self.n = n
        self.head_rows = head_rows
        self.progress = progress
        self.first = np.zeros((n, len(index)), dtype=np.float64)
        self.follow = np.zeros_like(self.first) if with_follow else None
        self.pending: list[tuple[list[int], torch.Tensor]] = []
        self.done = 0

    def add(self, rows: list[int], hidden: torch.Tensor) -> None:
        self.pending.append((rows, hidden))
        if sum(len(b) for b, _ in self.pending) >= self.head_rows:
            self.project()

    def project(self) -> None:
        """The vocabulary projection of the pending rows, in one product."""
        import torch

        if not self.pending:
            return
        batch = [i for b, _ in self.pending for i in b]
        logits = _vocabulary_logits(self.model, torch.cat([h for _, h in self.pending]))
        self.pending.clear()
        self.first[batch] = torch.softmax(logits[:, 0], dim=-1).index_select(-1, self.index).double().cpu().numpy()
        if self.follow is not None:
            self.follow[batch] = torch.softmax(logits[:, 1], dim=-1).index_select(-1, self.index).double().cpu().numpy()
        self.done += len(batch)
        if self.progress is not None:
            self.progress(self.done, self.n)


class BatchScorer:
    """Runs prompts' tails through the decoder in length-sorted batches on a cached prefix,
    handing each batch's last hidden states to ``sink``."""

    def __init__(
        self,
        model,
        settings: ComputeSettings,
        *,
        pad_id: int,
        follow_token: int | None,
        batch_size: int,
        sink: PendingProjection,
    ):
        import torch

        self.model = model
        self.settings = settings
        self.device = torch.device(settings.device)
        self.pad_id = pad_id
        # The follow token rides in the same pass, one position after the prompt's last token.
        self.suffix: list[int] = [] if follow_token is None else [follow_token]
        self.batch_size = batch_size
        self.sink = sink

    def score(self, rows: Sequence[int], tails: list[list[int]], prefix_cache, prefix: int) -> None:
        """Batches of ``rows`` (their tokens after the first ``prefix``) on ``prefix_cache``.

        Padding goes on the right, after each row's text: on the left it would sit between a
        cached prefix and the text and shift the text away from the prefix, which a sliding-
        window layer (Gemma's local attention) counts in cache slots, not positions."""
        # Batching prompts of similar length keeps padding (wasted compute) small.
        order = [rows[i] for i in np.argsort([len(t) for t in tails], kind="stable")]
        tail_of = dict(zip(rows, tails))
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            self.sink.add(
                batch, self._last_hidden(batch, [tail_of[i] + self.suffix for i in batch], prefix_cache, prefix)
            )

    def _last_hidden(self, batch: list[int], seqs: list[list[int]], prefix_cache, prefix: int) -> torch.Tensor:
        """The decoder's hidden states at each sequence's last prompt token (and follow token)."""
        import torch

        device = self.device
        extra = len(self.suffix)
        input_ids, attention_mask = _right_pad(seqs, self.pad_id)
        input_ids, attention_mask = input_ids.to(device), attention_mask.to(device)
        cache = None
        if prefix_cache is not None:
            cache = copy.deepcopy(prefix_cache)
            cache.batch_repeat_interleave(len(batch))
            attention_mask = torch.cat(
                [torch.ones((len(batch), prefix), dtype=attention_mask.dtype, device=device), attention_mask], dim=1
            )
        position_ids = torch.arange(prefix, prefix + input_ids.shape[1], device=device).expand(len(batch), -1)
        last = torch.tensor([len(q) - 1 - extra for q in seqs], device=device)
        return _hidden_at(
            model=self.model,
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            settings=self.settings,
            last=last,
            count=extra + 1,
            past_key_values=cache,
        )


def _hidden_at(
    model,
    input_ids,
    attention_mask,
    position_ids,
    settings: ComputeSettings,
    *,
    last,
    count: int,
    past_key_values=None,
):
    """The decoder's last hidden states at positions ``last .. last + count - 1`` of each row,
    shape (rows, count, hidden), with the decoder under autocast when configured."""
    import torch

    steps = last[:, None] + torch.arange(count, device=last.device)[None, :]
    rows = torch.arange(len(last), device=last.device)[:, None]
    with decoder_hooks.last_layer_only_at(model, (rows * input_ids.shape[1] + steps).reshape(-1)):
        out = _decoder(
            model,
            settings,
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            past_key_values=past_key_values,
            use_cache=past_key_values is not None,
        )
    return out.last_hidden_state[rows, steps]


def _vocabulary_logits(model, hidden):
    """fp32 next-token logits of ``hidden`` (rows, count, hidden): only those hidden states go
    through the vocabulary projection (what ``logits_to_keep`` does inside ``model.forward``).

    The projection runs outside autocast: bf16 rounds logits near 20 by up to 0.06, which moved
    label distributions by up to 0.025 total variation in a measurement, while in fp32 it costs
    ~3 GFLOP per batch of 8.
    """
    import torch

    head = model.get_output_embeddings()
    logits = torch.nn.functional.linear(hidden.to(head.weight.dtype), head.weight, head.bias).float()
    cap = getattr(model.config, "final_logit_softcapping", None)
    if cap:
        logits = torch.tanh(logits / cap) * cap
    return logits


def prefix_cache(model, tokens: list[int], past, offset: int, settings: ComputeSettings):
    """Keys and values of ``tokens`` (one sequence) after ``past`` (``offset`` tokens long)."""
    import torch

    device = torch.device(settings.device)
    # Only keys and values are kept: the last layer's output is needed at no position.
    with decoder_hooks.last_layer_only_at(model, torch.zeros(0, dtype=torch.long, device=device)):
        return _decoder(
            model,
            settings,
            input_ids=torch.tensor([tokens], device=device),
            attention_mask=torch.ones((1, offset + len(tokens)), dtype=torch.long, device=device),
            position_ids=torch.arange(offset, offset + len(tokens), device=device)[None, :],
            past_key_values=copy.deepcopy(past) if past is not None else None,
            use_cache=True,
        ).past_key_values


def _decoder(model, settings: ComputeSettings, **inputs):
    """The decoder's forward pass (no vocabulary projection), under autocast when configured."""
    with settings.autocast_context(), warnings.catch_warnings():
        # transformers 5 renames the cache argument (`past_key_values` -> `cache`) and warns on
        # every call of the old name, which its own Gemma 3 still uses: expected, not a problem.
        warnings.filterwarnings("ignore", message=".*past_key_values.*deprecated", category=FutureWarning)
        return model.get_decoder()(**inputs)


def padding_token_id(tokenizer) -> int:
    for candidate in (tokenizer.pad_token_id, tokenizer.eos_token_id):
        if candidate is not None:
            return int(candidate)
    return 0


def _right_pad(sequences: list[list[int]], pad_id: int):
    import torch

    width = max(len(s) for s in sequences)
    input_ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, seq in enumerate(sequences):
        if seq:
            input_ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
            attention_mask[row, : len(seq)] = 1
    return input_ids, attention_mask
