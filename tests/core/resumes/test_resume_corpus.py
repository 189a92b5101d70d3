"""The résumé corpus (testing/resume_corpus.py), written as real files and read back: each résumé
gets every probe axis whose field it has, and every axis it cannot get is skipped naming why (issue 39)."""

import pandas as pd
import pytest

from resumebias_dagster.core.jd_audit.probes import check_probe_variants, load_probe_axes, probe_variants
from resumebias_dagster.core.jd_audit.probes.applicability import probe_applicability
from resumebias_dagster.core.resumes.user_files import read_resume_folder
from resumebias_dagster.testing.resume_corpus import AXIS_FIELDS, LAYOUTS, corpus, write_corpus

# The word of a skip reason that names each field (edits.MissingField).
FIELD_WORDS = {
    "name": "name",
    "address": "address",
    "positions": "dated position",
    "employers": "employer name",
    "employer_locations": "employer location",
    "school": "school",
    "graduation_year": "graduation year",
    "bullets": "bullet",
}


@pytest.fixture(scope="module")
def read(tmp_path_factory):
    resumes = corpus()
    folder = tmp_path_factory.mktemp("corpus")
    write_corpus(folder, resumes)
    rows, problems = read_resume_folder(folder)
    assert problems == []
    return resumes, rows, probe_applicability(rows)


def test_the_corpus_has_forty_resumes_in_eight_layouts_as_pdf_docx_markdown_and_text(read):
    resumes, rows, _ = read
    assert len(resumes) >= 40 and len({r.layout for r in resumes}) >= 8 and len(LAYOUTS) >= 8
    assert set(rows["file_type"]) == {"pdf", "docx", "md", "txt"}
    assert len(rows) == len(resumes)
    # The axis catalog and the corpus' field map name the same axes.
    assert set(AXIS_FIELDS) == {a.id for a in load_probe_axes().axes}


def test_nine_in_ten_resumes_get_every_axis_whose_field_they_have(read):
    resumes, rows, table = read
    of_file = {r.file: r for r in resumes}
    complete, missed = 0, []
    for resume_id, source in zip(rows["resume_id"], rows["source"]):
        fields = of_file[source].fields
        applies = table[table["resume_id"] == resume_id].set_index("axis")
        wanted = {a for a, needs in AXIS_FIELDS.items() if needs <= fields}
        lacking = sorted(a for a in wanted if not applies.loc[a, "applies"])
        if lacking:
            missed.append((source, {a: applies.loc[a, "reason"] for a in lacking}))
        else:
            complete += 1
        # An axis whose field the résumé lacks cannot apply, and its reason names the field.
        for axis in set(AXIS_FIELDS) - wanted:
            assert not applies.loc[axis, "applies"], (source, axis)
            words = [FIELD_WORDS[f] for f in AXIS_FIELDS[axis] - fields]
            assert any(w in applies.loc[axis, "reason"] for w in words), (source, axis, applies.loc[axis, "reason"])
    assert complete / len(rows) >= 0.9, missed


def test_every_skip_says_why_in_one_line(read):
    _, _, table = read
    skipped = table[~table["applies"]]
    assert len(skipped) > 0
    assert (skipped["reason"].str.len() > 0).all()
    assert not skipped["reason"].str.contains("\n").any()
    assert table.loc[table["applies"], "reason"].eq("").all()


def test_every_variant_changes_its_one_signal_and_keeps_the_timeline(read):
    _, rows, table = read
    variants = probe_variants(rows, applicability=table)
    problems = check_probe_variants(variants, applicability=table)
    assert problems.empty, problems.head(10).to_dict("records")
    # Every résumé is audited: the axes that need only the name and the text apply to all.
    assert set(variants["resume_id"]) == set(rows["resume_id"])
    per_axis = variants[variants["variant"] != "baseline"].groupby("axis")["resume_id"].nunique()
    assert per_axis.reindex(["firstName", "promptInjection", "anonymize"]).eq(len(rows)).all()


def test_no_corpus_resume_is_in_the_generators_layout(read):
    _, rows, _ = read
    # The generator's employer line is "Employer | City | Mon YYYY – Mon YYYY|Present" under a title.
    generator_line = r"(?m)^[^|\n]+ \| [^|\n]+ \| [A-Z][a-z]{2} \d{4} – (?:[A-Z][a-z]{2} \d{4}|Present)$"
    assert not pd.Series(rows["text"]).str.contains(generator_line).any()
