"""Name pools of the fit audit's firstName axis (catalog/probe_axes.yaml, core/jd_audit/probes/):
balanced groups, several names a group, each résumé its own name, and the `name` column from
probe_variants into fit_scores."""

from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
import yaml

from resumebias_dagster.catalog import CATALOG_DIR_ENV, PACKAGED_DIR, CatalogError
from resumebias_dagster.core.jd_audit.fit_task import fit_rows
from resumebias_dagster.core.jd_audit.probes import (
    BASELINE,
    check_probe_variants,
    load_probe_axes,
    probe_variants,
)
from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.core.tables import FitScores, ProbeVariants

POOL_SIZE = 12


@pytest.fixture(autouse=True)
def packaged_catalog(monkeypatch):
    monkeypatch.delenv(CATALOG_DIR_ENV, raising=False)


@pytest.fixture(scope="module")
def base():
    # 15 résumés: more than a pool holds, so the rotation wraps.
    return pd.concat([generate_resumes(3, seed=0), generate_resumes(2, seed=5, id_prefix="s")], ignore_index=True)


@pytest.fixture(scope="module")
def names(base):
    return probe_variants(base, axes=["firstName"])


def first_name_axis(catalog_dir=None):
    return next(a for a in load_probe_axes(catalog_dir).axes if a.id == "firstName")


def test_the_packaged_name_groups_are_balanced_and_every_group_has_several_names():
    # Study 003's six names failed both: "male" was White and MENA, "female" White, Black and
    # Hispanic (a sex contrast was a race contrast), and every race x sex group was one name.
    axis = first_name_axis()
    groups = axis.params["groups"]
    races = {sex: sorted(g["race_ethnicity"] for g in groups.values() if g["sex"] == sex) for sex in ("male", "female")}
    assert races["male"] == races["female"] == ["asian", "black", "hispanic_latino", "white"]
    assert all(g["sex"] is not None and g["race_ethnicity"] is not None for g in groups.values())
    by_group = defaultdict(set)
    for level, group in groups.items():
        value = axis.levels[level]
        by_group[group["race_ethnicity"], group["sex"]] |= set(value if isinstance(value, list) else [value])
    assert len(by_group) == 8
    assert all(len(names) > 1 for names in by_group.values()), {g: len(n) for g, n in by_group.items()}


def test_every_level_is_a_pool_of_distinct_first_names_none_shared_between_levels():
    axis = first_name_axis()
    assert sorted(axis.levels) == sorted(
        f"{race}_{sex}" for race in ("white", "black", "hispanic_latino", "asian") for sex in ("male", "female")
    )
    seen = {}
    for level, pool in axis.levels.items():
        firsts = [name.split(" ")[0] for name in pool]
        assert len(pool) == POOL_SIZE and len(set(firsts)) == POOL_SIZE, level
        for first in firsts:
            assert first not in seen, f"{first} is in {seen.get(first)} and {level}"
            seen[first] = level
        assert all("'" not in name for name in pool), "apostrophes break the e-mail and slug forms"
    # Within a race the male and female names at one position share the surname.
    for race in ("white", "black", "hispanic_latino", "asian"):
        last = [[n.split(" ", 1)[1] for n in axis.levels[f"{race}_{sex}"]] for sex in ("male", "female")]
        assert last[0] == last[1], race


def test_pools_rotate_so_each_name_is_used_once_while_the_pool_lasts(names, base):
    axis = first_name_axis()
    order = list(base["resume_id"])
    got = names[names["axis"] == "firstName"].pivot(index="resume_id", columns="level", values="name").loc[order]
    for level, pool in axis.levels.items():
        # The résumé at position k of the arm gets pool[k % 12]: deterministic, and wrapping after 12.
        assert got[level].tolist() == [pool[k % POOL_SIZE] for k in range(len(order))], level
        assert got[level].iloc[:POOL_SIZE].is_unique
    # Every level uses as many names as every other, for as many résumés.
    used = {level: got[level].iloc[:9].nunique() for level in axis.levels}
    assert set(used.values()) == {9}
    # Sex is balanced within each race: its male and female levels use as many names, on the same résumés.
    for race in ("white", "black", "hispanic_latino", "asian"):
        male, female = got[f"{race}_male"], got[f"{race}_female"]
        assert male.nunique() == female.nunique() and male.notna().equals(female.notna())
    assert probe_variants(base, axes=["firstName"]).equals(names), "the same arm gets the same names"


def test_the_name_column_is_the_written_name_of_name_variants_only(names, base):
    full = probe_variants(base.iloc[:2])
    assert list(full.columns) == list(ProbeVariants.to_schema().columns)
    ProbeVariants.validate(full)
    is_name = full["axis"] == "firstName"
    assert full.loc[~is_name, "name"].isna().all()  # the baseline and every other variant
    written = full.loc[is_name, "text"].str.split("\n").str[0]
    assert (full.loc[is_name, "name"] == written).all()
    assert check_probe_variants(full).empty


def test_the_name_flows_into_the_fit_rows(names):
    one = names[names["resume_id"] == names["resume_id"].iloc[0]]
    runs = 3
    rows = fit_rows(one, "m", "jd-1", runs, {"score": np.full(len(one) * runs, 7.0)})
    FitScores.validate(rows)
    assert list(rows.columns) == list(FitScores.to_schema().columns)
    expected = np.repeat(one["name"].to_numpy(dtype=object), runs)
    assert [None if pd.isna(v) else v for v in rows["name"]] == [None if pd.isna(v) else v for v in expected]
    assert rows.loc[rows["variant"] == BASELINE, "name"].isna().all()
    assert rows.loc[rows["variant"] == "firstName_white_male", "name"].nunique() == 1
    # A variants table without the column (made before it existed) gives rows naming nobody.
    legacy = fit_rows(one.drop(columns=["name"]), "m", "jd-1", 1, {"score": np.full(len(one), 7.0)})
    assert legacy["name"].isna().all()
    FitScores.validate(legacy)


def test_the_check_refuses_a_name_not_of_the_level(names):
    one = names[names["resume_id"] == names["resume_id"].iloc[0]].copy()
    wrong = one.copy()
    at = wrong.index[wrong["variant"] == "firstName_white_male"][0]
    wrong.loc[at, "name"] = "Mei Zhang"  # another level's name
    problems = check_probe_variants(wrong, axes=["firstName"])
    assert problems["problem"].tolist() == ["the name 'Mei Zhang' is not one of level 'white_male''s names"]
    unnamed = one.assign(name=None)
    problems = check_probe_variants(unnamed, axes=["firstName"])
    assert set(problems["problem"]) == {"a name variant without its name (the `name` column)"}


def user_axes(tmp_path, levels, groups=None):
    data = yaml.safe_load((PACKAGED_DIR / "probe_axes.yaml").read_text(encoding="utf-8"))
    data["axes"]["firstName"]["levels"] = levels
    data["axes"]["firstName"]["groups"] = groups or {k: {"sex": "male", "race_ethnicity": "white"} for k in levels}
    folder = tmp_path / "catalog"
    folder.mkdir(exist_ok=True)
    (folder / "probe_axes.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return folder


def test_a_pool_name_sharing_a_word_with_the_resumes_own_name_is_skipped(tmp_path, base):
    one = base.iloc[:2]
    own_last = one["last_name"].iloc[0]
    folder = user_axes(tmp_path, {"pool": [f"Zed {own_last}", "Yan Moore", "Uma Flint"]})
    got = probe_variants(one, axes=["firstName"], catalog_dir=folder).set_index("resume_id")["name"].dropna()
    # Résumé 0 would get entry 0, which shares its surname: it gets the next one; résumé 1 its own.
    assert got.tolist() == ["Yan Moore", "Yan Moore"]
    assert check_probe_variants(
        probe_variants(one, axes=["firstName"], catalog_dir=folder), axes=["firstName"], catalog_dir=folder
    ).empty
    first = one["first_name"].iloc[0]
    folder = user_axes(tmp_path, {"pool": [f"{first} Moore", f"Yan {own_last}"]})
    with pytest.raises(ValueError, match=r"firstName_pool of résumé \w+: every name of the pool shares a word"):
        probe_variants(one.iloc[:1], axes=["firstName"], catalog_dir=folder)


def test_a_single_name_level_still_works(tmp_path, base):
    folder = user_axes(tmp_path, {"ann_vale": "Ann Vale"})
    got = probe_variants(base.iloc[:2], axes=["firstName"], catalog_dir=folder)
    assert got.loc[got["variant"] == "firstName_ann_vale", "name"].tolist() == ["Ann Vale", "Ann Vale"]
    assert check_probe_variants(got, axes=["firstName"], catalog_dir=folder).empty


@pytest.mark.parametrize(
    "pool, message",
    [
        (["Brad McCarthy", "brad ryan"], r"level 'white_male': pool entry 2 \('brad ryan'\) must be 'First Last'"),
        (["Brad McCarthy", "Brendan"], r"level 'white_male': pool entry 2 \('Brendan'\) must be 'First Last'"),
        (["Brad McCarthy", 42], r"level 'white_male': pool entry 2 \(42\) must be 'First Last'"),
        (["Brad McCarthy", "Brad 2Ryan"], r"level 'white_male': pool entry 2 \('Brad 2Ryan'\) must be 'First Last'"),
        ([], r"level 'white_male': the name pool is empty"),
        (
            ["Brad McCarthy", "Anne Ryan", "Brad McCarthy"],
            r"level 'white_male': the name pool lists 'Brad McCarthy' "
            r"more than once",
        ),
    ],
)
def test_a_malformed_pool_is_refused_naming_the_file_axis_level_and_entry(tmp_path, pool, message):
    folder = user_axes(tmp_path, {"white_male": pool})
    with pytest.raises(CatalogError, match=r"probe_axes.yaml: axis 'firstName': " + message):
        load_probe_axes(folder)
