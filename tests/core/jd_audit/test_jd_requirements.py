"""The requirements a job description states in its front matter (the validity pairs' direction),
and the validity size of fit_design.yaml: read, checked, each problem one line naming the file
and the key."""

import pytest
import yaml

from resumebias_dagster.catalog import PACKAGED_DIR, CatalogError
from resumebias_dagster.core.jd_audit.design import DESIGN_FILE, load_fit_design
from resumebias_dagster.core.jd_audit.job_descriptions import (
    JobRequirements,
    load_job_descriptions,
    load_job_requirements,
)

BODY = "## Requirements\n- 5+ years of Go.\n" + "Some more words about the role. " * 3


def _jd(folder, front: str, name: str = "role.md"):
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(f"---\nid: role\ntitle: A Role\n{front}---\n{BODY}\n", encoding="utf-8")
    return folder / name


def test_every_packaged_job_description_states_its_requirements():
    found = load_job_requirements()
    assert len(found) == 17
    for jd, req in found.items():
        assert req.required_skills, jd
        assert req.min_years is not None, jd
    staff = found["staff-software-engineer"]
    assert staff.min_years == 8 and staff.degree is None
    assert ("Go", "Java", "Kotlin", "Python") in staff.required_skills  # "one or more of Go, Java, Kotlin or Python"
    assert found["principal-performance-architect"].degree == "master"
    assert found["junior-java-developer"].min_years == 0
    assert ("Spring",) in found["junior-java-developer"].preferred_skills


def test_a_job_description_without_requirements_still_loads(tmp_path):
    path = _jd(tmp_path / "jds", "")
    assert load_job_descriptions(path.parent)["jd"].tolist() == ["role"]
    assert load_job_requirements(path.parent) == {"role": JobRequirements()}


def test_requirements_are_read(tmp_path):
    path = _jd(
        tmp_path / "jds",
        "required_skills: [Go, [Java, Kotlin]]\npreferred_skills: [Terraform]\nmin_years: 5\ndegree: bachelor\n",
    )
    assert load_job_requirements(path.parent)["role"] == JobRequirements(
        (("Go",), ("Java", "Kotlin")), (("Terraform",),), 5, "bachelor"
    )


def test_certifications_are_read_as_alternatives(tmp_path):
    path = _jd(tmp_path / "jds", "certifications: [[CKA,  CKAD], Certified Public Accountant (CPA)]\n")
    assert load_job_requirements(path.parent)["role"] == JobRequirements(
        certifications=(("CKA", "CKAD"), ("Certified Public Accountant (CPA)",))
    )


@pytest.mark.parametrize(
    ("front", "message"),
    [
        ("min_years: eight\n", "min_years must be a whole number of years from 0 to 50 or null, got 'eight'"),
        ("min_years: true\n", "min_years must be a whole number of years from 0 to 50 or null, got True"),
        ("degree: doctorate\n", "degree must be one of none, bachelor, master, phd or null, got 'doctorate'"),
        ("required_skills: Go\n", "required_skills must be a list of skills, got 'Go'"),
        (
            "preferred_skills: [Go, 3]\n",
            "preferred_skills: entry 2 (3) must be a skill (a one-line string without commas) "
            "or a list of alternative skills",
        ),
        ("required_skills: [[]]\n", "required_skills: entry 1 is an empty list of alternatives"),
        (
            "required_skills: ['Go, Java']\n",
            "required_skills: entry 1 ('Go, Java') must be a skill (a one-line string without commas) "
            "or a list of alternative skills",
        ),
        ("certifications: CKA\n", "certifications must be a list of certifications, got 'CKA'"),
        (
            "certifications: [CKA, {name: CKAD}]\n",
            "certifications: entry 2 ({'name': 'CKAD'}) must be a certification (a one-line string without "
            "commas) or a list of alternative certifications",
        ),
        ("certifications: [CKA, []]\n", "certifications: entry 2 is an empty list of alternatives"),
        (
            "certifications: [[CKA, 'PMP, CSM']]\n",
            "certifications: entry 1 ('PMP, CSM') must be a certification (a one-line string without commas) "
            "or a list of alternative certifications",
        ),
        (
            "certifications: ['  ']\n",
            "certifications: entry 1 ('  ') must be a certification (a one-line string without commas) "
            "or a list of alternative certifications",
        ),
    ],
)
def test_a_malformed_requirement_is_one_line_naming_the_file_and_the_key(tmp_path, front, message):
    path = _jd(tmp_path / "jds", front)
    for load in (load_job_descriptions, load_job_requirements):
        with pytest.raises(CatalogError) as caught:
            load(path.parent)
        assert str(caught.value) == f"{path}: {message}"


def test_the_design_sizes_the_validity_pairs():
    validity = load_fit_design().validity
    assert validity.groups == ("white_male", "white_female", "black_male", "black_female")
    assert validity.per_level == 2
    # study 003's preset has no `validity`: its six names are the groups, one résumé a level.
    preset = load_fit_design("preset:study003").validity
    assert len(preset.groups) == 6 and preset.per_level == 1


def _design(tmp_path, validity) -> str:
    data = yaml.safe_load((PACKAGED_DIR / DESIGN_FILE).read_text())
    data["validity"] = validity
    (tmp_path / DESIGN_FILE).write_text(yaml.safe_dump(data))
    return str(tmp_path / DESIGN_FILE)


@pytest.mark.parametrize(
    ("validity", "message"),
    [
        ({"groups": ["martian"], "per_level": 1}, "validity.groups: 'martian' is not a level of the name axis"),
        ({"groups": ["white_male"], "per_level": 4}, "validity.per_level must be a whole number from 1 to "),
        ({"groups": [], "per_level": 1}, "validity.groups must be a non-empty list of name groups"),
        ({"groups": ["white_male"]}, "`validity` must be a mapping {groups, per_level}"),
    ],
)
def test_a_bad_validity_setting_names_the_file_and_the_setting(tmp_path, validity, message):
    where = _design(tmp_path, validity)
    with pytest.raises(CatalogError) as caught:
        load_fit_design(tmp_path)
    assert str(caught.value).startswith(f"{where}: {message}")
    assert "\n" not in str(caught.value)
