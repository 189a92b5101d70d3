"""The studies on your own résumés through Dagster (`resumes: user`): user_resumes read from real
files into a real DuckDB file, then probe_variants with the axes user_resume_probes says apply
(the skipped pairs and their reasons in the metadata, the blocking check passing) and
name_variants with the names found in the files; every bad input fails with what to do."""

import dagster as dg
import duckdb
import pandas as pd
import pytest
import yaml

from resumebias_dagster.core.jd_audit.probes import load_probe_axes
from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.defs.jd_audit import fit
from resumebias_dagster.defs.ranking.rankings import RankingsConfig
from resumebias_dagster.defs.seniority_study import variants
from resumebias_dagster.defs.user_resumes.files import user_resume_probes, user_resumes
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.testing.resume_files import FREE_FORM_RESUME, docx_bytes, pdf_bytes, write

AXES = [a.id for a in load_probe_axes().axes]
# Jane's résumé has no city and no employer place, and her middle initial keeps her surname in
# her e-mail address out of the name swap; Sam's has a name and a text, nothing else.
JANE_AXES = set(AXES) - {"firstName", "addressCountry", "companyLocations"}
SAM_AXES = {"firstName", "promptInjection", "anonymize"}
SCHOOL_AXIS = {"arm": "probe", "edit": "school", "levels": {"mit": "Massachusetts Institute of Technology"}}
# Parses, but only the prompt-injection, placebo and anonymisation axes apply; and the middle
# initial keeps "Doe" of the e-mail address out of the name swap's reach.
JANE = FREE_FORM_RESUME
# A name and a text, no sections: only the axes that need nothing else apply (SAM_AXES).
SAM = "Sam Roe\nsam.roe@example.com\n\nI build things and ship them, and I have done so for many years now.\n"


@dg.asset(name="base_resumes")
def base_resumes():
    """The offline generator's résumés, without the provider resource base_resumes asks for."""
    return generate_resumes(n_per_level=1)


INPUTS = [base_resumes, user_resumes, user_resume_probes]
PROBES = [*INPUTS, fit.probe_variants, fit.probe_variants_change_one_signal]
NAMES = [*INPUTS, variants.name_variants, variants.name_variants_differ_only_in_names]


@pytest.fixture(scope="module")
def texts():
    return generate_resumes(1, seed=11)["text"].tolist()  # junior, mid, senior


def folder_of(tmp_path, files: dict[str, bytes | str], labels: str = "") -> str:
    folder = tmp_path / "cvs"
    for name, data in files.items():
        write(folder / name, data)
    if labels:
        write(folder / "labels.csv", labels)
    return str(folder)


def read_resumes(resources, folder: str, *, probes: bool = True):
    """Materialise user_resumes (and user_resume_probes) from ``folder`` on their own, as a user would."""
    result = dg.materialize(
        [user_resumes, user_resume_probes] if probes else [user_resumes],
        resources=resources,
        run_config={"ops": {"user_resumes": {"config": {"folder": folder}}}},
    )
    assert result.success


def run(assets, resources, selection, config: dict):
    """Materialise ``selection`` (asset definitions, their checks included) of ``assets``, and the
    generated base_resumes: the studies read them whichever résumés they run on."""
    return dg.materialize(
        assets,
        selection=dg.AssetSelection.assets(base_resumes, *selection),
        resources=resources,
        run_config={"ops": config},
    )


def meta_of(result, node):
    return {k: v.value for k, v in result.asset_materializations_for_node(node)[0].metadata.items()}


def test_probe_variants_on_your_resumes_skip_the_axes_that_do_not_apply(tmp_path, resources, texts):
    folder = folder_of(
        tmp_path,
        {"a.pdf": pdf_bytes(texts[0]), "b.docx": docx_bytes(texts[2]), "jane.txt": JANE, "sam.md": SAM},
    )
    read_resumes(resources, folder)
    result = run(
        PROBES,
        resources,
        [fit.probe_variants],
        {"probe_variants": {"config": {"resumes": "user"}}},
    )
    assert result.success
    checks = {e.asset_check_key.name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {"change_one_signal": True}
    with duckdb.connect(str(tmp_path / "study.duckdb"), read_only=True) as con:
        rows = con.execute("select resume_id, source from audit.user_resumes").df()
        stored = con.execute("select resume_id, variant, axis from audit.probe_variants").df()
    id_of = dict(zip(rows["source"], rows["resume_id"]))
    axes = stored[stored["variant"] != "baseline"].groupby("resume_id")["axis"].agg(set).to_dict()
    # b.docx (the senior résumé) graduated in 2005 already: the level '2005' would not change it.
    assert axes == {
        id_of["a.pdf"]: set(AXES),
        id_of["b.docx"]: set(AXES) - {"graduationYear"},
        id_of["jane.txt"]: JANE_AXES,
        id_of["sam.md"]: SAM_AXES,
    }
    meta = meta_of(result, "probe_variants")
    assert meta["resume_source"] == "user"
    assert meta["resumes"] == rows["resume_id"].tolist()
    assert meta["skipped_pairs"] == (len(AXES) - len(SAM_AXES)) + (len(AXES) - len(JANE_AXES)) + 1
    per_axis = meta["skipped_per_axis"]
    assert list(per_axis) == AXES
    assert per_axis == {a: (a not in SAM_AXES) + (a not in JANE_AXES) + (a == "graduationYear") for a in AXES}
    assert "no school found in an Education section" in meta["skip_reasons"]
    assert "level '2005' leaves the résumé unchanged" in meta["skip_reasons"]
    assert meta["left_out_resumes"] == "(none)"
    assert "jane.txt" in meta["skipped"] and "addressCountry" in meta["skipped"]


def test_probe_variants_on_your_resumes_need_resumes(resources):
    # user_resumes never materialised: it reads as no résumé.
    with pytest.raises(
        dg.Failure,
        match=r"probe_variants: resumes 'user', but user_resumes has no résumé: "
        r"materialise user_resumes with a folder \(or csv\) of your résumés first",
    ):
        run(PROBES, resources, [fit.probe_variants], {"probe_variants": {"config": {"resumes": "user"}}})


def test_probe_variants_on_your_resumes_need_their_probes(tmp_path, resources, texts):
    read_resumes(resources, folder_of(tmp_path, {"a.txt": texts[0]}), probes=False)
    with pytest.raises(
        dg.Failure,
        match=r"the applicability table has no row for .* user_resume_probes does not "
        r"match user_resumes and probe_axes.yaml: materialise user_resume_probes again",
    ):
        run(PROBES, resources, [fit.probe_variants], {"probe_variants": {"config": {"resumes": "user"}}})


def test_probe_variants_fail_when_no_axis_applies_to_any_resume(tmp_path, resources):
    # A catalog whose only axis is the school: Sam's résumé names none.
    catalog = tmp_path / "catalog"
    write(catalog / "probe_axes.yaml", yaml.safe_dump({"axes": {"school": SCHOOL_AXIS}}))
    resources = {**resources, "catalog": CatalogResource(catalog_dir=str(catalog))}
    read_resumes(resources, folder_of(tmp_path, {"sam.md": SAM}))
    with pytest.raises(
        dg.Failure,
        match=r"probe_variants: no probe axis applies to any of your 1 résumés \(sam.md\): "
        r"user_resume_probes says why per axis",
    ):
        run(PROBES, resources, [fit.probe_variants], {"probe_variants": {"config": {"resumes": "user"}}})


def test_generated_resumes_stay_the_default(resources):
    # user_resumes and user_resume_probes never materialised: they read as empty and change nothing.
    generated = {"occupation": "data_analyst", "levels": ["senior"], "per_level": 1}
    result = run(PROBES, resources, [fit.probe_variants], {"probe_variants": {"config": generated}})
    assert result.success
    assert all(e.passed for e in result.get_asset_check_evaluations())
    meta = meta_of(result, "probe_variants")
    assert meta["resume_source"] == "generated"
    assert meta["resumes"] == ["r0002"] and "skipped_pairs" not in meta
    assert set(result.output_for_node("probe_variants")["resume_id"]) == {"r0002"}


def test_a_bad_resumes_value_is_a_config_error_naming_the_setting(resources):
    with pytest.raises(dg.DagsterInvalidConfigError, match=r"probe_variants:config:resumes"):
        run(PROBES, resources, [fit.probe_variants], {"probe_variants": {"config": {"resumes": "mine"}}})
    with pytest.raises(dg.DagsterInvalidConfigError, match=r"name_variants:config:resumes"):
        run(NAMES, resources, [variants.name_variants], {"name_variants": {"config": {"resumes": "mine"}}})


def test_rankings_refuse_your_resumes_clearly():
    context = dg.build_asset_context()
    with pytest.raises(
        dg.Failure,
        match=r"rankings: resumes 'user' is not supported: rankings takes the generated "
        r"base_resumes \(leave resumes at 'generated'\)",
    ):
        fit.choose_base_resumes(context, RankingsConfig(resumes="user"), generate_resumes(1), "rankings")


# --------------------------------------------------------------------------- name_variants


def test_name_variants_on_your_resumes_use_the_names_found_and_skip_a_refused_swap(tmp_path, resources, texts):
    folder = folder_of(
        tmp_path,
        {"a.pdf": pdf_bytes(texts[0]), "c.txt": texts[2], "jane.txt": JANE},
        labels="file,seniority\na.pdf,junior\nc.txt,senior\njane.txt,mid\n",
    )
    read_resumes(resources, folder, probes=False)
    result = run(
        NAMES,
        resources,
        [variants.name_variants],
        {"name_variants": {"config": {"resumes": "user", "seed": 3}}},
    )
    assert result.success
    assert all(e.passed for e in result.get_asset_check_evaluations())
    with duckdb.connect(str(tmp_path / "study.duckdb"), read_only=True) as con:
        rows = con.execute("select * from audit.user_resumes order by source").df()
        names = con.execute("select * from audit.name_variants").df()
    jane = rows.loc[rows["source"] == "jane.txt", "resume_id"].iloc[0]
    assert set(names["resume_id"]) == set(rows["resume_id"]) - {jane}
    assert names.groupby("resume_id").size().eq(4).all()
    for row in rows[rows["source"] != "jane.txt"].itertuples():
        mine = names[names["resume_id"] == row.resume_id]
        assert (mine["seniority"] == row.seniority).all()
        assert not mine["text"].str.contains(row.last_name).any()  # the name found in the file is replaced
    meta = meta_of(result, "name_variants")
    assert meta["resume_source"] == "user" and meta["skipped_resumes"] == 1
    assert meta["skipped"].startswith(f"- jane.txt ({jane}): caucasian_male (")
    assert meta["skipped"].endswith("'doe' of the name 'Jane Q. Doe' is still in the text after replacement")


def test_name_variants_on_your_resumes_need_labels(tmp_path, resources, texts):
    folder = folder_of(
        tmp_path, {"a.txt": texts[0], "b.txt": texts[1], "c.txt": texts[2]}, labels="file,seniority\nb.txt,mid\n"
    )
    read_resumes(resources, folder, probes=False)
    with pytest.raises(
        dg.Failure,
        match=r"name_variants: the seniority study needs each résumé's true seniority, "
        r"and 2 of your résumés have none: a.txt, c.txt. Give the labels in the folder's labels.csv "
        r"\(columns file, seniority\) or in the CSV's label column",
    ):
        run(NAMES, resources, [variants.name_variants], {"name_variants": {"config": {"resumes": "user"}}})


def test_name_variants_on_your_resumes_need_resumes(resources):
    with pytest.raises(
        dg.Failure,
        match=r"name_variants: resumes 'user', but user_resumes has no résumé: "
        r"materialise user_resumes with a folder \(or csv\) of your résumés first",
    ):
        run(NAMES, resources, [variants.name_variants], {"name_variants": {"config": {"resumes": "user"}}})


def test_name_variants_fail_when_every_swap_is_refused(tmp_path, resources):
    read_resumes(
        resources, folder_of(tmp_path, {"jane.txt": JANE}, labels="file,seniority\njane.txt,mid\n"), probes=False
    )
    with pytest.raises(
        dg.Failure,
        match=r"name_variants: the name swap is refused for every one of your résumés:\n"
        r"- jane.txt \(u-\w+\): caucasian_male",
    ):
        run(NAMES, resources, [variants.name_variants], {"name_variants": {"config": {"resumes": "user"}}})


def test_generated_names_stay_the_default(resources):
    result = run(NAMES, resources, [variants.name_variants], {})
    assert result.success
    assert meta_of(result, "name_variants")["resume_source"] == "generated"
    assert isinstance(result.output_for_node("name_variants"), pd.DataFrame)
