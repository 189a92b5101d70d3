"""Job descriptions and the fit-scoring prompt (core/jd_audit/job_descriptions.py)."""

import re

import pytest

from resumebias_dagster.catalog import CatalogError
from resumebias_dagster.core.jd_audit.job_descriptions import (
    JD_COLUMNS,
    fit_prompt,
    load_fit_template,
    load_job_descriptions,
)

ROLES = (
    "C++ Developer — Capital Markets",
    "Chief Technology Officer",
    "Head of Development",
    "Junior / Mid-Level Fullstack",
    "Junior Java",
    "Principal Engineer",
    "Principal Performance Architect",
    "Growth / Experimentation",
    "Security Features",
    "Senior Fullstack",
    "Enterprise IDE",
    "Senior Manager",
    "Routing Tiling",
    "Forward Deployed",
    "Staff Software Engineer",
    "Engineering Productivity",
    "Cloud Compute",
)

GOOD = "---\nid: {id}\ntitle: {title}\n---\n## About the role\nBuild things.\n"


def write(folder, name, text, encoding="utf-8"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(text.encode(encoding) if isinstance(text, str) else text)


def test_packaged_job_descriptions():
    jds = load_job_descriptions()
    assert list(jds.columns) == JD_COLUMNS
    assert len(jds) == 17
    assert list(jds["jd"]) == sorted(jds["jd"]) and jds["jd"].is_unique
    assert jds["jd"].str.fullmatch(r"[a-z0-9][a-z0-9_-]*").all()
    for role in ROLES:
        assert jds["title"].str.contains(role, regex=False).sum() == 1, role
    for row in jds.itertuples():
        assert row.text.startswith(f"# {row.title}\n\n")
        assert "Responsibilities" in row.text and "Requirements" in row.text
        words = len(row.text.split())
        assert 140 <= words <= 280, (row.jd, words)
        assert row.seniority


def test_user_folder_and_catalog_override(tmp_path):
    folder = tmp_path / "mine"
    write(folder, "a.md", GOOD.format(id="zeta", title="Zeta  Role"))
    write(folder, "b.md", GOOD.format(id="alpha_1", title="Alpha"))
    write(folder, "notes.txt", "ignored")
    jds = load_job_descriptions(folder)
    assert list(jds["jd"]) == ["alpha_1", "zeta"] and jds["title"].iloc[1] == "Zeta Role"
    catalog = tmp_path / "catalog"
    write(catalog / "job_descriptions", "only.md", GOOD.format(id="only", title="Only"))
    assert list(load_job_descriptions(catalog_dir=catalog)["jd"]) == ["only"]


@pytest.mark.parametrize(
    "files, message",
    [
        ({"x.md": "## About\nno front matter\n"}, r"x\.md: no YAML front matter"),
        ({"x.md": "---\ntitle: T\n---\nbody\n"}, r"x\.md: the front matter lacks id"),
        ({"x.md": "---\nid: a\n---\nbody\n"}, r"x\.md: the front matter lacks title"),
        ({"x.md": "---\nid: a\ntitle: T\n---\n   \n"}, r"x\.md: the job description body is empty"),
        ({"x.md": "---\nid: Senior Dev!\ntitle: T\n---\nbody\n"}, r"x\.md: id 'Senior Dev!' may use only"),
        ({"x.md": "---\nid: [a\ntitle: T\n---\nbody\n"}, r"x\.md: the front matter is not valid YAML"),
        ({"x.md": "---\n- a\n---\nbody\n"}, r"x\.md: the front matter must be a mapping"),
        (
            {"a.md": GOOD.format(id="same", title="A"), "b.md": GOOD.format(id="same", title="B")},
            r"b\.md: id 'same' is already used by .*a\.md",
        ),
        ({"x.md": b"---\nid: a\ntitle: T\n---\ncaf\xe9\n"}, r"x\.md: not UTF-8"),
    ],
)
def test_loader_errors_name_the_file(tmp_path, files, message):
    folder = tmp_path / "jds"
    for name, text in files.items():
        write(folder, name, text)
    with pytest.raises(CatalogError, match=message):
        load_job_descriptions(folder)


def test_empty_or_missing_folder(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(CatalogError, match="holds no .md files"):
        load_job_descriptions(tmp_path / "empty")
    with pytest.raises(CatalogError, match="does not exist"):
        load_job_descriptions(tmp_path / "nowhere")


def test_fit_template_and_prompt(tmp_path):
    template = load_fit_template()
    assert template.rstrip().endswith("JSON:")
    prompt = fit_prompt(template, "# Staff Engineer\n\nBuild.", "Ann Lee\nEXPERIENCE\n" + "x" * 9000)
    assert "# Staff Engineer" in prompt and "Ann Lee" in prompt
    for key in ('"score"', '"recommend"', '"justification"', '"strengths"', '"concerns"'):
        assert key in prompt
    assert "x" * 8001 not in prompt  # résumé capped as in the seniority study
    # An embedded model continues the prompt with the start of the JSON answer.
    assert re.search(r"JSON:$", prompt)
    bad = tmp_path / "catalog"
    write(bad / "prompts", "fit_scoring.txt", "Rate {resume_text}\n")
    with pytest.raises(CatalogError, match=r"fit_scoring\.txt: the template must use exactly"):
        load_fit_template(bad)
