"""The user's own résumés (core/resumes/user_files.py, extract.py), read from real PDF, DOCX, Markdown and text files."""

import io
import os

import pandas as pd
import pytest
from pypdf import PdfReader

from resumebias_dagster.core.resumes.contact import looks_like_name
from resumebias_dagster.core.resumes.extract import ExtractionError, extract_text, normalise_text
from resumebias_dagster.core.resumes.user_files import (
    USER_RESUME_COLUMNS,
    find_name,
    problems_frame,
    read_resume_csv,
    read_resume_folder,
    redact,
)
from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.core.seniority.names import name_variants, variant_problems
from resumebias_dagster.testing.resume_files import (
    LINES_PER_PAGE,
    docx_bytes,
    encrypted_pdf_bytes,
    pdf_bytes,
    scanned_pdf_bytes,
    truncated_pdf_bytes,
    write,
)


@pytest.fixture(scope="module")
def generated():
    return generate_resumes(2, seed=3)


def no_blank_lines(text):
    return "\n".join(line for line in text.split("\n") if line) + "\n"


def problem_of(problems, source):
    found = [p.problem for p in problems if p.source == source]
    assert len(found) == 1, (source, [str(p) for p in problems])
    return found[0]


# --------------------------------------------------------------------------- the test files


def test_the_handwritten_pdf_reads_back_line_by_line(generated):
    text = generated["text"].iloc[0]
    reader = PdfReader(io.BytesIO(pdf_bytes(text)))
    assert len(reader.pages) == 1
    # A PDF's text layer has no blank lines; every other line comes back as written, en dashes included.
    assert reader.pages[0].extract_text().rstrip("\n") + "\n" == no_blank_lines(text)


def test_a_long_text_spreads_over_pages():
    text = "\n".join(f"Line {k} – café" for k in range(LINES_PER_PAGE + 5))
    reader = PdfReader(io.BytesIO(pdf_bytes(text)))
    assert len(reader.pages) == 2
    assert "\n".join(p.extract_text().rstrip("\n") for p in reader.pages) == text


def test_normalise_keeps_lines_and_tidies_spaces(generated):
    for text in generated["text"]:
        assert normalise_text(text) == text  # the generator's texts are already normal
    raw = "\ufeff  Jane\u00a0 Doe \r\n\r\n\r\n\tSUMMARY\u200b\n\ufb01ne  work\f\n\n"
    assert normalise_text(raw) == "Jane Doe\n\nSUMMARY\nfine work\n"
    assert normalise_text(" \n \n") == ""


# --------------------------------------------------------------------------- a folder end to end


@pytest.fixture
def folder(tmp_path, generated):
    texts = generated["text"].tolist()
    write(tmp_path / "alpha.pdf", pdf_bytes(texts[0]))
    write(tmp_path / "bravo.pdf", pdf_bytes(texts[1]))
    write(tmp_path / "charlie.pdf", truncated_pdf_bytes(texts[2]))
    write(tmp_path / "delta.docx", docx_bytes(texts[3]))
    # The name in the page header, as many templates put it, and the contact details in a table.
    first, *rest = texts[4].split("\n")
    contact = rest[0].split(" | ")
    body = "\n".join(rest[1:])
    write(tmp_path / "echo.docx", docx_bytes(body, header=first, table=[contact], table_after=0))
    write(tmp_path / "foxtrot.txt", texts[5])
    write(
        tmp_path / "labels.csv",
        "file,seniority\nalpha.pdf,Junior\nbravo.pdf,mid\ncharlie.pdf,senior\ndelta.docx,\nfoxtrot.txt, SENIOR \n",
    )
    return tmp_path


def test_a_folder_of_pdf_docx_and_txt_becomes_rows_and_problems(folder, generated):
    rows, problems = read_resume_folder(folder)
    assert list(rows.columns) == USER_RESUME_COLUMNS
    assert rows["source"].tolist() == ["alpha.pdf", "bravo.pdf", "delta.docx", "echo.docx", "foxtrot.txt"]
    assert rows["file_type"].tolist() == ["pdf", "pdf", "docx", "docx", "txt"]
    assert rows["seniority"].tolist() == ["junior", "mid", None, None, "senior"]
    expected = generated.iloc[[0, 1, 3, 4, 5]]
    assert rows["name"].tolist() == expected["name"].tolist()
    assert rows["first_name"].tolist() == expected["first_name"].tolist()
    assert rows["last_name"].tolist() == expected["last_name"].tolist()
    assert rows["email"].tolist() == expected["email"].tolist()
    assert rows["phone"].tolist() == expected["phone"].tolist()
    assert rows["name_line"].tolist() == [1] * 5
    assert rows["text"].iloc[0] == no_blank_lines(expected["text"].iloc[0])
    assert rows["text"].iloc[2] == expected["text"].iloc[2]  # a DOCX keeps its blank lines
    assert rows["text"].iloc[4] == expected["text"].iloc[4]
    # The header's name and the table's contact line come first, as in the generator's layout.
    assert rows["text"].iloc[3].split("\n")[:2] == expected["text"].iloc[3].split("\n")[:2]
    assert rows["resume_id"].str.fullmatch(r"u-[0-9a-f]{12}").all() and rows["resume_id"].is_unique
    assert rows["sha256"].str.len().eq(64).all()
    # The damaged PDF is a problem row naming the file; the others went on.
    assert [p.source for p in problems] == ["charlie.pdf"]
    assert "damaged or not a readable PDF" in problems[0].problem
    assert str(problems[0]).startswith("charlie.pdf: ")
    table = problems_frame(problems)
    assert list(table.columns) == ["source", "problem"] and len(table) == 1


def test_ids_are_stable_and_name_free(folder):
    first, _ = read_resume_folder(folder)
    (folder / "alpha.pdf").rename(folder / "Jane_Doe_CV.pdf")
    (folder / "labels.csv").unlink()
    again, _ = read_resume_folder(folder)
    assert set(first["resume_id"]) == set(again["resume_id"])
    assert not any(n.lower() in rid for rid in first["resume_id"] for n in first["first_name"])


def test_user_resumes_get_name_variants_in_both_scopes(folder):
    rows, _ = read_resume_folder(folder)
    labelled = rows[rows["seniority"].notna()]
    for scope in ("everywhere", "first_line"):
        variants = name_variants(labelled, seed=1, scope=scope)
        assert len(variants) == 4 * len(labelled)
        assert variant_problems(variants) == []
        if scope == "everywhere":
            for (_, row), text in zip(labelled.iterrows(), variants["text"].iloc[::4]):
                assert row["last_name"].lower() not in text.lower()


# --------------------------------------------------------------------------- each bad file, its message


def read_one(tmp_path, name, data, encoding="utf-8"):
    write(tmp_path / name, data, encoding)
    rows, problems = read_resume_folder(tmp_path)
    assert rows.empty
    return problem_of(problems, name)


def test_an_encrypted_pdf_is_refused(tmp_path, generated):
    message = read_one(tmp_path, "locked.pdf", encrypted_pdf_bytes(generated["text"].iloc[0]))
    assert message.startswith("encrypted with a password; save an unprotected copy")


def test_a_pdf_with_only_an_owner_password_is_read(tmp_path, generated):
    text = generated["text"].iloc[0]
    write(tmp_path / "restricted.pdf", encrypted_pdf_bytes(text, user_password="", owner_password="owner"))
    rows, problems = read_resume_folder(tmp_path)
    assert problems == [] and rows["text"].iloc[0] == no_blank_lines(text)


def test_a_truncated_pdf_names_what_pypdf_found(tmp_path, generated):
    message = read_one(tmp_path, "cut.pdf", truncated_pdf_bytes(generated["text"].iloc[0], keep=0.6))
    assert message.startswith("damaged or not a readable PDF (")
    assert "EOF marker not found" in message


def test_a_renamed_file_is_not_a_pdf(tmp_path):
    message = read_one(tmp_path, "fake.pdf", "<html>not a PDF at all</html>")
    assert message.startswith("not a PDF (no %PDF- header)")


def test_a_scan_without_text_layer_says_ocr_it(tmp_path):
    message = read_one(tmp_path, "scan.pdf", scanned_pdf_bytes())
    assert message.startswith("no text layer (1 page, 0 letters or digits)")
    assert "OCR it first" in message


def test_latin1_text_is_refused_with_its_line(tmp_path, generated):
    text = generated["text"].iloc[0].replace("–", "-") + "Languages: français\n"
    message = read_one(tmp_path, "latin.txt", text, encoding="latin-1")
    line = text.split("\n").index("Languages: français") + 1
    assert message == (f"not UTF-8 text (byte 0xe7 on line {line}; Latin-1 or Windows-1252 perhaps); save it as UTF-8")


def test_utf8_text_with_accents_and_a_bom_is_read(tmp_path, generated):
    text = generated["text"].iloc[0] + "Languages: français, português\n"
    write(tmp_path / "accents.txt", "\ufeff" + text)
    rows, problems = read_resume_folder(tmp_path)
    assert problems == [] and rows["text"].iloc[0] == text


def test_utf16_and_empty_text_are_refused(tmp_path, generated):
    assert read_one(tmp_path, "wide.txt", "\ufeff" + generated["text"].iloc[0], encoding="utf-16") == (
        "UTF-16 text; save it as UTF-8"
    )
    (tmp_path / "wide.txt").unlink()
    assert read_one(tmp_path, "empty.txt", "  \n\n") == "empty, or too little text for a résumé"


def test_a_damaged_docx_and_a_protected_one_are_refused(tmp_path):
    assert read_one(tmp_path, "bad.docx", b"PK\x03\x04 not really a zip") == (
        "damaged or not a Word .docx file (not a ZIP package)"
    )
    (tmp_path / "bad.docx").unlink()
    message = read_one(tmp_path, "locked.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600)
    assert message.startswith("a password-protected Word file or an old .doc")


def test_a_docx_without_text_is_refused(tmp_path):
    assert read_one(tmp_path, "blank.docx", docx_bytes("")) == (
        "no text in the document body or header (text boxes are not read)"
    )


def test_other_entries_of_the_folder_are_listed_not_dropped(tmp_path, generated):
    write(tmp_path / "good.txt", generated["text"].iloc[0])
    write(tmp_path / "old.doc", b"\xd0\xcf\x11\xe0")
    write(tmp_path / "photo.png", b"\x89PNG")
    write(tmp_path / "notes", "no extension")
    write(tmp_path / "sub" / "inner.txt", generated["text"].iloc[1])
    write(tmp_path / ".DS_Store", b"\x00")
    write(tmp_path / "~$good.docx", b"lock")
    os.symlink(tmp_path / "good.txt", tmp_path / "link.txt")
    write(tmp_path / "copy.txt", generated["text"].iloc[0])
    write(tmp_path / "same.docx", docx_bytes(generated["text"].iloc[0]))
    rows, problems = read_resume_folder(tmp_path)
    # copy.txt sorts before good.txt: it is read, and good.txt is the duplicate.
    assert rows["source"].tolist() == ["copy.txt"]
    assert problem_of(problems, "good.txt") == "the same file as copy.txt; read once"
    assert problem_of(problems, "same.docx") == "the same text as copy.txt; read once"
    assert problem_of(problems, "old.doc").startswith("an old Word .doc; save it as .docx or PDF")
    assert problem_of(problems, "photo.png").startswith("not a résumé file type (.png); read are .pdf, .docx")
    assert problem_of(problems, "notes").startswith("not a résumé file type (no extension)")
    assert problem_of(problems, "sub").startswith("a subfolder: not read (the folder is read non-recursively")
    assert problem_of(problems, "link.txt").startswith("a symbolic link: not followed")
    assert {p.source for p in problems} == {"good.txt", "same.docx", "old.doc", "photo.png", "notes", "sub", "link.txt"}


def test_a_missing_folder_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="résumé folder .*nowhere: not found"):
        read_resume_folder(tmp_path / "nowhere")


def test_extract_text_names_the_file(tmp_path):
    path = write(tmp_path / "scan.pdf", scanned_pdf_bytes())
    with pytest.raises(ExtractionError, match=r"^scan\.pdf: no text layer"):
        extract_text(path)
    with pytest.raises(ExtractionError, match=r"^gone\.txt: cannot be read"):
        extract_text(tmp_path / "gone.txt")


def test_markdown_loses_its_markup(tmp_path):
    md = (
        "# Jane Doe\n\njane.doe@example.com | +44 20 7946 0958\n\n## EXPERIENCE\n"
        "* Built **fast** pipelines with `pandas` for the finance team\n---\n+ Ran __weekly__ reviews\n"
    )
    write(tmp_path / "jane.md", md)
    rows, problems = read_resume_folder(tmp_path)
    assert problems == []
    assert rows["text"].iloc[0] == (
        "Jane Doe\n\njane.doe@example.com | +44 20 7946 0958\n\nEXPERIENCE\n"
        "- Built fast pipelines with pandas for the finance team\n\n- Ran weekly reviews\n"
    )
    assert rows["phone"].iloc[0] == "+44 20 7946 0958"


# --------------------------------------------------------------------------- labels


def test_a_bad_label_names_the_sidecar_row_the_file_and_the_value(tmp_path, generated):
    write(tmp_path / "a.txt", generated["text"].iloc[0])
    write(tmp_path / "b.txt", generated["text"].iloc[1])
    write(tmp_path / "labels.csv", "file,seniority\na.txt,lead\nb.txt,mid\nc.txt,junior\n")
    rows, problems = read_resume_folder(tmp_path)
    assert rows["source"].tolist() == ["b.txt"] and rows["seniority"].tolist() == ["mid"]
    assert (
        problem_of(problems, "a.txt") == "labels.csv row 1 (a.txt): seniority 'lead' is not one of junior, mid, senior"
    )
    assert problem_of(problems, "labels.csv") == "row 3: no file 'c.txt' in the folder"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("name,level\na.txt,mid\n", r"labels\.csv: needs the columns 'file' and 'seniority'"),
        (
            "file,seniority\na.txt,mid\na.txt,senior\n",
            r"labels\.csv: row 2: its file is listed again \(first on row 1\)",
        ),
        ("file,seniority\n,mid\n", r"labels\.csv: row 1: column 'file' is empty"),
        (b"file,seniority\na.txt,s\xe9nior\n", r"labels\.csv: not UTF-8 text \(byte 0xe9 on line 2"),
    ],
)
def test_a_malformed_sidecar_stops_the_read(tmp_path, generated, content, message):
    write(tmp_path / "a.txt", generated["text"].iloc[0])
    write(tmp_path / "labels.csv", content)
    with pytest.raises(ValueError, match=message):
        read_resume_folder(tmp_path)


def test_labels_from_a_mapping_or_another_file(tmp_path, generated):
    folder = tmp_path / "resumes"
    write(folder / "a.txt", generated["text"].iloc[0])
    rows, _ = read_resume_folder(folder, labels={"a.txt": "Senior"})
    assert rows["seniority"].tolist() == ["senior"]
    other = write(tmp_path / "levels.csv", "file,seniority\na.txt,junior\n")
    rows, _ = read_resume_folder(folder, labels=other)
    assert rows["seniority"].tolist() == ["junior"]
    rows, _ = read_resume_folder(folder)
    assert rows["seniority"].tolist() == [None]


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("line", "is_name"),
    [
        ("Jane Doe", True),
        ("JANE DOE", True),
        ("Mary-Kate O'Neil", True),
        ("Jean-Luc de Picard", False),  # "de": a lower-case particle; give such names in labels.csv
        ("Ana María López García", True),
        ("J. R. Tolkien", True),
        ("Jane", False),
        ("Software Engineer", False),
        ("Curriculum Vitae", False),
        ("Jane Doe 2024", False),
        ("jane@doe.com Jane", False),
        ("Jane Doe, PhD and five more words", False),
    ],
)
def test_what_looks_like_a_name(line, is_name):
    assert looks_like_name(line) is is_name


def test_the_name_may_follow_a_heading():
    assert find_name("RESUME\n\nCurriculum Vitae\nJohn Smith\nSoftware Engineer\n") == ("John Smith", 4)
    assert find_name("a\nb\nc\nd\ne\nJohn Smith\n") is None


def test_a_resume_without_a_name_is_a_problem_not_a_skip(tmp_path, generated):
    text = generated["text"].iloc[0].split("\n", 1)[1]  # the name line taken off
    message = read_one(tmp_path, "anon.txt", text)
    assert message.startswith("no name found on the first 5 lines")
    assert "cannot get name variants" in message


def test_a_name_given_in_the_sidecar(tmp_path, generated):
    row = generated.iloc[0]
    text = "PROFILE\n" + row["text"].replace(row["name"], row["name"].upper(), 1)
    write(tmp_path / "a.txt", "Résumé of\n" + text)
    write(tmp_path / "labels.csv", f"file,seniority,name\na.txt,mid,{row['name']}\n")
    rows, problems = read_resume_folder(tmp_path)
    assert problems == []
    assert rows[["name", "first_name", "last_name", "name_line"]].iloc[0].tolist() == [
        row["name"],
        row["first_name"],
        row["last_name"],
        0,
    ]
    write(tmp_path / "labels.csv", "file,seniority,name\na.txt,mid,Nobody Here\n")
    rows, problems = read_resume_folder(tmp_path)
    assert problem_of(problems, "a.txt") == "the name 'Nobody Here' it is given does not occur in the text"


# --------------------------------------------------------------------------- a CSV


def test_a_csv_with_text_id_label_and_name_columns(tmp_path, generated):
    frame = pd.DataFrame(
        {
            "cid": ["c1", "c2", "c3", "c4", "c1"],
            "body": [*generated["text"].iloc[:3], "", generated["text"].iloc[3]],
            "level": ["junior", "Mid", "boss", "senior", "mid"],
            "who": ["", generated["name"].iloc[1], "", "", ""],
        }
    )
    path = tmp_path / "resumes.csv"
    frame.to_csv(path, index=False)
    rows, problems = read_resume_csv(path, text_column="body", id_column="cid", label_column="level", name_column="who")
    assert rows["resume_id"].tolist() == ["c1", "c2"]
    assert rows["source"].tolist() == ["resumes.csv:row 1", "resumes.csv:row 2"]
    assert rows["seniority"].tolist() == ["junior", "mid"]
    assert rows["name"].tolist() == generated["name"].iloc[:2].tolist()
    assert rows["name_line"].tolist() == [1, 0]
    assert [str(p) for p in problems] == [
        "resumes.csv:row 3: column 'level': seniority 'boss' is not one of junior, mid, senior",
        "resumes.csv:row 4: column 'body' is empty",
        "resumes.csv:row 5: column 'cid' repeats row 1 (id c1); read once",
    ]


def test_a_csv_without_an_id_column_uses_the_text_hash(tmp_path, generated):
    path = tmp_path / "r.csv"
    pd.DataFrame({"text": generated["text"].iloc[:2]}).to_csv(path, index=False)
    rows, problems = read_resume_csv(path)
    assert problems == [] and rows["resume_id"].str.fullmatch(r"u-[0-9a-f]{12}").all()
    assert rows["seniority"].isna().all() and rows["file_type"].eq("csv").all()


def test_csv_errors_name_the_file_and_the_column(tmp_path, generated):
    path = tmp_path / "r.csv"
    pd.DataFrame({"resume": generated["text"].iloc[:1]}).to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"r\.csv: no column 'text' \(text_column\); its header has 1 column\(s\)"):
        read_resume_csv(path)
    with pytest.raises(ValueError, match=r"r\.csv: no column 'lvl' \(label_column\)"):
        read_resume_csv(path, text_column="resume", label_column="lvl")
    write(path, "text\nCafé\n", encoding="latin-1")
    with pytest.raises(ValueError, match=r"r\.csv: not UTF-8 text \(byte 0xe9 on line 2"):
        read_resume_csv(path)
    with pytest.raises(ValueError, match=r"missing\.csv: cannot be read"):
        read_resume_csv(tmp_path / "missing.csv")


# --------------------------------------------------------------------------- redaction


def test_redact_hides_the_person(generated):
    row = generated.iloc[1]
    shown = redact(row["text"], name=row["name"], email=row["email"], phone=row["phone"])
    for secret in (row["first_name"], row["last_name"], row["email"], row["phone"]):
        assert secret.lower() not in shown.lower()
    assert shown.startswith("[name]\n[email] | [phone] | ")
    if row["linkedin"]:
        assert "[link]" in shown and row["linkedin"] not in shown
    assert "EXPERIENCE" in shown and "SKILLS" in shown


def test_redact_catches_other_forms():
    text = (
        "Doe, Jane\nContact: JANE.DOE@mail.com, +1 (415) 555-0100, www.janedoe.dev, github.com/jdoe\n"
        "Worked 2019-2021 at janedoe consulting; Jane led it.\n"
    )
    assert redact(text, name="Jane Doe", email=None, phone=None) == (
        "[name]\nContact: [email], [phone], [link] [link]\nWorked 2019-2021 at [name] consulting; [name] led it.\n"
    )
    assert redact("Jane Doe", name=None) == "Jane Doe"
