"""Grouping prompts by the token prefix they share (pure; the model side is tested in
tests/core/jd_audit/test_local_fit.py)."""

from resumebias_dagster.core.models import prefixes


def test_prompts_sharing_a_long_prefix_are_grouped_and_the_rest_stay_loose():
    a = [1, 2, 3, 4, 5, 6]
    groups = prefixes.prefix_groups([a[:5] + [9], [7, 8, 9], a, a[:3] + [0, 0, 0], [7, 8, 1]], minimum=3)
    # 0 and 2 share 5 tokens; adding 3 (3 shared) would save 2 x 3 = 6 >= 1 x 5: one group of three.
    assert [(sorted(m), p) for m, p in groups] == [([0, 2, 3], 3), ([1, 4], 0)]
    # Below the minimum nothing is grouped: one loose group in input order.
    assert prefixes.prefix_groups([a, a[:2] + [0]], minimum=3) == [([0, 1], 0)]


def test_a_grouped_prompt_keeps_at_least_one_token_after_the_prefix():
    same = [5] * 10
    groups = prefixes.prefix_groups([same, list(same), same + [1]], minimum=4)
    ((members, prefix),) = groups
    assert sorted(members) == [0, 1, 2] and prefix == 9


def test_a_group_stops_growing_when_it_would_save_less():
    long = list(range(100))
    # Two prompts share 99 tokens; a third shares 10 with them: 2 x 10 < 1 x 99, so it stays out.
    groups = prefixes.prefix_groups([long, long[:99] + [0], long[:10] + [-1] * 90], minimum=5)
    assert [(sorted(m), p) for m, p in groups] == [([0, 1], 99), ([2], 0)]


def test_the_sharing_plan_takes_an_opening_long_enough_and_groups_what_follows():
    opening = list(range(100, 110))
    a, b, c = opening + [1, 2, 3, 4, 5], opening + [1, 2, 3, 4, 6], opening + [7, 8]
    shared, groups = prefixes.sharing_plan([a, b, c], minimum=4)
    assert shared == 10 and [(sorted(m), p) for m, p in groups] == [([0, 1], 4), ([2], 0)]
    # An opening under the minimum is computed with each prompt; so is a single prompt's.
    assert prefixes.sharing_plan([a, b, c], minimum=11)[0] == 0
    assert prefixes.sharing_plan([a], minimum=1) == (0, [([0], 0)])
    # Identical prompts keep their last token to score.
    assert prefixes.sharing_plan([a, list(a)], minimum=4)[0] == len(a) - 1


def test_computed_spans_count_each_shared_prefix_once():
    opening = list(range(100, 110))
    a, b, c = opening + [1, 2, 3, 4, 5], opening + [1, 2, 3, 4, 6], opening + [7, 8]
    spans = prefixes.computed_spans([a, b, c], minimum=4)
    # The opening once, the group's 4 shared tokens once, then each prompt's own rest.
    assert sorted(spans) == [(0, 10), (10, 12), (10, 14), (14, 15), (14, 15)]
    assert sum(stop - start for start, stop in spans) == 10 + 4 + 1 + 1 + 2
    assert prefixes.computed_spans([a, b, c], minimum=100) == [(0, 15), (0, 15), (0, 12)]
    assert prefixes.computed_spans([], minimum=4) == []
