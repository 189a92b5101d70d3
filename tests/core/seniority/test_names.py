import pandas as pd
import pytest

from resumebias_dagster.catalog import CatalogError
from resumebias_dagster.core.common.diffing import tokens, unexplained_changes
from resumebias_dagster.core.common.labels import DEMOGRAPHICS, race_of
from resumebias_dagster.core.resumes.names import name_tokens, replace_person
from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.core.seniority.names import (
    NAME_SCOPES,
    load_name_pools,
    name_variants,
    replace_first_line,
    variant_problems,
)

CM, CF, AAM, AAF = DEMOGRAPHICS


@pytest.fixture(scope="module")
def base():
    return generate_resumes()


@pytest.fixture(scope="module")
def variants(base):
    return name_variants(base)


@pytest.fixture(scope="module")
def pools():
    return load_name_pools()


def test_shape_and_order(base, variants):
    assert len(variants) == 480
    assert list(variants.columns) == [
        "original_idx",
        "resume_id",
        "seniority",
        "demographic",
        "name",
        "first_name",
        "last_name",
        "text",
        "name_scope",
    ]
    assert set(variants["name_scope"]) == {"everywhere"}  # the default
    assert variants["original_idx"].dtype == "int64"
    for idx, group in variants.groupby("original_idx"):
        assert list(group["demographic"]) == list(DEMOGRAPHICS)
        assert set(group["resume_id"]) == {base["resume_id"].iloc[idx]}
        assert set(group["seniority"]) == {base["seniority"].iloc[idx]}
    assert sorted(variants["original_idx"].unique()) == list(range(120))


def test_names_come_from_the_right_pools_in_balanced_rounds(variants, pools):
    for row in variants.itertuples():
        assert row.first_name in pools.first_names[row.demographic]
        assert row.last_name in pools.last_names[race_of(row.demographic)]
        assert row.name == f"{row.first_name} {row.last_name}"
    counts = variants.groupby("demographic")["first_name"].value_counts()
    assert counts.max() - counts.min() <= 1


def test_deterministic_and_seeded(base, variants):
    assert name_variants(base).equals(variants)
    other = name_variants(base, seed=1)
    assert (other["name"] != variants["name"]).mean() > 0.5


def test_pools_follow_the_study():
    pools = load_name_pools()
    assert "Emily" in pools.first_names["caucasian_female"] and "Greg" in pools.first_names["caucasian_male"]
    assert (
        "Lakisha" in pools.first_names["african_american_female"]
        and "Jamal" in pools.first_names["african_american_male"]
    )
    assert all(len(names) == 9 for names in pools.first_names.values())
    assert {"Washington", "Jefferson", "Jackson", "Robinson", "Williams"} <= set(pools.last_names["african_american"])
    assert {"Smith", "Johnson", "Williams", "Anderson", "Miller", "Davis"} <= set(pools.last_names["caucasian"])
    every = [n for names in [*pools.first_names.values(), *pools.last_names.values()] for n in names]
    assert not any("'" in n for n in every)


def test_original_name_appears_nowhere(base, variants):
    for row in variants.itertuples():
        original = base.iloc[row.original_idx]
        assert not set(tokens(row.text)) & name_tokens(original["first_name"], original["last_name"])
        assert original["email"] not in row.text
        assert original["email"].split("@")[0] not in row.text.lower()
        lines = row.text.split("\n")
        assert lines[0] == row.name
        local = lines[1].split("@")[0]
        assert row.first_name.lower() in local and row.last_name.lower() in local


def test_variants_differ_only_in_name_tokens(base, variants):
    for idx, group in variants.groupby("original_idx"):
        original = base.iloc[idx]
        versions = [(original["text"], name_tokens(original["first_name"], original["last_name"]))]
        versions += [(r.text, name_tokens(r.first_name, r.last_name)) for r in group.itertuples()]
        for (a, allowed_a), (b, allowed_b) in zip(versions, versions[1:]):
            ta, tb = tokens(a), tokens(b)
            assert len(ta) == len(tb)
            for x, y in zip(ta, tb):
                if x != y:
                    assert x in allowed_a and y in allowed_b, (idx, x, y)
            assert unexplained_changes(a, b, allowed_a, allowed_b) == []


def test_a_changed_word_is_noticed(base, variants):
    # The check above can fail: one extra changed word is reported.
    row = variants.iloc[0]
    altered = row.text.replace("SUMMARY", "PROFILE")
    extra = unexplained_changes(row.text, altered, name_tokens(row.first_name, row.last_name), set())
    assert extra == ["summary", "profile"]


def test_replace_person_handles_every_form():
    text = (
        "Avery Lindqvist\n"
        "avery.lindqvist@example.com | avery_lindqvist@example.org | lindqvist.avery@x.com\n"
        "linkedin.com/in/averylindqvist | linkedin.com/in/avery-lindqvist\n"
        "AVERY LINDQVIST, Lindqvist, Avery; avery; Lindqvist's notes; LindqvistAvery\n"
    )
    out = replace_person(text, "Avery", "Lindqvist", "Greg", "McCarthy")
    assert out == (
        "Greg McCarthy\n"
        "greg.mccarthy@example.com | greg_mccarthy@example.org | mccarthy.greg@x.com\n"
        "linkedin.com/in/gregmccarthy | linkedin.com/in/greg-mccarthy\n"
        "GREG MCCARTHY, McCarthy, Greg; greg; McCarthy's notes; McCarthyGreg\n"
    )


def test_replace_person_leaves_other_words_alone():
    text = "Ivan Novak\nivan.novak@example.com\nWorked on Novakia and ivanhoe; reviewed Ivan's plan."
    out = replace_person(text, "Ivan", "Novak", "Jamal", "Jones")
    assert "Novakia" in out and "ivanhoe" in out and "Jamal's plan" in out


def test_replace_person_errors():
    with pytest.raises(ValueError, match="Avery Lindqvist"):
        replace_person("Someone Else\nno name here", "Avery", "Lindqvist", "Greg", "Smith")
    with pytest.raises(ValueError, match="shares"):
        replace_person("Greg Smith", "Greg", "Smith", "Greg", "Jones")


def test_name_not_found_names_the_resume(base):
    broken = base.head(3).copy()
    broken.loc[broken.index[1], "text"] = broken["text"].iloc[1].replace(broken["name"].iloc[1], "Somebody")
    broken.loc[broken.index[1], "text"] = broken["text"].iloc[1].replace(broken["first_name"].iloc[1], "x")
    with pytest.raises(ValueError, match=broken["resume_id"].iloc[1]):
        name_variants(broken)


def test_base_without_names_is_refused():
    with pytest.raises(ValueError, match="first_name"):
        name_variants(pd.DataFrame({"resume_id": ["a"], "seniority": ["mid"], "text": ["x"]}))


def test_name_column_alone_is_enough(base):
    only_name = base.head(2).drop(columns=["first_name", "last_name"])
    out = name_variants(only_name)
    assert len(out) == 8


def test_name_tokens():
    assert name_tokens("Greg", "Smith") == {"greg", "smith", "gregsmith", "smithgreg"}


def test_broken_pool_file_names_the_file(tmp_path):
    (tmp_path / "name_pools.yaml").write_text("first_names: {caucasian_male: [Greg]}\nlast_names: {}\n")
    with pytest.raises(CatalogError, match="name_pools.yaml"):
        load_name_pools(tmp_path)


# --------------------------------------------------------------------------- name_scope


@pytest.fixture(scope="module")
def first_line(base):
    return name_variants(base, scope="first_line")


def test_first_line_scope_changes_only_the_name_line(base, variants, first_line):
    assert set(first_line["name_scope"]) == {"first_line"} and NAME_SCOPES == ("everywhere", "first_line")
    # Same draws as the default scope: the two tables differ only in how much text changes.
    assert first_line["name"].tolist() == variants["name"].tolist()
    for row in first_line.itertuples():
        original = base.iloc[row.original_idx]
        head, _, rest = row.text.partition("\n")
        assert head == row.name
        assert rest == original["text"].partition("\n")[2]
        # Notebook 004: the original name stays in the e-mail address.
        assert original["email"] in row.text


def test_variant_check_passes_under_both_scopes(variants, first_line):
    assert variant_problems(variants) == []
    assert variant_problems(first_line) == []


def test_first_line_check_refuses_any_change_after_line_1(first_line):
    broken = first_line.copy()
    row = broken.index[1]
    # The variant's name repeated at the end (a signature line): only name tokens are added.
    broken.at[row, "text"] = broken.at[row, "text"] + "\n" + broken.at[row, "name"]
    first = broken.iloc[0]
    # The everywhere rule would accept this edit ...
    assert (
        unexplained_changes(
            first["text"],
            broken.at[row, "text"],
            name_tokens(first["first_name"], first["last_name"]),
            name_tokens(broken.at[row, "first_name"], broken.at[row, "last_name"]),
        )
        == []
    )
    # ... first_line does not: only line 1 may change.
    assert variant_problems(broken) == [f"original_idx 0 ({CF}): the text after line 1 differs from {CM}'s"]


def test_first_line_check_wants_the_name_on_line_1(first_line):
    broken = first_line.copy()
    broken.at[broken.index[2], "text"] = "Somebody Else\n" + broken.at[broken.index[2], "text"].partition("\n")[2]
    name = broken.at[broken.index[2], "name"]
    assert variant_problems(broken) == [f"original_idx 0 ({AAM}): line 1 'Somebody Else' is not the name {name!r}"]


def test_everywhere_check_reports_a_changed_word(variants):
    broken = variants.copy()
    broken.at[broken.index[5], "text"] = broken.at[broken.index[5], "text"].replace("SUMMARY", "PROFILE")
    assert variant_problems(broken) == [f"original_idx 1 ({CF}): ['profile', 'summary']"]


def test_variant_check_refuses_unknown_or_mixed_scopes(variants, first_line):
    assert variant_problems(variants.assign(name_scope="name_line")) == [
        "name_scope ['name_line'] is not one of ['everywhere', 'first_line']"
    ]
    mixed = pd.concat([variants.head(4), first_line.iloc[4:8]], ignore_index=True)
    assert variant_problems(mixed) == ["one table mixes the name scopes ['everywhere', 'first_line']"]
    assert variant_problems(variants.drop(columns="name_scope")) == ["name_variants lacks column(s) name_scope"]


def test_bad_scope_is_refused_naming_the_setting(base):
    with pytest.raises(ValueError, match=r"name_scope must be one of 'everywhere', 'first_line'.*got 'name_line'"):
        name_variants(base.head(1), scope="name_line")


def test_first_line_scope_needs_the_name_on_line_1(base):
    moved = base.head(2).copy()
    moved.loc[moved.index[1], "text"] = "CURRICULUM VITAE\n" + moved["text"].iloc[1]
    with pytest.raises(
        ValueError, match=rf"{moved['resume_id'].iloc[1]}.*first line 'CURRICULUM VITAE' is not the name"
    ):
        name_variants(moved, scope="first_line")
    # Case and spacing of the name line do not matter; the rest is kept byte for byte.
    assert replace_first_line("  greg   SMITH\nx greg.smith@y", "Greg", "Smith", "Jamal", "Jones") == (
        "Jamal Jones\nx greg.smith@y"
    )


def test_a_word_of_a_multi_word_last_name_left_in_an_email_is_refused_not_kept():
    """ "Jane Q. Doe": the e-mail's "doe" is a word of the last name "Q. Doe" that no form of the
    whole name matches; it used to stay silently (issue 28), now the replacement is refused."""
    from resumebias_dagster.core.resumes.names import replace_person

    text = "Jane Q. Doe\njane.doe@example.com\n"
    with pytest.raises(ValueError, match="'doe' of the name 'Jane Q. Doe' is still in the text"):
        replace_person(text, "Jane", "Q. Doe", "Ann", "Lee")
