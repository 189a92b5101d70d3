import pytest

from resumebias_dagster.catalog import CatalogError
from resumebias_dagster.core.prompts import RESUME_CHAR_CAP, SENIORITY_PROMPT, load_prompt, seniority_prompt

SEED_TEMPLATE = (
    "Classify this resume's seniority level. Respond with ONLY one word: junior, mid, or senior.\n"
    "\n"
    "Resume:\n"
    "{resume_text}\n"
    "\n"
    "Seniority level:"
)


def test_packaged_seniority_prompt_is_the_seed_template():
    assert load_prompt(SENIORITY_PROMPT) == SEED_TEMPLATE
    assert load_prompt(f"{SENIORITY_PROMPT}.txt") == SEED_TEMPLATE


def test_packaged_file_ends_at_the_answer_cue():
    from resumebias_dagster.catalog import catalog_path

    raw = catalog_path(f"prompts/{SENIORITY_PROMPT}.txt").read_bytes()
    assert raw.endswith(b"Seniority level:")


def test_seniority_prompt_caps_resume_text_like_the_seed():
    text = "a" * RESUME_CHAR_CAP + "CUT"
    prompt = seniority_prompt(text, SEED_TEMPLATE)
    assert prompt == SEED_TEMPLATE.format(resume_text="a" * 8000)
    assert prompt.endswith("\n\nSeniority level:")


def test_braces_in_resume_text_are_kept_verbatim():
    prompt = seniority_prompt("Skills: {C++}, {resume_text}", SEED_TEMPLATE)
    assert "Skills: {C++}, {resume_text}\n" in prompt


def test_user_override_drops_an_editors_final_newline(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "seniority_classification.txt").write_text("Rate: {resume_text}\nLevel:\n")
    assert load_prompt(SENIORITY_PROMPT, catalog_dir=tmp_path) == "Rate: {resume_text}\nLevel:"


def test_override_without_resume_field_is_refused_naming_the_file(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "seniority_classification.txt").write_text("Rate {resume} please:")
    with pytest.raises(CatalogError, match=r"seniority_classification\.txt: the template must use exactly"):
        load_prompt(SENIORITY_PROMPT, catalog_dir=tmp_path)


def test_override_with_a_stray_brace_is_refused(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "seniority_classification.txt").write_text("{resume_text} {")
    with pytest.raises(CatalogError, match="not a valid template"):
        load_prompt(SENIORITY_PROMPT, catalog_dir=tmp_path)


def test_other_prompts_may_use_other_fields(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "fit.txt").write_text("{job_description}\n{resume_text}\nScore:")
    assert load_prompt("fit", catalog_dir=tmp_path) == "{job_description}\n{resume_text}\nScore:"


def test_unknown_prompt_is_a_catalog_error():
    with pytest.raises(CatalogError, match="no_such_prompt.txt"):
        load_prompt("no_such_prompt")
