"""The ranking task's design: N résumés identical but for the candidate's name, one per group,
shown in orders that rotate so that every group is shown at every position equally often.

For G groups each base résumé gives G ranking items, the rows of a cyclic Latin square: item
``r`` shows the groups in the order ``groups[r], groups[r+1], ..., groups[r-1]`` (indices
modulo G), so across the G items of a résumé each group is shown at each position exactly
once. The names do not change between the rotations of one résumé: only the order does.

Names. Each group brings a pool of "First Last" names (``probe_axes.yaml``'s firstName
levels). The résumé at position k of the frame gets entry k of each pool (modulo its size), as
the fit audit does; an entry sharing a word with the résumé's own name or with a name already
chosen for the same item is skipped for the next one, so the N names of a ranking share no
word (within a race the catalog's male and female names at one position share the surname:
two "McCarthy" candidates side by side would be a signal of their own, and the answer's
surname alone could not tell them apart). The name goes into the text with
``core/resumes/names.replace_person`` (name line, e-mail, LinkedIn slug, lone mentions).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from resumebias_dagster.core.resumes.names import name_tokens, replace_person

BASE_COLUMNS = ("resume_id", "text", "first_name", "last_name")


class RankingDesignError(ValueError):
    """The groups, pools or base résumés cannot make a balanced ranking design."""


@dataclass(frozen=True)
class RankingItem:
    """One ranking: the candidates' names in the order shown, each name's group, and the
    résumé texts (the base résumé with that name put in), parallel to ``shown``."""

    item_id: str
    resume_id: str
    rotation: int
    shown: tuple[str, ...]
    groups: tuple[str, ...]
    texts: tuple[str, ...]

    @property
    def group_of(self) -> dict[str, str]:
        return dict(zip(self.shown, self.groups))


# The base résumés per seniority level the rankings asset ranks by default: each repeats its
# résumé once per group (8 by default), so a few résumés make many long prompts.
DEFAULT_RANKING_PER_LEVEL = 2


def rotations(groups: Sequence[str]) -> list[tuple[str, ...]]:
    """The G orders of a cyclic Latin square over ``groups``: order r starts at ``groups[r]``."""
    g = len(groups)
    return [tuple(groups[(r + i) % g] for i in range(g)) for r in range(g)]


def split_name(name: str) -> tuple[str, str]:
    """("First", "Last") of "First Last"; a longer name keeps all but its last word as first."""
    words = name.split()
    if len(words) < 2:
        raise RankingDesignError(f"name {name!r}: a ranking name needs a first and a last name")
    return " ".join(words[:-1]), words[-1]


def _tokens(name: str) -> set[str]:
    first, last = split_name(name)
    return name_tokens(first, last) - {""}


def choose_names(pools: Mapping[str, Sequence[str]], position: int, own_name: str) -> dict[str, str]:
    """One name per group for the résumé at ``position``: pool entry ``position`` (modulo the
    pool), skipping to the next entry while it shares a word with ``own_name`` or with a name
    already chosen (groups in the order of ``pools``)."""
    taken = _tokens(own_name)
    chosen: dict[str, str] = {}
    for group, pool in pools.items():
        for step in range(len(pool)):
            name = " ".join(pool[(position + step) % len(pool)].split())
            if not _tokens(name) & taken:
                chosen[group] = name
                taken |= _tokens(name)
                break
        else:
            raise RankingDesignError(
                f"group {group!r}: every name of its pool shares a word with {own_name!r} or with a name "
                f"chosen for another group ({', '.join(chosen.values())}); add names to the pool"
            )
    return chosen


def _check_pools(pools: Mapping[str, Sequence[str]]) -> None:
    if len(pools) < 2:
        raise RankingDesignError(f"a ranking needs at least two groups, got {list(pools)}")
    for group, pool in pools.items():
        if not isinstance(group, str) or not group:
            raise RankingDesignError(f"group {group!r}: a group is a non-empty string")
        if isinstance(pool, str) or not pool:
            raise RankingDesignError(f"group {group!r}: its pool must be a non-empty list of names")
        for name in pool:
            split_name(name)


def ranking_items(base: pd.DataFrame, pools: Mapping[str, Sequence[str]]) -> list[RankingItem]:
    """Every ranking item: for each base résumé (rows of ``base``: ``resume_id``, ``text``,
    ``first_name``, ``last_name``, as ``base_resumes``) one item per rotation of the groups
    (``pools``' keys, in their order), résumé-major. ``item_id`` is ``<resume_id>/r<rotation>``."""
    missing = [c for c in BASE_COLUMNS if c not in base.columns]
    if missing:
        raise RankingDesignError(f"base résumés lack column(s) {', '.join(missing)}")
    if base["resume_id"].duplicated().any():
        raise RankingDesignError("base résumés: resume_id must be unique")
    _check_pools(pools)
    orders = rotations(list(pools))
    items: list[RankingItem] = []
    for position, row in enumerate(base.itertuples(index=False)):
        own_first, own_last = str(row.first_name), str(row.last_name)
        names = choose_names(pools, position, f"{own_first} {own_last}")
        try:
            text_of = {
                group: replace_person(str(row.text), own_first, own_last, *split_name(name))
                for group, name in names.items()
            }
        except ValueError as exc:
            raise RankingDesignError(f"résumé {row.resume_id}: {exc}") from None
        for r, order in enumerate(orders):
            items.append(
                RankingItem(
                    item_id=f"{row.resume_id}/r{r}",
                    resume_id=str(row.resume_id),
                    rotation=r,
                    shown=tuple(names[g] for g in order),
                    groups=order,
                    texts=tuple(text_of[g] for g in order),
                )
            )
    return items


def pools_from_levels(levels: Mapping[str, str | Sequence[str]]) -> dict[str, list[str]]:
    """``probe_axes.yaml``'s firstName ``levels`` (a name or a pool of names per level) as pools."""
    return {
        str(level): [value] if isinstance(value, str) else [str(v) for v in value] for level, value in levels.items()
    }
