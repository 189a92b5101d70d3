"""The ranking task: requests, answers through a ``run`` callable, and the embedded-LLM path."""

import json
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from resumebias_dagster.core.models.compute import ComputeSettings
from resumebias_dagster.core.providers.types import ChatResult
from resumebias_dagster.core.ranking.design import RankingItem
from resumebias_dagster.core.ranking.local import LOCAL_CUE, continuation_logprobs, first_choice_probs
from resumebias_dagster.core.ranking.tables import RANKING_COLUMNS, selection_table
from resumebias_dagster.core.ranking.task import (
    RANKING_TASK,
    load_ranking_template,
    rank_with,
    ranking_prompt,
    ranking_requests,
    rows_from_first_choice,
)

ITEMS = [
    RankingItem("r0/r0", "r0", 0, ("Brad McCarthy", "Jamal Booker"), ("W_M", "B_M"), ("Brad text", "Jamal text")),
    RankingItem("r0/r1", "r0", 1, ("Jamal Booker", "Brad McCarthy"), ("B_M", "W_M"), ("Jamal text", "Brad text")),
]
FP32 = ComputeSettings(device="cpu", dtype="float32", num_threads=0, batch_size=2)


def test_the_packaged_template_and_the_prompt():
    template = load_ranking_template()
    prompt = ranking_prompt(template, "  Backend engineer, Go.  ", ITEMS[1])
    assert "Job description:\nBackend engineer, Go.\n" in prompt
    assert prompt.index("=== Candidate: Jamal Booker ===\nJamal text") < prompt.index(
        "=== Candidate: Brad McCarthy ==="
    )
    assert "Rank all 2 candidates, best first" in prompt and "one candidate's full name per line" in prompt
    assert prompt.endswith("Ranking:")


def test_requests_have_a_stable_tag_per_item_and_a_sample_index_per_run():
    requests = ranking_requests(
        ITEMS, jd="backend", jd_text="Go.", template="{job_description}|{candidates}|{count}", runs=2
    )
    assert [(r.tag, r.sample_index) for r in requests] == [
        ("ranking/backend/r0/r0", 0),
        ("ranking/backend/r0/r0", 1),
        ("ranking/backend/r0/r1", 0),
        ("ranking/backend/r0/r1", 1),
    ]
    assert {r.task for r in requests} == {RANKING_TASK} and {r.max_tokens for r in requests} == {None}
    again = ranking_requests(
        ITEMS, jd="backend", jd_text="Go.", template="{job_description}|{candidates}|{count}", runs=2
    )
    assert again == requests  # same requests, same store keys


def fake_run(answers):
    def run(requests):
        assert len(requests) == len(answers)
        results = [
            ChatResult(key=str(i), error_kind="timeout", error_message="no answer in 2 s")
            if a is TimeoutError
            else ChatResult(key=str(i), text=a, resolved_model="gpt-x-2025", latency_s=0.5)
            for i, a in enumerate(answers)
        ]
        return results, SimpleNamespace(errors=Counter())

    return run


def test_rank_with_parses_answers_into_rows():
    answers = ["1. Jamal Booker\n2. Brad McCarthy", "I can't rank people by name.", TimeoutError, "Brad McCarthy"]
    rows, stats = rank_with(
        fake_run(answers), ITEMS, model="gpt", jd="backend", jd_text="Go.", template=load_ranking_template(), runs=2
    )
    assert tuple(rows.columns) == RANKING_COLUMNS
    assert rows["item_id"].tolist() == ["r0/r0", "r0/r0", "r0/r1", "r0/r1"]
    assert rows["run"].tolist() == [0, 1, 0, 1]
    assert rows["first"].tolist() == ["Jamal Booker", None, None, "Brad McCarthy"]
    assert json.loads(rows["ranked"][0]) == ["Jamal Booker", "Brad McCarthy"]
    assert rows["error"].tolist() == [None, "unparsable: names no candidate", "timeout: no answer in 2 s", None]
    assert json.loads(rows["shown"][2]) == ["Jamal Booker", "Brad McCarthy"]
    assert json.loads(rows["groups"][2]) == ["B_M", "W_M"]
    assert rows["answer"][1] == "I can't rank people by name." and rows["answer"][2] is None
    assert stats.errors["unparsable"] == 1
    t = selection_table(rows).set_index("group")
    assert t.loc["B_M", "ranked_first"] == 1 and t.loc["W_M", "ranked_first"] == 1
    assert t.loc["B_M", "n_errors"] == 2


class CharTokenizer:
    """A stand-in tokenizer: one token per character, a BOS token first."""

    pad_token_id = 0

    def encode(self, text, add_special_tokens=False):
        return ([1] if add_special_tokens else []) + [3 + ord(c) % 90 for c in text]

    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": self.encode(text, add_special_tokens)}


def tiny_models():
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig, GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    gpt2 = GPT2LMHeadModel(
        GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=96, n_positions=128, bos_token_id=1, eos_token_id=2)
    )
    gemma = Gemma3ForCausalLM(
        Gemma3TextConfig(
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=1,
            hidden_size=32,
            intermediate_size=64,
            head_dim=16,
            vocab_size=96,
            sliding_window=8,  # shorter than the prompt: the sliding layers' cache is cut
            max_position_embeddings=128,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            final_logit_softcapping=30.0,
        )
    )
    return [gpt2.eval(), gemma.eval()]


@pytest.mark.parametrize("index", [0, 1])
def test_continuation_logprobs_match_a_full_forward_pass(index):
    import torch

    model, tok = tiny_models()[index], CharTokenizer()
    prompt, conts = "Job: Go.\nBest is", [" Brad McCarthy", " Jamal Booker", " Al"]
    got = continuation_logprobs(model, tok, prompt, conts, FP32)
    expected = []
    with torch.inference_mode():
        for c in conts:
            p, q = tok(prompt)["input_ids"], tok.encode(c)
            logp = torch.log_softmax(model(torch.tensor([p + q])).logits[0].float(), -1)
            expected.append(sum(logp[len(p) - 1 + j, t].item() for j, t in enumerate(q)))
    assert got == pytest.approx(expected, abs=1e-4)


def test_first_choice_probs_are_a_softmax_over_the_names():
    model, tok = tiny_models()[0], CharTokenizer()
    calls = []
    probs = first_choice_probs(
        model,
        tok,
        ["P1", "P2"],
        [["Al Bo", "Cy Di"], ["Cy Di", "Al Bo"]],
        FP32,
        progress=lambda d, n: calls.append((d, n)),
    )
    assert [p.sum() for p in probs] == pytest.approx([1.0, 1.0])
    lp = continuation_logprobs(model, tok, "P1" + LOCAL_CUE, [" Al Bo", " Cy Di"], FP32)
    assert probs[0] == pytest.approx(np.exp(lp) / np.exp(lp).sum())
    assert calls == [(1, 2), (2, 2)]


def test_rows_from_first_choice_sample_the_tempered_distribution():
    probs = [np.array([0.9, 0.1]), np.array([0.2, 0.8])]
    kwargs = dict(model="gemma", jd="backend", runs=3, seed=7, resolved_model="gemma@x", latency_s=1.0)
    greedy = rows_from_first_choice(ITEMS, probs, temperature=0.0, **kwargs)
    assert tuple(greedy.columns) == RANKING_COLUMNS
    assert greedy["first"].tolist() == ["Brad McCarthy"] * 3 + ["Brad McCarthy"] * 3
    assert json.loads(greedy["p_first"][0]) == [1.0, 0.0]
    sampled = rows_from_first_choice(ITEMS, probs, temperature=1.0, **kwargs)
    assert json.loads(sampled["p_first"][3]) == [0.2, 0.8]
    assert sampled.equals(rows_from_first_choice(ITEMS, probs, temperature=1.0, **kwargs))  # seeded
    t = selection_table(sampled, k=1).set_index("group")
    # exact expectation from p_first: W_M is first with 0.9 in item 0 and 0.8 in item 1
    assert t.loc["W_M", "exp_selection_rate"] == pytest.approx(0.85)
    assert isinstance(sampled, pd.DataFrame) and sampled["error"].isna().all()
