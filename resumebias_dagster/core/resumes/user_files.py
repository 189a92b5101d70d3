"""The user's own résumés: a folder of files or a CSV with a text column, read into rows.

``read_resume_folder`` and ``read_resume_csv`` return ``(rows, problems)``: one row per résumé
that could be read (``USER_RESUME_COLUMNS``) and one ``FileProblem`` per file or CSV row that
could not, naming it and saying what is wrong; a bad file never stops the others.

Conventions:

* The folder is read **non-recursively**, files in name order. ``.pdf``, ``.docx``, ``.md``
  and ``.txt`` are read (``extract``); hidden files, Word's ``~$`` lock files and the sidecar
  ``labels.csv`` are passed over; a subfolder, a symbolic link or a file of another type is
  a problem row (nothing in the folder is left out silently). A file with the same bytes or
  the same text as an earlier one is a problem row too (one person counted twice).
* ``resume_id`` is ``u-`` and the first 12 hex digits of the SHA-256 of the résumé (of the
  file's bytes; of the text for a CSV row without an id column): stable across renames and
  runs, unique once duplicates are dropped, and free of the candidate's name, which file
  names usually carry (the report shows ids where it redacts texts). ``source`` says where
  the row came from (the file name, or ``<csv name>:row <n>``).
* Seniority labels: a ``labels.csv`` sidecar in the folder, UTF-8 with a header row and the
  columns ``file`` (a file name in the folder) and ``seniority`` (junior, mid or senior, any
  case; empty for none), optionally ``name`` (the candidate's name when the first lines do
  not show it). For a CSV, ``label_column`` and ``name_column``. Without a label the
  seniority is None, and the seniority study's accuracy figures (accuracy, rank difference,
  promotions and demotions) cannot be computed for that résumé; its bias figures (name and
  style swaps against the model's own prediction) still can.
* The candidate's name is found as the probes' reader finds it (``contact.find_name_span``): on
  the first of the first ``NAME_SEARCH_LINES`` non-empty lines that has one, the whole line, a
  "Name:" field or the part before a separator ("Jane Doe | Data Analyst"), when it looks like
  a person's name: two to four capitalised words of letters (apostrophes, hyphens, initials),
  no digits, no ``@``, no résumé heading or job word. It splits as the
  probes split it: the first word is ``first_name``, the rest ``last_name``. A résumé whose
  name is not found (and not given) is a problem row: it could not get name variants.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from resumebias_dagster.core.common.labels import SENIORITY_LEVELS
from resumebias_dagster.core.resumes.contact import EMAIL, NAME_SEARCH_LINES, URL, find_name_span, phones_in
from resumebias_dagster.core.resumes.extract import (
    SUFFIXES,
    ExtractionError,
    decode_utf8,
    extract_bytes,
    normalise_text,
)

LABELS_FILE = "labels.csv"
USER_RESUME_COLUMNS = [
    "resume_id",
    "source",  # the file name in the folder, or "<csv name>:row <n>"
    "file_type",  # pdf, docx, md, txt or csv
    "sha256",  # of the file's bytes; of the text (UTF-8) for a CSV row
    "seniority",  # junior, mid, senior, or None (no label)
    "name",  # as written in the text
    "first_name",
    "last_name",
    "name_line",  # 1-based line of the text the name was found on; 0 where given, not found
    "email",  # the first e-mail address in the text, "" for none
    "phone",  # the first phone number in the text, "" for none
    "text",  # extracted and normalised (extract.normalise_text)
]
_OTHER_FORMATS = {
    ".doc": "an old Word .doc; save it as .docx or PDF",
    ".rtf": "RTF; save it as .docx or PDF",
    ".odt": "OpenDocument; save it as .docx or PDF",
    ".pages": "Apple Pages; export it as .docx or PDF",
}
PathLike = str | os.PathLike


@dataclass(frozen=True)
class FileProblem:
    """A file (or CSV row) that was not read, and why."""

    source: str
    problem: str

    def __str__(self) -> str:
        return f"{self.source}: {self.problem}"


def problems_frame(problems: list[FileProblem]) -> pd.DataFrame:
    """The problems as a table: columns ``source, problem``."""
    return pd.DataFrame([(p.source, p.problem) for p in problems], columns=["source", "problem"])


# --------------------------------------------------------------------------- labels


def check_label(value: Any, where: str) -> str | None:
    """``value`` as a seniority level (case and spaces ignored); None for an empty value;
    ``ValueError`` naming ``where`` and the value otherwise."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    label = str(value).strip().lower()
    if not label:
        return None
    if label not in SENIORITY_LEVELS:
        raise ValueError(f"{where}: seniority {str(value)!r} is not one of {', '.join(SENIORITY_LEVELS)}")
    return label


@dataclass(frozen=True)
class _Sidecar:
    labels: dict[str, Any]  # file name -> the raw label
    names: dict[str, str]  # file name -> the given name
    rows: dict[str, int]  # file name -> its row of labels.csv (for messages)
    source: str


def _csv_rows(path: Path) -> list[dict[str, str]]:
    """The rows of a UTF-8 CSV file with a header; ``ValueError`` naming the file otherwise.
    A symbolic link is refused (``labels.csv`` linked to a ``.env`` was read): the file must be
    the one named. Messages never quote the file's content (its header may be a secret's line)."""
    if path.is_symlink():
        raise ValueError(f"{path}: a symbolic link; give the file itself")
    try:
        text = decode_utf8(path.read_bytes())
    except OSError as exc:
        raise ValueError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except ExtractionError as exc:
        raise ValueError(f"{path}: {exc}") from None
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        rows = list(reader)
    except csv.Error as exc:
        raise ValueError(f"{path}: not a readable CSV ({exc})") from None
    if reader.fieldnames is None:
        raise ValueError(f"{path}: empty; it needs a header row")
    return rows


def _read_sidecar(path: Path, source: str) -> _Sidecar:
    rows = _csv_rows(path)
    header = set(rows[0]) if rows else set()
    if rows and not {"file", "seniority"} <= header:
        raise ValueError(
            f"{path}: needs the columns 'file' and 'seniority' (its header has {len(header)} column(s), not those)"
        )
    sidecar = _Sidecar({}, {}, {}, source)
    for n, row in enumerate(rows, start=1):
        file = (row.get("file") or "").strip()
        if not file:
            raise ValueError(f"{path}: row {n}: column 'file' is empty")
        if file in sidecar.rows:
            raise ValueError(f"{path}: row {n}: its file is listed again (first on row {sidecar.rows[file]})")
        sidecar.rows[file] = n
        sidecar.labels[file] = row.get("seniority")
        if (row.get("name") or "").strip():
            sidecar.names[file] = row["name"].strip()
    return sidecar


def _sidecar(folder: Path, labels: Mapping[str, Any] | PathLike | None) -> _Sidecar:
    if isinstance(labels, Mapping):
        return _Sidecar(dict(labels), {}, {k: n for n, k in enumerate(labels, start=1)}, "labels")
    path = folder / LABELS_FILE if labels is None else Path(labels)
    if labels is None and not path.is_file() and not path.is_symlink():
        return _Sidecar({}, {}, {}, LABELS_FILE)
    return _read_sidecar(path, path.name)


# --------------------------------------------------------------------------- names and contacts


def find_name(text: str) -> tuple[str, int] | None:
    """The name on the first of the first ``NAME_SEARCH_LINES`` non-empty lines that has one
    (the probes' reader finds it the same way: ``contact.find_name_span``), and its 1-based
    line number; None if none does."""
    found = find_name_span(text.split("\n"))
    return (found.text, found.line + 1) if found is not None else None


def split_name(name: str) -> tuple[str, str]:
    """``first_name, last_name`` as the probes split the name line: the first word, the rest."""
    first, _, last = " ".join(name.split()).partition(" ")
    return first, last


def _name_in_text(name: str, text: str) -> bool:
    words = [re.escape(w) for w in name.split()]
    return re.search(r"(?<![A-Za-z])" + r"\s+".join(words) + r"(?![A-Za-z])", text, re.IGNORECASE) is not None


def find_email(text: str) -> str:
    m = EMAIL.search(text)
    return m.group(0) if m else ""


def _phones(text: str) -> list[str]:
    return [m.group(0).strip() for m in phones_in(text)]


def find_phone(text: str) -> str:
    """The first phone number in ``text`` (9 to 15 digits, not a year range), "" for none."""
    phones = _phones(text)
    return phones[0] if phones else ""


def redact(text: str, *, name: str | None, email: str | None = None, phone: str | None = None) -> str:
    """``text`` for display without the person: e-mail addresses (``email`` and any other),
    links, phone numbers (``phone`` and any other) and every form of ``name`` (the full name,
    "Last, First", each word alone and the words run together, as in a profile slug) become
    ``[email]``, ``[link]``, ``[phone]`` and ``[name]``; the name also joined with an initial and
    with or without its accents, as file names write it. Over-redacts rather than under."""
    for value in filter(None, (email,)):
        text = text.replace(value, "[email]")
    text = EMAIL.sub("[email]", text)
    text = URL.sub("[link]", text)
    for value in filter(None, (phone, *_phones(text))):
        text = text.replace(value, "[phone]")
    words = [_folded(w) for w in re.split(r"[\s,]+", name or "") if len(w.strip(".")) >= 2]
    if not words:
        return text
    first, last = (re.escape(w) for w in (words[0], words[-1]))
    esc = [re.escape(w) for w in words]
    # The name as people and file names write it: "First Last", "Last, First", run together
    # either way, with an initial (akaminski, ZamoraR, a.kaminski, AnnaK), each word alone.
    pairs = [(first, last), (last, first), (first[0], last), (last, first[0]), (first, last[0])]
    forms = [r"\s+".join(esc), rf"{last},\s*{first}", *(rf"{a}[._-]?{b}" for a, b in pairs), *esc]
    folded = _folded(text)  # accents folded, one character for one: spans match the text's
    for form in sorted(set(forms), key=len, reverse=True):
        spans = [m.span() for m in re.finditer(rf"(?<![A-Za-z]){form}(?![A-Za-z])", folded, flags=re.IGNORECASE)]
        for start, end in reversed(spans):
            text, folded = (t[:start] + "[name]" + t[end:] for t in (text, folded))
    return text


def _folded(text: str) -> str:
    """``text`` with each accented letter replaced by its base letter (é -> e), character for character."""
    out = []
    for ch in text:
        base = unicodedata.normalize("NFKD", ch)[:1]
        out.append(base if base and not unicodedata.combining(base) and base.isascii() and ch.isalpha() else ch)
    return "".join(out)


# --------------------------------------------------------------------------- rows


def resume_id_of(digest: str) -> str:
    return f"u-{digest[:12]}"


def _row(
    text: str, *, source: str, file_type: str, digest: str, label: str | None, name: str | None, resume_id: str
) -> dict[str, Any]:
    """The row of one résumé; ``ValueError`` (the problem) when its name is not found or given."""
    if name:
        if not _name_in_text(name, text):
            raise ValueError(f"the name {name!r} it is given does not occur in the text")
        name, line = " ".join(name.split()), 0
    else:
        found = find_name(text)
        if found is None:
            raise ValueError(
                f"no name found on the first {NAME_SEARCH_LINES} lines (two to four capitalised words); put the name "
                "on the first line or give it (labels.csv column 'name', or the CSV's name column): without it the "
                "résumé cannot get name variants"
            )
        name, line = found
    first, last = split_name(name)
    if not last:
        raise ValueError(f"the name {name!r} is one word; name variants need a first and a last name")
    return {
        "resume_id": resume_id,
        "source": source,
        "file_type": file_type,
        "sha256": digest,
        "seniority": label,
        "name": name,
        "first_name": first,
        "last_name": last,
        "name_line": line,
        "email": find_email(text),
        "phone": find_phone(text),
        "text": text,
    }


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=USER_RESUME_COLUMNS).astype({"name_line": "int64"})


def _skipped(path: Path) -> str | None:
    """Why a folder entry is not read as a résumé (None: it is)."""
    if path.is_symlink():
        return "a symbolic link: not followed (copy the file into the folder)"
    if path.is_dir():
        return "a subfolder: not read (the folder is read non-recursively; move its files up)"
    if path.suffix.lower() not in SUFFIXES:
        kind = _OTHER_FORMATS.get(path.suffix.lower(), f"not a résumé file type ({path.suffix or 'no extension'})")
        return f"{kind}; read are {', '.join(SUFFIXES)}"
    return None


def _ignored(name: str) -> bool:
    return name.startswith((".", "~$")) or name == LABELS_FILE


def read_resume_folder(
    folder: PathLike, *, labels: Mapping[str, Any] | PathLike | None = None
) -> tuple[pd.DataFrame, list[FileProblem]]:
    """The résumés in ``folder`` (not its subfolders) as ``USER_RESUME_COLUMNS`` rows, and
    the files that could not be read, each with the reason (see the module docstring).

    ``labels``: None reads the folder's ``labels.csv`` if there is one; a path reads that
    CSV instead; a mapping gives file name -> seniority directly. A label that is not a level
    makes its file a problem row; an entry for a file the folder lacks is a problem row too.
    Without a label the seniority is None (no accuracy figures for that résumé).
    ``ValueError`` if the folder does not exist or ``labels.csv`` is malformed.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"résumé folder {folder}: not found, or not a folder")
    sidecar = _sidecar(folder, labels)
    problems: list[FileProblem] = []
    rows: list[dict[str, Any]] = []
    seen: dict[str, str] = {}  # "file:" or "text:" and a SHA-256 -> the file it came from
    entries = sorted((p for p in folder.iterdir() if not _ignored(p.name)), key=lambda p: p.name)
    for path in entries:
        if (why := _skipped(path)) is not None:
            problems.append(FileProblem(path.name, why))
            continue
        try:
            rows.append(_read_file(path, sidecar, seen))
        except (ExtractionError, ValueError) as exc:
            problems.append(FileProblem(path.name, str(exc)))
    names = {p.name for p in entries}
    problems += [
        FileProblem(sidecar.source, f"row {n}: no file {file!r} in the folder")
        for file, n in sidecar.rows.items()
        if file not in names
    ]
    return _frame(rows), problems


def _read_file(path: Path, sidecar: _Sidecar, seen: dict[str, str]) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot be read ({exc.strerror or exc})") from None
    digest = hashlib.sha256(data).hexdigest()
    if f"file:{digest}" in seen:
        raise ValueError(f"the same file as {seen[f'file:{digest}']}; read once")
    seen[f"file:{digest}"] = path.name
    text = extract_bytes(data, path.suffix)
    text_digest = "text:" + hashlib.sha256(text.encode()).hexdigest()
    if text_digest in seen:
        raise ValueError(f"the same text as {seen[text_digest]}; read once")
    seen[text_digest] = path.name
    where = f"{sidecar.source} row {sidecar.rows.get(path.name)} ({path.name})"
    label = check_label(sidecar.labels.get(path.name), where)
    return _row(
        text,
        source=path.name,
        file_type=path.suffix.lower().lstrip("."),
        digest=digest,
        label=label,
        name=sidecar.names.get(path.name),
        resume_id=resume_id_of(digest),
    )


def read_resume_csv(
    path: PathLike,
    *,
    text_column: str = "text",
    id_column: str | None = None,
    label_column: str | None = None,
    name_column: str | None = None,
) -> tuple[pd.DataFrame, list[FileProblem]]:
    """The résumés of a UTF-8 CSV file, one a row, as ``USER_RESUME_COLUMNS`` rows, and the
    rows that could not be used (``<file>:row <n>``, rows counted from 1 after the header).

    ``text_column`` holds the résumé text; ``id_column`` its id (default: ``u-`` and the text's
    SHA-256); ``label_column`` the seniority (empty cells: None, no accuracy figures);
    ``name_column`` the candidate's name (default: found in the text). A missing column, or a
    repeated id, is a ``ValueError`` naming the file and the column; an empty text, a bad label
    or no name is a problem row naming the row and the column.
    """
    path = Path(path)
    records = _csv_rows(path)
    header = list(records[0]) if records else []
    for setting, column in (
        ("text_column", text_column),
        ("id_column", id_column),
        ("label_column", label_column),
        ("name_column", name_column),
    ):
        if column is not None and records and column not in header:
            raise ValueError(
                f"{path}: no column {column!r} ({setting}); its header has {len(header)} column(s), none named so"
            )
    rows: list[dict[str, Any]] = []
    problems: list[FileProblem] = []
    ids: dict[str, int] = {}
    for n, record in enumerate(records, start=1):
        source = f"{path.name}:row {n}"
        try:
            rows.append(
                _csv_row(
                    record,
                    source,
                    text_column=text_column,
                    id_column=id_column,
                    label_column=label_column,
                    name_column=name_column,
                )
            )
        except ValueError as exc:
            problems.append(FileProblem(source, str(exc)))
            continue
        rid = rows[-1]["resume_id"]
        if rid in ids:
            what = f"column {id_column!r}" if id_column else "the text"
            problems.append(FileProblem(source, f"{what} repeats row {ids[rid]} (id {rid}); read once"))
            rows.pop()
            continue
        ids[rid] = n
    return _frame(rows), problems


def _csv_row(
    record: dict[str, str],
    source: str,
    *,
    text_column: str,
    id_column: str | None,
    label_column: str | None,
    name_column: str | None,
) -> dict[str, Any]:
    text = normalise_text(record.get(text_column) or "")
    if not text.strip():
        raise ValueError(f"column {text_column!r} is empty")
    digest = hashlib.sha256(text.encode()).hexdigest()
    resume_id = resume_id_of(digest)
    if id_column is not None:
        resume_id = (record.get(id_column) or "").strip()
        if not resume_id:
            raise ValueError(f"column {id_column!r} (the id) is empty")
    label = check_label(record.get(label_column), f"column {label_column!r}") if label_column else None
    name = (record.get(name_column) or "").strip() if name_column else None
    return _row(text, source=source, file_type="csv", digest=digest, label=label, name=name, resume_id=resume_id)
