"""The fit audit's design as data (catalog/fit_design.yaml, core/jd_audit/design.py), the jd
partitions that follow it, and the study003 preset that reproduces study 003's design."""

import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from resumebias_dagster.catalog import CATALOG_DIR_ENV, PACKAGED_DIR, CatalogError
from resumebias_dagster.core.jd_audit.design import load_fit_design
from resumebias_dagster.core.jd_audit.job_descriptions import load_job_descriptions
from resumebias_dagster.core.jd_audit.probes import load_probe_axes, probe_variants, select_probe_resumes
from resumebias_dagster.core.seniority.generation import generate_resumes

STUDY003_NAMES = {
    "james_smith": ("James Smith", {"sex": "male", "race_ethnicity": "white"}),
    "sarah_smith": ("Sarah Smith", {"sex": "female", "race_ethnicity": "white"}),
    "mohammed_al_said": ("Mohammed Al-Said", {"sex": "male", "race_ethnicity": "middle_eastern_north_african"}),
    "aisha_okonkwo": ("Aisha Okonkwo", {"sex": "female", "race_ethnicity": "black"}),
    "wei_chen": ("Wei Chen", {"sex": None, "race_ethnicity": "asian"}),
    "maria_rodriguez": ("Maria Rodriguez", {"sex": "female", "race_ethnicity": "hispanic_latino"}),
}


@pytest.fixture(autouse=True)
def packaged_catalog(monkeypatch):
    monkeypatch.delenv(CATALOG_DIR_ENV, raising=False)


def definitions_view(catalog_dir: str | None) -> dict:
    """What the definitions load with ``RESUMEBIAS_CATALOG_DIR`` (partitions are read at import)."""
    code = (
        "import json\n"
        "from resumebias_dagster.partitions import jd_partitions, model_jd_partitions\n"
        "from resumebias_dagster.core.jd_audit.probes import DEFAULT_ARM\n"
        "from resumebias_dagster.defs.jd_audit.fit import ProbeVariantsConfig\n"
        "c = ProbeVariantsConfig()\n"
        "print(json.dumps({'jds': jd_partitions.get_partition_keys(),\n"
        "  'multi_jds': [d.partitions_def.get_partition_keys() for d in model_jd_partitions.partitions_defs"
        " if d.name == 'jd'][0],\n"
        "  'arm': {**DEFAULT_ARM, 'levels': list(DEFAULT_ARM['levels'])},\n"
        "  'config': [c.occupation, c.levels, c.per_level]}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != CATALOG_DIR_ENV}
    if catalog_dir:
        env[CATALOG_DIR_ENV] = catalog_dir
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_packaged_design_probes_several_resumes_against_one_job_description():
    design = load_fit_design()
    assert (design.occupation, design.levels, design.per_level) == ("software_engineer", ("junior", "mid", "senior"), 3)
    assert design.job_descriptions == ("staff-software-engineer",) and not design.all_job_descriptions
    # The default generator (base_resumes: 40 a level, seed 0) has 3 junior, 3 mid and 4 senior
    # software engineers: 3 a level is balanced, and within the 12 names of each pool.
    arm = select_probe_resumes(generate_resumes(40, seed=0), **design.arm())
    assert arm["seniority"].value_counts().to_dict() == {"junior": 3, "mid": 3, "senior": 3}
    n_variants = sum(len(a.levels) for a in load_probe_axes().axes)
    assert n_variants + 1 == 39
    # No longer than study 003's graph: 1 résumé x 37 prompts x 17 job descriptions.
    assert len(arm) * (n_variants + 1) * len(design.job_descriptions) <= 1 * 37 * 17


def test_the_default_partitions_and_arm_follow_fit_design_yaml():
    design = load_fit_design()
    view = definitions_view(None)
    assert view["jds"] == view["multi_jds"] == list(design.job_descriptions)
    assert view["arm"] == {
        "occupation": design.occupation,
        "levels": list(design.levels),
        "per_level": design.per_level,
    }
    assert view["config"] == [design.occupation, list(design.levels), design.per_level]


def test_a_user_design_sets_the_partitions_and_all_means_every_job_description(tmp_path):
    (tmp_path / "fit_design.yaml").write_text(
        "resumes: {occupation: data_analyst, levels: [senior], per_level: 2}\n"
        "job_descriptions: [junior-java-developer, cto-agentic-ai-fintech]\n"
    )
    design = load_fit_design(tmp_path)
    assert design.arm() == {"occupation": "data_analyst", "levels": ("senior",), "per_level": 2}
    assert design.job_descriptions == ("cto-agentic-ai-fintech", "junior-java-developer")  # in id order
    assert definitions_view(str(tmp_path))["jds"] == ["cto-agentic-ai-fintech", "junior-java-developer"]
    (tmp_path / "fit_design.yaml").write_text(
        "resumes: {occupation: data_analyst, levels: [senior], per_level: 2}\njob_descriptions: all\n"
    )
    everything = load_job_descriptions()["jd"].tolist()
    assert load_fit_design(tmp_path).job_descriptions == tuple(everything) and len(everything) == 17


def test_a_catalog_with_its_own_job_descriptions_is_told_to_bring_its_design(tmp_path):
    (tmp_path / "job_descriptions").mkdir()
    text = (PACKAGED_DIR / "job_descriptions" / "junior-java-developer.md").read_text(encoding="utf-8")
    (tmp_path / "job_descriptions" / "junior-java-developer.md").write_text(text, encoding="utf-8")
    packaged = re.escape(str(PACKAGED_DIR / "fit_design.yaml"))
    with pytest.raises(
        CatalogError,
        match=packaged + r": job_descriptions: unknown job description "
        r"'staff-software-engineer' \(the ids of job_descriptions/: "
        r"junior-java-developer\); .*job_descriptions replaces the packaged job "
        r"descriptions: put a fit_design.yaml naming its ids \(or `all`\)",
    ):
        load_fit_design(tmp_path)
    (tmp_path / "fit_design.yaml").write_text(GOOD_RESUMES + "job_descriptions: all\n")
    assert load_fit_design(tmp_path).job_descriptions == ("junior-java-developer",)


def test_the_study003_preset_reproduces_study_003s_design():
    axis = next(a for a in load_probe_axes("preset:study003").axes if a.id == "firstName")
    assert axis.levels == {level: name for level, (name, _) in STUDY003_NAMES.items()}
    assert axis.params["groups"] == {level: group for level, (_, group) in STUDY003_NAMES.items()}
    design = load_fit_design("preset:study003")
    assert design.arm() == {"occupation": "software_engineer", "levels": ("mid",), "per_level": 1}
    assert design.all_job_descriptions and len(design.job_descriptions) == 17
    arm = select_probe_resumes(generate_resumes(40, seed=0), **design.arm())
    assert len(arm) == 1
    variants = probe_variants(arm, catalog_dir="preset:study003")
    assert len(variants) == 37  # study 003: the baseline and 36 variants
    names = variants.loc[variants["axis"] == "firstName", "name"].tolist()
    assert names == [name for name, _ in STUDY003_NAMES.values()]
    # The preset holds only these files (study 003's fit prompt, in its order: the packaged one puts
    # the shared part first for prompt caching): every other catalog file falls back to the packaged one.
    preset = PACKAGED_DIR / "presets" / "study003"
    assert sorted(p.name for p in preset.iterdir()) == ["fit_design.yaml", "probe_axes.yaml", "prompts"]
    assert sorted(p.name for p in (preset / "prompts").iterdir()) == ["fit_scoring.txt"]


def test_the_study003_preset_through_the_environment_gives_17_jd_partitions_and_one_resume():
    view = definitions_view("preset:study003")
    assert view["jds"] == view["multi_jds"] == load_job_descriptions()["jd"].tolist()
    assert len(view["jds"]) == 17
    assert view["arm"] == {"occupation": "software_engineer", "levels": ["mid"], "per_level": 1}
    assert view["config"] == ["software_engineer", ["mid"], 1]


def write_design(tmp_path, text):
    (tmp_path / "fit_design.yaml").write_text(text)
    return tmp_path


GOOD_RESUMES = "resumes: {occupation: software_engineer, levels: [mid], per_level: 1}\n"


@pytest.mark.parametrize(
    "text, message",
    [
        (
            GOOD_RESUMES + "job_descriptions: [staff-software-engineer, chief-vibes-officer]\n",
            r"job_descriptions: unknown job description 'chief-vibes-officer' \(the ids of job_descriptions/: "
            r"cpp-developer-capital-markets, ",
        ),
        (
            GOOD_RESUMES + "job_descriptions: [staff-software-engineer, staff-software-engineer]\n",
            r"job_descriptions lists a job description twice",
        ),
        (
            GOOD_RESUMES + "job_descriptions: some\n",
            r"job_descriptions must be a non-empty list of job description ids "
            r"or the word 'all', got 'some'",
        ),
        (GOOD_RESUMES + "job_descriptions: []\n", r"job_descriptions must be a non-empty list"),
        (
            "resumes: {occupation: software_engineer, levels: [mid, principal], per_level: 1}\njob_descriptions: all\n",
            r"resumes.levels: unknown level 'principal' \(levels: junior, mid, senior\)",
        ),
        (
            "resumes: {occupation: software_engineer, levels: [], per_level: 1}\njob_descriptions: all\n",
            r"resumes.levels must be a non-empty list",
        ),
        (
            "resumes: {occupation: software_engineer, levels: [mid], per_level: 0}\njob_descriptions: all\n",
            r"resumes.per_level must be a whole number of at least 1, got 0",
        ),
        (
            "resumes: {occupation: software_engineer, levels: [mid], per_level: two}\njob_descriptions: all\n",
            r"resumes.per_level must be a whole number of at least 1, got 'two'",
        ),
        (
            "resumes: {occupation: 42, levels: [mid], per_level: 1}\njob_descriptions: all\n",
            r"resumes.occupation must be an occupation id \(a string\), got 42",
        ),
        (
            "resumes: {occupation: astronaut, levels: [mid], per_level: 1}\njob_descriptions: all\n",
            r"resumes.occupation 'astronaut' is not an occupation of occupations.yaml \(known: accountant, ",
        ),
        (
            "resumes: {occupation: software_engineer, levels: [mid]}\njob_descriptions: all\n",
            r"`resumes` needs exactly occupation, levels and per_level \(missing \['per_level'\], unknown \[\]\)",
        ),
        (GOOD_RESUMES, r"missing setting `job_descriptions`"),
        (GOOD_RESUMES + "job_descriptions: all\nmodels: [gpt]\n", r"unknown setting 'models'"),
        ("- resumes\n", r"must be a mapping with `resumes` and `job_descriptions`"),
    ],
)
def test_a_bad_design_is_refused_naming_the_file_and_the_setting(tmp_path, text, message):
    folder = write_design(tmp_path, text)
    with pytest.raises(CatalogError, match=f"^{re.escape(str(folder / 'fit_design.yaml'))}: {message}"):
        load_fit_design(folder)


def test_the_packaged_design_file_says_why():
    text = (PACKAGED_DIR / "fit_design.yaml").read_text(encoding="utf-8")
    assert "the résumé is the unit of the statistics" in text and "629" in text
    assert yaml.safe_load(text)["job_descriptions"] == list(load_fit_design().job_descriptions)
