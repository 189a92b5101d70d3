import re

import numpy as np
import pytest

from resumebias_dagster.catalog import CatalogError
from resumebias_dagster.core.common.labels import STYLES
from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.core.seniority.style import extract_facts, rewrite_style

# The rewriter's output measured with the validation's independent lexicon.
from resumebias_dagster.core.seniority.style_validation import load_tone_lexicon, tone_counts, tone_score, word_count

FORBIDDEN = re.compile(r"(?i)\b(junior|senior|mid|mid-level|entry[- ]level)\b")
PRONOUNS = re.compile(r"(?i)\b(he|she|his|her|hers|him|himself|herself)\b")


@pytest.fixture(scope="module")
def base():
    return generate_resumes()


@pytest.fixture(scope="module")
def variants(base):
    return {style: [rewrite_style(text, style) for text in base["text"]] for style in STYLES}


@pytest.fixture(scope="module")
def lexicon():
    return load_tone_lexicon()


def test_neutral_is_unchanged(base, variants):
    assert variants["neutral"] == list(base["text"])


def test_unknown_style_names_the_style():
    with pytest.raises(ValueError, match="'boastful'"):
        rewrite_style("Greg Smith\n\nSUMMARY\nAccountant.", "boastful")


def test_deterministic_and_varied_by_seed(base, variants):
    text = base["text"].iloc[3]
    assert rewrite_style(text, "overstated") == variants["overstated"][3]
    changed = sum(
        rewrite_style(t, "overstated", seed=1) != o for t, o in zip(base["text"][:20], variants["overstated"])
    )
    assert changed == 20
    # Within one résumé the bullets do not all share one opening.
    openings = {line.split()[1] for line in variants["overstated"][3].split("\n") if line.startswith("- ")}
    assert len(openings) >= 3


def test_no_seniority_words_or_pronouns_in_any_style(variants):
    texts = [t for style in STYLES for t in variants[style]]
    assert len(texts) == 360
    for text in texts:
        assert not FORBIDDEN.search(text), FORBIDDEN.search(text).group(0)
        assert not PRONOUNS.search(text), PRONOUNS.search(text).group(0)


def test_facts_identical_across_styles(base, variants):
    for i, row in enumerate(base.itertuples()):
        facts = [extract_facts(variants[style][i]) for style in STYLES]
        assert facts[0] == facts[1] == facts[2], row.resume_id
        neutral = facts[0]
        assert neutral["employers"] == row.employers.split("; ")
        assert neutral["skills"] == row.skills.split(", ")
        assert row.degree in neutral["education"]
        assert neutral["contact"][0] == row.name and row.email in neutral["contact"][1]
        assert len(neutral["dates"]) == len(neutral["employers"])


def test_only_summary_and_bullets_change(base, variants):
    for i, text in enumerate(base["text"]):
        lines = text.split("\n")
        in_summary = False
        keep = []
        for line in lines:
            if line in ("SUMMARY", "EXPERIENCE", "EDUCATION", "SKILLS"):
                in_summary = line == "SUMMARY"
            if not (in_summary and line and line != "SUMMARY") and not line.startswith("- "):
                keep.append(line)
        for style in ("overstated", "understated"):
            other = variants[style][i].split("\n")
            assert [line for line in other if line in keep] == keep
            bullets = [line for line in other if line.startswith("- ")]
            originals = [line for line in lines if line.startswith("- ")]
            assert len(bullets) == len(originals)
            assert all(b != o for b, o in zip(bullets, originals))


def test_tone_ordering_per_resume_and_on_average(variants, lexicon):
    tone = {s: np.array([tone_score(*tone_counts(t, lexicon)) for t in variants[s]]) for s in STYLES}
    assert tone["overstated"].mean() >= 0.5
    assert tone["understated"].mean() <= -0.5
    assert tone["understated"].mean() + 0.3 < tone["neutral"].mean() < tone["overstated"].mean() - 0.3
    assert (tone["overstated"] > tone["neutral"]).all()
    assert (tone["neutral"] > tone["understated"]).all()


def test_word_count_ordering(variants):
    words = {s: np.array([word_count(t) for t in variants[s]]) for s in STYLES}
    assert words["overstated"].mean() > 1.2 * words["neutral"].mean()
    assert words["understated"].mean() < 0.85 * words["neutral"].mean()
    assert (words["overstated"] > words["neutral"]).all()
    assert (words["neutral"] > words["understated"]).all()


def test_every_generated_bullet_starts_with_a_known_verb(variants):
    # An unknown opening gets the generic suffix instead of a humble verb.
    for text in variants["understated"]:
        assert "as part of a wider team" not in text


def test_seed_example_sentences():
    text = "Greg Smith\ngreg.smith@example.com\n\nEXPERIENCE\nData Engineer\nAcme | 2020 – Present\n- Built a data pipeline using Python, reducing load time by 30%.\n"
    over = rewrite_style(text, "overstated").split("\n")[-2]
    under = rewrite_style(text, "understated").split("\n")[-2]
    assert over.startswith("- ") and over != "- Built a data pipeline using Python, reducing load time by 30%."
    assert re.search(r"(?i)architected|engineered|pioneered|masterfully", over)
    assert "30%" in over and "reducing" in over
    assert "30%" not in under and "reducing" not in under
    assert re.match(r"- (Helped|Assisted|Contributed|Was part|Participated|Supported)", under)


def test_rewrites_a_resume_the_generator_did_not_make():
    text = "\n".join(
        [
            "ANA PEREZ",
            "ana@example.com",
            "",
            "PROFESSIONAL SUMMARY:",
            "Analyst with 4 years of professional experience in retail reporting. Skilled in SQL and Excel.",
            "",
            "WORK EXPERIENCE",
            "Analyst, Shopco — Jan 2019 – Present",
            "• Responsible for weekly sales reports",
            "• Managed a small reporting team of 3",
            "",
            "EDUCATION",
            "• B.A. in Economics, State College, 2018",
            "",
            "SKILLS",
            "SQL, Excel",
        ]
    )
    for style in ("overstated", "understated"):
        out = rewrite_style(text, style)
        assert extract_facts(out) == extract_facts(text)
        assert "• B.A. in Economics, State College, 2018" in out.split("\n")
        assert out.split("\n")[4] != text.split("\n")[4]
    assert "as part of a wider team" in rewrite_style(text, "understated")
    facts = extract_facts(text)
    assert facts["employers"] == ["Analyst, Shopco —"] or facts["dates"] == ["Jan 2019 – Present"]
    assert facts["skills"] == ["SQL", "Excel"]


def test_broken_rewrite_catalog_names_the_file(tmp_path):
    (tmp_path / "style_rewrites.yaml").write_text("sections: {}\n")
    with pytest.raises(CatalogError, match="style_rewrites.yaml"):
        rewrite_style("A\n\nSUMMARY\nB.", "overstated", catalog_dir=tmp_path)


def test_style_variants_table_is_the_declared_one_and_facts_check_flags_a_changed_fact(base):
    from resumebias_dagster.core.seniority.style import resumes_with_differing_facts, style_variants
    from resumebias_dagster.core.tables import StyleVariants, columns

    table = style_variants(base.head(3), seed=0)
    assert list(table.columns) == columns(StyleVariants) and len(table) == 3 * len(STYLES)
    StyleVariants.validate(table)
    assert resumes_with_differing_facts(table) == []
    changed = table.copy()
    row = changed.index[(changed["original_idx"] == 1) & (changed["style"] == "overstated")][0]
    year = re.search(r"\b(19|20)\d\d\b", changed.at[row, "text"]).group(0)
    changed.at[row, "text"] = changed.at[row, "text"].replace(year, str(int(year) - 1), 1)
    assert resumes_with_differing_facts(changed) == [1]
    assert list(style_variants(base.head(0)).columns) == columns(StyleVariants)
