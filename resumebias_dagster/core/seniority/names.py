"""Demographic name variants of a résumé (the seniority study's Test 3).

Two scopes of the swap (``NAME_SCOPES``):

* ``everywhere`` (the default): every occurrence is replaced (name line, e-mail local part,
  LinkedIn slug, any mention) in every case form, and a variant is refused if any token of
  the original name survives. This removes a confound of the seniority study: there the original name
  stayed in the e-mail address of every variant.
* ``first_line``: notebook 004's step 3, for a replication that must match the seniority study: the first
  line, which must be the name, becomes the new name and nothing else changes (the original
  name stays in the e-mail address and anywhere else it occurs).

Both scopes draw the same names for the same seed, so their tables differ only in the scope.
Pools live in ``catalog/name_pools.yaml``.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass

import pandas as pd

from resumebias_dagster.catalog import CatalogError, load_yaml
from resumebias_dagster.core.common.diffing import unexplained_changes
from resumebias_dagster.core.common.labels import DEMOGRAPHICS, NAME_SCOPES, race_of
from resumebias_dagster.core.resumes.names import name_tokens, replace_person
from resumebias_dagster.core.tables import NameVariants, columns

POOLS_FILE = "name_pools.yaml"
VARIANT_COLUMNS = columns(NameVariants)  # the name_variants table (core/tables/)
# The résumés name_variants_skipping leaves out: a refused swap, and why.
SKIPPED_COLUMNS = ["original_idx", "resume_id", "reason"]
# How much of a résumé a name swap touches; see the module docstring.
DEFAULT_NAME_SCOPE = "everywhere"

CatalogDir = str | os.PathLike | None


@dataclass(frozen=True)
class NamePools:
    first_names: dict[str, tuple[str, ...]]
    last_names: dict[str, tuple[str, ...]]


def load_name_pools(catalog_dir: CatalogDir = None) -> NamePools:
    """First names per demographic and last names per race, validated."""
    data = load_yaml(POOLS_FILE, catalog_dir)
    try:
        first = {d: tuple(data["first_names"][d]) for d in DEMOGRAPHICS}
        races = sorted({race_of(d) for d in DEMOGRAPHICS})
        last = {r: tuple(data["last_names"][r]) for r in races}
    except (KeyError, TypeError) as exc:
        raise CatalogError(
            f"{POOLS_FILE}: needs first_names for {list(DEMOGRAPHICS)} and last_names per race ({exc!r})"
        ) from exc
    for group, names in [*first.items(), *last.items()]:
        if not names:
            raise CatalogError(f"{POOLS_FILE}: the pool {group!r} is empty")
        bad = [n for n in names if not isinstance(n, str) or not re.fullmatch(r"[A-Z][A-Za-z]+", n)]
        if bad:
            raise CatalogError(f"{POOLS_FILE}: {group}: {bad} must be single words of letters (e-mail and slug forms)")
    return NamePools(first, last)


def check_name_scope(scope: object, setting: str = "name_scope") -> str:
    """``scope`` if it is one of ``NAME_SCOPES``, else a ``ValueError`` naming ``setting``."""
    if scope not in NAME_SCOPES:
        raise ValueError(
            f"{setting} must be one of {', '.join(repr(s) for s in NAME_SCOPES)} (everywhere: the name is replaced "
            f"in the whole résumé; first_line: notebook 004, only the name line), got {scope!r}"
        )
    return str(scope)


def _same_name(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def replace_first_line(text: str, old_first: str, old_last: str, new_first: str, new_last: str) -> str:
    """Notebook 004's swap: the first line, which must be the name, becomes the new name.

    Everything after the first line is kept byte for byte, the original name included.
    Raises ``ValueError`` if the first line is not the original name (compared ignoring case
    and repeated spaces): replacing another line would delete résumé content.
    """
    first, newline, rest = text.partition("\n")
    old = f"{old_first.strip()} {old_last.strip()}"
    if not _same_name(first, old):
        raise ValueError(
            f"the first line {first.strip()[:60]!r} is not the name {old!r} (name_scope first_line "
            "replaces the name line, which must come first)"
        )
    return f"{new_first} {new_last}" + newline + rest


def _cycle(pool: tuple[str, ...], rng: random.Random) -> Iterator[str]:
    """Endless draws that use every name once per round, in a new shuffled order each round."""
    while True:
        order = list(pool)
        rng.shuffle(order)
        yield from order


def name_variants(
    base: pd.DataFrame, seed: int = 0, catalog_dir: CatalogDir = None, scope: str = DEFAULT_NAME_SCOPE
) -> pd.DataFrame:
    """Four rows per base résumé, one per demographic (labels.DEMOGRAPHICS order).

    ``base`` has ``resume_id``, ``seniority``, ``text`` (the neutral résumé) and either
    ``first_name``/``last_name`` or ``name``. Names are drawn from the pools in balanced
    shuffled rounds, so every pool name is used about equally; same seed, same draws
    (whatever the scope). ``original_idx`` is the row's position in ``base``; ``scope``
    (``NAME_SCOPES``) says how much of the text changes and is stored as ``name_scope``.
    A swap ``replace_person`` (or ``replace_first_line``) refuses raises a ``ValueError``;
    ``name_variants_skipping`` leaves such a résumé out instead.
    """
    return _name_variants(base, seed, catalog_dir, scope, skip=False)[0]


def name_variants_skipping(
    base: pd.DataFrame, seed: int = 0, catalog_dir: CatalogDir = None, scope: str = DEFAULT_NAME_SCOPE
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``name_variants``, but a résumé whose name swap is refused (for any of its four names) is
    left out rather than stopping the others: the user's own résumés, where a name that
    cannot be swapped cleanly is normal. Returns the variants and the skipped résumés
    (``SKIPPED_COLUMNS``: ``resume_id``, ``original_idx`` and the refusal). Every résumé draws its
    four names whether or not it is skipped, so the others get the names they would get anyway.
    """
    return _name_variants(base, seed, catalog_dir, scope, skip=True)


def _name_variants(
    base: pd.DataFrame, seed: int, catalog_dir: CatalogDir, scope: str, *, skip: bool
) -> tuple[pd.DataFrame, pd.DataFrame]:
    scope = check_name_scope(scope)
    replace = replace_person if scope == "everywhere" else replace_first_line
    missing = {"resume_id", "seniority", "text"} - set(base.columns)
    if missing or not ({"first_name", "last_name"} <= set(base.columns) or "name" in base.columns):
        raise ValueError(
            f"name_variants: base needs resume_id, seniority, text and first_name/last_name or name; "
            f"missing {sorted(missing) or ['first_name/last_name or name']}"
        )
    pools = load_name_pools(catalog_dir)
    rng = random.Random(f"name_variants|{seed}")
    firsts = {d: _cycle(pools.first_names[d], rng) for d in DEMOGRAPHICS}
    lasts = {d: _cycle(pools.last_names[race_of(d)], rng) for d in DEMOGRAPHICS}

    rows = []
    skipped = []
    for original_idx, row in enumerate(base.to_dict("records")):
        if "first_name" in row and "last_name" in row:
            old_first, old_last = row["first_name"], row["last_name"]
        else:
            parts = str(row["name"]).split()
            old_first, old_last = parts[0], parts[-1]
        # Drawn in the same order as one draw per demographic (first name, then last name).
        drawn = [(d, next(firsts[d]), next(lasts[d])) for d in DEMOGRAPHICS]
        done = []
        for demographic, new_first, new_last in drawn:
            try:
                text = replace(row["text"], old_first, old_last, new_first, new_last)
            except ValueError as exc:
                if not skip:
                    raise ValueError(f"name_variants: résumé {row['resume_id']} ({demographic}): {exc}") from exc
                skipped.append((original_idx, row["resume_id"], f"{demographic} ({new_first} {new_last}): {exc}"))
                break
            name = f"{new_first} {new_last}"
            done.append(
                (original_idx, row["resume_id"], row["seniority"], demographic, name, new_first, new_last, text, scope)
            )
        else:
            rows += done
    df = pd.DataFrame(rows, columns=VARIANT_COLUMNS).astype({"original_idx": "int64"})
    return df, pd.DataFrame(skipped, columns=SKIPPED_COLUMNS).astype({"original_idx": "int64"})


def variant_problems(variants: pd.DataFrame, limit: int | None = None) -> list[str]:
    """What breaks "the variants of one résumé differ only in the name", under each row's scope.

    ``everywhere``: between the first variant of an original and each other one, every
    changed token is a token of the two names (``diffing.unexplained_changes``).
    ``first_line``: only line 1 may change: it must be the variant's ``name``, and the rest of
    the text must be identical to the first variant's, character for character.
    One message per offending variant (at most ``limit``; None: all), naming ``original_idx`` and the
    demographic; an unknown or mixed ``name_scope`` is a problem too. Empty list: all good.
    """
    missing = {"original_idx", "demographic", "name", "first_name", "last_name", "text", "name_scope"} - set(variants)
    if missing:
        return [f"name_variants lacks column(s) {', '.join(sorted(missing))}"]
    problems: list[str] = []
    scopes = variants["name_scope"].drop_duplicates().tolist()
    bad = [s for s in scopes if s not in NAME_SCOPES]
    if bad:
        return [f"name_scope {bad!r} is not one of {list(NAME_SCOPES)}"]
    if len(scopes) > 1:
        return [f"one table mixes the name scopes {sorted(scopes)}"]
    for original_idx, group in variants.groupby("original_idx", sort=True):
        first = group.iloc[0]
        for i, other in enumerate(group.itertuples(index=False)):
            where = f"original_idx {original_idx} ({other.demographic})"
            text, name = str(other.text), str(other.name)
            if other.name_scope == "first_line":
                head, _, rest = text.partition("\n")
                if not _same_name(head, name):
                    problems.append(f"{where}: line 1 {head.strip()[:60]!r} is not the name {name!r}")
                elif rest != first["text"].partition("\n")[2]:
                    problems.append(f"{where}: the text after line 1 differs from {first['demographic']}'s")
            elif i > 0:
                extra = unexplained_changes(
                    first["text"],
                    text,
                    name_tokens(first["first_name"], first["last_name"]),
                    name_tokens(str(other.first_name), str(other.last_name)),
                )
                if extra:
                    problems.append(f"{where}: {sorted(set(extra))[:5]}")
            if limit is not None and len(problems) >= limit:
                return problems
    return problems
