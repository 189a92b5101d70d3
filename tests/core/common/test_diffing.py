from resumebias_dagster.core.common.diffing import changed_tokens, tokens, unexplained_changes


def test_tokens_lowercase_and_split_on_punctuation():
    assert tokens("Greg Smith\ngreg.smith@example.com") == ["greg", "smith", "greg", "smith", "example", "com"]


def test_changed_tokens_finds_only_the_swapped_words():
    a = "Greg Smith\ngreg.smith@mail.com\nBuilt pipelines."
    b = "Jamal Washington\njamal.washington@mail.com\nBuilt pipelines."
    removed, added = changed_tokens(a, b)
    assert removed == ["greg", "smith", "greg", "smith"]
    assert added == ["jamal", "washington", "jamal", "washington"]


def test_unexplained_changes_reports_anything_else():
    a = "Greg Smith built pipelines in 2019"
    b = "Jamal Washington built pipelines in 2018"
    assert unexplained_changes(a, b, {"greg", "smith"}, {"jamal", "washington"}) == ["2019", "2018"]
    assert unexplained_changes(a, a, set(), set()) == []
