"""Certification twins (issue 42, item 1): a job description of a user catalog that asks for a
person's certifications gives better twins (the certification added where the résumé keeps its
certifications) and worse twins (the one certification line meeting it taken out), on real PDF and
DOCX files and on the generator's résumés; each passes the one-signal and timeline checks, the
pairs check re-derives it, and a twin it should refuse it refuses. No packaged job description
asks for one, and the default design's pairs keep their exact texts."""

import difflib
import hashlib

import pandas as pd
import pytest

from resumebias_dagster.core.jd_audit.design import load_fit_design
from resumebias_dagster.core.jd_audit.job_descriptions import JobRequirements, load_job_requirements
from resumebias_dagster.core.jd_audit.probes import select_probe_resumes
from resumebias_dagster.core.jd_audit.validity import check_validity_pairs, twin_problems, validity_pairs
from resumebias_dagster.core.jd_audit.validity.edits import NotApplicable, add_certification, remove_certification
from resumebias_dagster.core.resumes.extract import extract_bytes
from resumebias_dagster.core.resumes.reader import read_resume
from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.testing.resume_corpus import corpus
from resumebias_dagster.testing.resume_files import docx_bytes, pdf_bytes

JD = "cloud-developer"
FRONT = (
    f"id: {JD}\ntitle: Cloud Developer\nrequired_skills: [Kubernetes]\nmin_years: 3\n"
    "certifications: [[AWS Certified Developer, AWS Certified Solutions Architect], CKA]\n"
)
BODY = (
    "## Requirements\n- 3+ years building services on Kubernetes.\n"
    "- An AWS Certified Developer or AWS Certified Solutions Architect certification.\n"
    "- CKA (Certified Kubernetes Administrator) is a plus.\n"
)
GROUP = "white_female"


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    folder = tmp_path_factory.mktemp("catalog")
    (folder / "job_descriptions").mkdir()
    (folder / "job_descriptions" / f"{JD}.md").write_text(f"---\n{FRONT}---\n{BODY}", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def requirements(catalog):
    return load_job_requirements(catalog_dir=catalog)


def _with_certifications(text: str) -> str:
    return text.rstrip("\n") + "\n\nCertifications\n• AWS Certified Developer\n• Certified ScrumMaster\n"


@pytest.fixture(scope="module")
def files():
    """Résumé texts as extracted from real files: the corpus' PDF and DOCX layouts (no
    certifications), and one person's résumé with a Certifications section written as a DOCX and as a PDF."""
    found = corpus(1, layouts=["docx_dates_own_line", "docx_tables", "pdf_title_at", "pdf_two_columns"])
    texts = {r.layout: extract_bytes(r.data, r.file[r.file.rindex(".") :]) for r in found}
    plain = corpus(1, layouts=["comma_title_txt"])[0].data.decode()
    texts["docx_certifications"] = extract_bytes(docx_bytes(_with_certifications(plain)), ".docx")
    texts["pdf_certifications"] = extract_bytes(pdf_bytes(_with_certifications(plain)), ".pdf")
    return pd.DataFrame({"resume_id": list(texts), "text": list(texts.values())})


@pytest.fixture(scope="module")
def built(files, requirements):
    return validity_pairs(files, requirements, [GROUP])


def _diff(pairs: pd.DataFrame, resume_id: str, role: str) -> list[str]:
    rows = pairs[(pairs["resume_id"] == resume_id) & (pairs["edit"].isin(["baseline", "certification"]))]
    base = rows.loc[rows["role"] == "baseline", "text"].iloc[0].split("\n")
    twin = rows.loc[rows["role"] == role, "text"].iloc[0].split("\n")
    return [d for d in difflib.ndiff(base, twin) if d[:1] in "+-"]


def test_the_user_catalog_states_certifications(requirements):
    assert requirements[JD].certifications == (
        ("AWS Certified Developer", "AWS Certified Solutions Architect"),
        ("CKA",),
    )


def test_real_files_get_better_and_worse_certification_twins_that_pass_the_check(built, requirements):
    pairs, skipped = built
    assert check_validity_pairs(pairs, requirements).empty
    assert not skipped["reason"].str.startswith("dropped").any()
    twins = pairs[pairs["edit"] == "certification"].set_index(["resume_id", "role"])["detail"]
    # Without a certifications section: the generator's line, after the Education section.
    for layout in ("docx_dates_own_line", "docx_tables", "pdf_title_at", "pdf_two_columns"):
        assert twins[(layout, "better")] == (
            "adds the certification AWS Certified Developer (the job description asks for one of "
            "AWS Certified Developer, AWS Certified Solutions Architect)"
        )
        assert _diff(pairs, layout, "better") == ["+ Certification: AWS Certified Developer"]
        assert (layout, "worse") not in twins.index
        reason = skipped.loc[(skipped["resume_id"] == layout) & (skipped["edit"] == "certification"), "reason"]
        assert reason.tolist() == ["the résumé names no certification the job description asks"]
    # With one: the missing certification as its last entry, with its bullet; the one it has taken out.
    for kind in ("docx_certifications", "pdf_certifications"):
        assert twins[(kind, "better")] == "adds the certification CKA (the job description asks for it)"
        assert _diff(pairs, kind, "better") == ["+ • CKA"]
        assert twins[(kind, "worse")].startswith("removes the certification AWS Certified Developer (")
        assert _diff(pairs, kind, "worse") == ["- • AWS Certified Developer"]


def test_the_generators_certification_line_is_added_to_and_taken_out(catalog):
    gen = generate_resumes(n_per_level=10, seed=0)
    base = gen[gen["resume_id"].isin(["r0003", "r0008"])][["resume_id", "text"]]
    assert "Certification: Certified Kubernetes Application Developer" in base["text"].iloc[0]
    req = {"k8s": JobRequirements(certifications=(("Certified Kubernetes Application Developer", "CKAD"),))}
    pairs, skipped = validity_pairs(base, req, [GROUP])
    assert check_validity_pairs(pairs, req).empty
    by = pairs[pairs["edit"] == "certification"].set_index(["resume_id", "role"])["detail"]
    assert by[("r0003", "worse")] == (
        "removes the certification Certified Kubernetes Application Developer (the job description asks for one "
        "of Certified Kubernetes Application Developer, CKAD)"
    )
    assert _diff(pairs, "r0003", "worse") == ["- Certification: Certified Kubernetes Application Developer"]
    # r0008 holds another certification: the new one goes after it, with the same label.
    assert _diff(pairs, "r0008", "better") == ["+ Certification: Certified Kubernetes Application Developer"]
    lines = pairs.loc[(pairs["resume_id"] == "r0008") & (pairs["role"] == "better"), "text"].iloc[0].split("\n")
    at = lines.index("Certification: AWS Certified Developer")
    assert lines[at + 1] == "Certification: Certified Kubernetes Application Developer"
    assert (skipped["edit"] == "certification").sum() == 2  # r0003 has it, r0008 has nothing to take out


def test_the_check_refuses_a_certification_twin_that_is_not_its_edit(built, requirements):
    pairs, _ = built
    tampered = pairs.copy()
    worse = tampered.index[
        (tampered["resume_id"] == "docx_certifications") & (tampered["variant"] == f"{GROUP}:worse:certification")
    ][0]
    # The other certification taken out as well: a second signal.
    tampered.at[worse, "text"] = tampered.at[worse, "text"].replace("• Certified ScrumMaster\n", "")
    better = tampered.index[
        (tampered["resume_id"] == "pdf_title_at") & (tampered["variant"] == f"{GROUP}:better:certification")
    ][0]
    # The certification written in, but a different one than the job description asks.
    tampered.at[better, "text"] = tampered.at[better, "text"].replace("AWS Certified Developer", "Certified Scrum")
    problems = check_validity_pairs(tampered, requirements)
    assert set(zip(problems["resume_id"], problems["variant"])) == {
        ("docx_certifications", f"{GROUP}:worse:certification"),
        ("pdf_title_at", f"{GROUP}:better:certification"),
    }
    said = problems.groupby("resume_id")["problem"].agg(" | ".join)
    assert "tokens changed outside the signal" in said["docx_certifications"]
    assert "tokens changed outside the signal" in said["pdf_title_at"]
    # A twin whose job description no longer asks for certifications no longer applies.
    bare = {JD: JobRequirements(required_skills=requirements[JD].required_skills, min_years=3)}
    gone = check_validity_pairs(pairs, bare)
    assert set(gone["variant"].str.split(":").str[2]) == {"certification"}
    assert gone["problem"].str.endswith("the job description states no certifications").all()


def test_the_builder_drops_a_certification_twin_that_changes_more(built, requirements):
    pairs, _ = built
    baseline = pairs.loc[(pairs["resume_id"] == "pdf_certifications") & (pairs["role"] == "baseline"), "text"].iloc[0]
    layout = read_resume(baseline)
    twin = remove_certification(layout, requirements[JD])
    assert twin_problems(baseline, layout, twin, twin.signal.text, "certification") == []
    bad = twin.signal.text.replace("Certified ScrumMaster", "Certified ScrumMaster, PMP")
    assert any("outside the signal" in p for p in twin_problems(baseline, layout, twin, bad, "certification"))
    # The added line written somewhere else: the tokens are the edit's, so only the pairs check,
    # which makes the twin again, finds it.
    added = add_certification(layout, requirements[JD])
    elsewhere = "\n".join(["• CKA", *baseline.split("\n")])
    assert twin_problems(baseline, layout, added, added.signal.text, "certification") == []
    tampered = pairs.copy()
    row = tampered.index[
        (tampered["resume_id"] == "pdf_certifications") & (tampered["variant"] == f"{GROUP}:better:certification")
    ][0]
    tampered.at[row, "text"] = elsewhere
    problems = check_validity_pairs(tampered, requirements)
    assert problems["problem"].tolist() == ["the text is not the edit of the set's baseline"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            "Certifications\n• AWS Certified Developer\n",
            "taking the line out would leave the certifications section empty",
        ),
        (
            "Certifications\n• AWS Certified Developer, Certified ScrumMaster\n",
            "the certification line '• AWS Certified Developer, Certified ScrumMaster' holds other entries too",
        ),
        (
            "Certifications\n• AWS Certified Developer\n• Certified ScrumMaster\n\nProjects\nPassed the AWS Certified Developer exam\n",
            "the résumé names AWS Certified Developer or AWS Certified Solutions Architect on more than one line",
        ),
    ],
)
def test_a_certification_a_resume_cannot_lose_says_why(files, requirements, text, reason):
    plain = corpus(1, layouts=["comma_title_txt"])[0].data.decode()
    mine = pd.DataFrame({"resume_id": ["mine"], "text": [plain.rstrip("\n") + "\n\n" + text]})
    pairs, skipped = validity_pairs(mine, requirements, [GROUP])
    assert f"{GROUP}:worse:certification" not in set(pairs["variant"])
    (why,) = skipped.loc[(skipped["edit"] == "certification") & (skipped["role"] == "worse"), "reason"]
    assert why.startswith(reason)


def test_a_job_description_without_certifications_gives_no_certification_twin(files):
    layout = read_resume(files["text"].iloc[0])
    for edit in (add_certification, remove_certification):
        with pytest.raises(NotApplicable, match=r"^the job description states no certifications$"):
            edit(layout, JobRequirements(required_skills=(("Go",),)))
    # Without an Education or Certifications section there is nowhere to write one.
    no_place = "Jane Doe\njane@example.com\n\nSKILLS\nGo, Python\n"
    with pytest.raises(ValueError, match=r"^no place for a certification found in a Certifications section"):
        add_certification(read_resume(no_place), JobRequirements(certifications=(("CKA",),)))


def test_no_packaged_job_description_asks_for_a_persons_certification():
    # sde-security-embedded-networking asks for experience with FIPS and Common Criteria: a
    # product's certification, one of its preferred skills, not a person's.
    found = load_job_requirements()
    assert all(req.certifications == () for req in found.values())
    assert ("FIPS",) in found["sde-security-embedded-networking"].preferred_skills


# The default design's pairs (staff-software-engineer, fit_design.yaml's validity), taken before
# the certification twins came: a job description without certifications keeps every text.
DEFAULT_PAIRS = (120, "ccc247c841fa3642")


def test_the_default_designs_pairs_keep_their_texts():
    design = load_fit_design()
    chosen = select_probe_resumes(generate_resumes(), design.occupation, design.levels, design.validity.per_level)
    req = load_job_requirements()
    pairs, _ = validity_pairs(chosen, {jd: req[jd] for jd in design.job_descriptions}, design.validity.groups)
    assert (len(pairs), hashlib.sha256(pairs.to_csv(index=False).encode()).hexdigest()[:16]) == DEFAULT_PAIRS
