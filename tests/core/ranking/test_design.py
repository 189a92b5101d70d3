"""The ranking design: a cyclic Latin square of orders over the groups, names put into the résumé."""

from collections import Counter

import pandas as pd
import pytest

from resumebias_dagster.core.ranking.design import (
    RankingDesignError,
    choose_names,
    pools_from_levels,
    ranking_items,
    rotations,
)

POOLS = {
    "white_male": ["Brad McCarthy", "Brendan Ryan"],
    "white_female": ["Allison McCarthy", "Anne Ryan", "Carrie Sullivan"],
    "black_male": ["Darnell Washington", "Hakim Jefferson"],
    "black_female": ["Aisha Washington", "Ebony Jefferson", "Keisha Booker"],
}


def base_frame(n=3):
    rows = []
    for i in range(n):
        first, last = ["Pat", "Sam", "Lee"][i], ["Quinn", "Rivera", "Tanaka"][i]
        text = (
            f"{first} {last}\n{first.lower()}.{last.lower()}@example.com | 555-0100 | Austin, TX | "
            f"linkedin.com/in/{first.lower()}{last.lower()}\n\nSUMMARY\nBackend engineer, {i + 4} years.\n"
        )
        rows.append({"resume_id": f"r{i}", "text": text, "first_name": first, "last_name": last})
    return pd.DataFrame(rows)


def test_every_group_is_shown_at_every_position_equally_often():
    items = ranking_items(base_frame(3), POOLS)
    groups = list(POOLS)
    assert len(items) == 3 * len(groups)
    at = Counter((pos, g) for item in items for pos, g in enumerate(item.groups))
    assert set(at.values()) == {3}  # each (position, group) once per base résumé
    assert len(at) == len(groups) ** 2
    firsts = Counter(item.groups[0] for item in items)
    assert firsts == {g: 3 for g in groups}
    # Within one résumé the G orders form a Latin square.
    for rid in ("r0", "r1", "r2"):
        square = [item.groups for item in items if item.resume_id == rid]
        for pos in range(len(groups)):
            assert sorted(order[pos] for order in square) == sorted(groups)


def test_rotations_are_the_rows_of_a_cyclic_latin_square():
    assert rotations(["a", "b", "c"]) == [("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")]


def test_items_carry_names_groups_and_texts_in_the_order_shown():
    items = ranking_items(base_frame(1), POOLS)
    first = items[0]
    assert first.item_id == "r0/r0" and first.rotation == 0
    assert first.groups == tuple(POOLS)
    # Entry 0 of each pool, skipping a name that shares a word with one already chosen.
    assert first.shown == ("Brad McCarthy", "Anne Ryan", "Darnell Washington", "Ebony Jefferson")
    for name, text in zip(first.shown, first.texts):
        assert text.startswith(name + "\n")
        assert "Quinn" not in text and "pat.quinn" not in text
    assert "brad.mccarthy@example.com" in first.texts[0]
    assert "linkedin.com/in/bradmccarthy" in first.texts[0]
    # The same names in every rotation of a résumé; only the order changes.
    assert {frozenset(i.shown) for i in items} == {frozenset(first.shown)}
    assert items[1].shown[0] == "Anne Ryan" and items[1].group_of["Anne Ryan"] == "white_female"

    # The texts differ only by the name.
    def without(name, text):
        first, last = name.lower().split()
        return text.replace(name, "X").replace(f"{first}.{last}", "x").replace(first + last, "x")

    assert len({without(n, t) for n, t in zip(first.shown, first.texts)}) == 1


def test_names_of_one_ranking_share_no_word_and_skip_the_resume_own_name():
    chosen = choose_names(POOLS, 0, "Brad Smith")
    assert chosen["white_male"] == "Brendan Ryan"  # Brad is the résumé's own first name
    assert chosen["white_female"] == "Allison McCarthy"  # Anne Ryan shares Ryan
    words = [w for n in chosen.values() for w in n.split()]
    assert len(words) == len(set(words))


def test_bad_designs_are_refused_with_a_reason():
    with pytest.raises(RankingDesignError, match="at least two groups"):
        ranking_items(base_frame(1), {"a": ["Brad McCarthy"]})
    with pytest.raises(RankingDesignError, match="lack column"):
        ranking_items(base_frame(1).drop(columns="first_name"), POOLS)
    with pytest.raises(RankingDesignError, match="every name of its pool shares a word"):
        ranking_items(base_frame(1), {"a": ["Brad McCarthy"], "b": ["Allison McCarthy"]})
    with pytest.raises(RankingDesignError, match="first and a last name"):
        ranking_items(base_frame(1), {"a": ["Brad"], "b": ["Anne Ryan"]})
    with pytest.raises(RankingDesignError, match="does not occur"):
        ranking_items(base_frame(1).assign(first_name="Nobody"), POOLS)


def test_pools_from_levels():
    assert pools_from_levels({"a": "Brad McCarthy", "b": ["Anne Ryan", "Jill Olson"]}) == {
        "a": ["Brad McCarthy"],
        "b": ["Anne Ryan", "Jill Olson"],
    }
