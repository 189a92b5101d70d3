"""The text of a résumé file: PDF (pypdf), Word .docx (python-docx), Markdown and plain text.

Every reader returns the text normalised by ``normalise_text`` (line breaks kept, spaces
tidied) or raises ``ExtractionError`` saying what is wrong with the file and what to do
about it; ``user_files`` turns those into one problem row per file and goes on with the rest.

* PDF: the text layer of every page, in content-stream order (``PageObject.extract_text()``).
  A PDF protected by a password is refused unless it opens with the empty password (an
  owner password that only restricts printing or copying); a damaged file is refused with
  what pypdf reported; a PDF without a text layer (a scan) is refused with "OCR it first".
  Blank lines between paragraphs are not in a PDF's text layer, so they do not come back.
* DOCX: the paragraphs and tables of the body in document order, with the first page
  header's paragraphs in front (many templates put the name there). A table row becomes
  one line, its cells joined with " | "; merged cells count once. Text boxes and footnotes
  are not read; Word's list bullets are numbering, not text, so they are not in the text.
* Markdown and plain text: UTF-8 (a BOM is allowed); anything else is refused, naming the
  line of the first byte that is not UTF-8. Markdown loses its heading marks, ``**``/``__``
  emphasis and back-ticks, and ``* ``/``+ `` bullets become ``- ``.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import logging
import re
import time
import unicodedata
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

SUFFIXES = (".pdf", ".docx", ".md", ".txt")
# Larger files are refused before they are parsed: no résumé needs more.
MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_DOCX_UNPACKED_BYTES = 200 * 1024 * 1024  # a .docx is a ZIP: its parts, unpacked
MAX_PDF_PAGES = 50
# Caps on the work one file may take (issue 40: an 8 KB PDF whose pages share one Flate stream
# took 23 s, a 600 KB DOCX 914 s and 3.4 GB): its text, its DOCX XML unpacked, its seconds.
MAX_TEXT_CHARS = 200_000
MAX_DOCX_XML_BYTES = 20 * 1024 * 1024
MAX_EXTRACT_S = 10.0


class _Budget:
    """The characters and seconds one file's extraction has used; ``ExtractionError`` past either."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.chars = 0

    def add(self, text: str) -> None:
        """Count ``text`` read so far (a page, a paragraph, a table row), and check both caps."""
        self.chars += len(text)
        if self.chars > MAX_TEXT_CHARS:
            raise ExtractionError(f"more than {MAX_TEXT_CHARS:,} characters of text; a résumé has fewer (not read)")
        if time.monotonic() - self.started > MAX_EXTRACT_S:
            raise ExtractionError(f"still not read after {MAX_EXTRACT_S:g} s; a résumé reads in well under a second")


# A text with fewer letters and digits than this is no résumé (a scan's page number, a stray header).
MIN_TEXT_CHARS = 40
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # .doc, and every password-protected Office file


class ExtractionError(ValueError):
    """A file whose text cannot be taken; the message says why and what to do."""


# --------------------------------------------------------------------------- normalising

_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200a\u202f\u205f\u3000]+")
_INVISIBLE = re.compile(r"[\u00ad\u200b-\u200d\u2060\ufeff]|[\x00-\x08\x0b\x0e-\x1f\x7f]")
_BREAKS = re.compile(r"\r\n|[\r\f\v\u0085\u2028\u2029]")
_LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"})


def normalise_text(text: str) -> str:
    """``text`` with line breaks as ``\\n``, unicode in NFC, ligatures spelled out, invisible
    characters dropped, runs of spaces (tabs, no-break spaces) one space, every line stripped,
    at most one blank line in a row, none at either end, and one final ``\\n``. Line breaks
    stay: the first line is usually the name, and the probes read the résumé line by line."""
    text = unicodedata.normalize("NFC", _BREAKS.sub("\n", text)).translate(_LIGATURES)
    text = _INVISIBLE.sub("", text)
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n" if out else ""


def _substantial(text: str) -> bool:
    return sum(c.isalnum() for c in text) >= MIN_TEXT_CHARS


# --------------------------------------------------------------------------- plain text


def decode_utf8(data: bytes) -> str:
    """``data`` as UTF-8 (with or without a BOM); ``ExtractionError`` naming the line of the
    first byte that is not UTF-8 otherwise."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise ExtractionError("UTF-16 text; save it as UTF-8")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ExtractionError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}; Latin-1 or Windows-1252 perhaps); "
            "save it as UTF-8"
        ) from None
    if "\x00" in text:
        raise ExtractionError("contains NUL bytes: a binary file, not text")
    return text


_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_MD_BULLET = re.compile(r"^(\s*)[*+]\s+")
# Bold: the text between two markers never holds the marker's character, so a line of many
# unclosed "**" is read in linear time (".+?" made 32 KB of "**x " take 10 s, issue 40).
_MD_EMPHASIS = re.compile(r"\*\*(?=[^\s*])([^*]+?)(?<=[^\s*])\*\*|__(?=[^\s_])([^_]+?)(?<=[^\s_])__")
_MD_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")


def markdown_to_text(text: str) -> str:
    """Markdown with its markup for headings, emphasis, code and bullets taken off."""
    lines = []
    for line in text.split("\n"):
        if _MD_RULE.match(line):
            lines.append("")
            continue
        if m := _MD_HEADING.match(line):
            line = m.group(1)
        line = _MD_BULLET.sub(r"\1- ", line)
        line = _MD_EMPHASIS.sub(lambda m: m.group(1) or m.group(2), line).replace("`", "")
        lines.append(line)
    return "\n".join(lines)


# --------------------------------------------------------------------------- PDF


@contextlib.contextmanager
def _pypdf_messages() -> Iterator[list[str]]:
    """What pypdf logs while reading (repairs of a damaged file), collected instead of printed."""
    found: list[str] = []

    class _Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            found.append(record.getMessage())

    logger = logging.getLogger("pypdf")
    handler = _Collect(logging.WARNING)
    logger.addHandler(handler)
    try:
        yield found
    finally:
        logger.removeHandler(handler)


def _reported(messages: list[str]) -> str:
    distinct = list(dict.fromkeys(m.strip() for m in messages if m.strip()))
    return f"; pypdf reported: {'; '.join(distinct[:3])}" if distinct else ""


def pdf_text(data: bytes) -> str:
    """The text layer of a PDF file's pages, normalised (see the module docstring)."""
    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    if b"%PDF-" not in data[:1024]:
        raise ExtractionError("not a PDF (no %PDF- header): a damaged download, or another format renamed to .pdf")
    with _pypdf_messages() as messages:
        try:
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted:
                try:
                    opened = reader.decrypt("")
                except (DependencyError, NotImplementedError) as exc:
                    raise ExtractionError(
                        f"encrypted in a way pypdf cannot open here ({exc}); save an unprotected copy"
                    ) from None
                if not opened:
                    raise ExtractionError(
                        "encrypted with a password; save an unprotected copy (e.g. print it to a new PDF) and "
                        "put that in the folder"
                    )
            if len(reader.pages) > MAX_PDF_PAGES:
                raise ExtractionError(f"{len(reader.pages)} pages; a résumé has at most {MAX_PDF_PAGES}")
            pages: list[str] = []
            budget = _Budget()
            for page in reader.pages:
                pages.append(page.extract_text() or "")
                budget.add(pages[-1])
        except ExtractionError:
            raise
        except Exception as exc:  # pypdf raises many kinds of error on a damaged file
            raise ExtractionError(
                f"damaged or not a readable PDF ({type(exc).__name__}: {exc}{_reported(messages)})"
            ) from None
    text = normalise_text("\n".join(pages))
    if not _substantial(text):
        raise ExtractionError(
            f"no text layer ({len(pages)} page{'s' if len(pages) != 1 else ''}, "
            f"{sum(c.isalnum() for c in text)} letters or digits): a scan or an image; OCR it first "
            f"(e.g. ocrmypdf) and put the OCR'd PDF in the folder{_reported(messages)}"
        )
    return text


# --------------------------------------------------------------------------- DOCX


def _table_lines(table: Any, budget: _Budget) -> list[str]:
    lines: list[str] = []
    for row in table.rows:
        cells, seen = [], set()
        for cell in row.cells:
            if id(cell._tc) in seen:  # a merged cell is returned once per grid column
                continue
            seen.add(id(cell._tc))
            text = " ".join(p.text.strip() for p in cell.paragraphs if p.text.strip())
            if text:
                cells.append(text)
        lines.append(" | ".join(cells))
        budget.add(lines[-1])
    return lines


def _blocks_lines(blocks: Iterable[Any], budget: _Budget) -> list[str]:
    from docx.table import Table

    lines: list[str] = []
    for block in blocks:
        if isinstance(block, Table):
            lines += _table_lines(block, budget)
        else:
            lines.append(block.text)
            budget.add(block.text)
    return lines


def docx_text(data: bytes) -> str:
    """The text of a Word .docx file, normalised (see the module docstring)."""
    import docx

    if data.startswith(_OLE_MAGIC):
        raise ExtractionError(
            "a password-protected Word file or an old .doc renamed to .docx; save an unprotected .docx or a PDF"
        )
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            unpacked = sum(info.file_size for info in package.infolist())
            xml = sum(info.file_size for info in package.infolist() if info.filename.endswith((".xml", ".rels")))
    except zipfile.BadZipFile:
        raise ExtractionError("damaged or not a Word .docx file (not a ZIP package)") from None
    if unpacked > MAX_DOCX_UNPACKED_BYTES:
        raise ExtractionError(f"unpacks to {unpacked} bytes; more than {MAX_DOCX_UNPACKED_BYTES} is no résumé")
    if xml > MAX_DOCX_XML_BYTES:
        raise ExtractionError(f"its XML unpacks to {xml:,} bytes; more than {MAX_DOCX_XML_BYTES:,} is no résumé")
    budget = _Budget()
    try:
        document = docx.Document(io.BytesIO(data))
        header = document.sections[0].header if document.sections else None
        lines = _blocks_lines(header.iter_inner_content(), budget) if header is not None else []
        lines += _blocks_lines(document.iter_inner_content(), budget)
    except ExtractionError:
        raise
    except Exception as exc:  # python-docx and lxml raise many kinds of error on a damaged package
        raise ExtractionError(f"damaged or not a Word .docx file ({type(exc).__name__}: {exc})") from None
    text = normalise_text("\n".join(lines))
    if not _substantial(text):
        raise ExtractionError("no text in the document body or header (text boxes are not read)")
    return text


# --------------------------------------------------------------------------- any file


def extract_bytes(data: bytes, suffix: str) -> str:
    """The normalised text of a file's ``data``, read as its ``suffix`` (``SUFFIXES``) says."""
    suffix = suffix.lower()
    if len(data) > MAX_FILE_BYTES:
        raise ExtractionError(f"{len(data)} bytes; a résumé file has at most {MAX_FILE_BYTES}")
    if suffix == ".pdf":
        return pdf_text(data)
    if suffix == ".docx":
        return docx_text(data)
    if suffix in (".md", ".txt"):
        raw = decode_utf8(data)
        _Budget().add(raw)
        text = normalise_text(markdown_to_text(raw) if suffix == ".md" else raw)
        if not _substantial(text):
            raise ExtractionError("empty, or too little text for a résumé")
        return text
    raise ExtractionError(f"not a résumé file type ({suffix or 'no extension'}); read are {', '.join(SUFFIXES)}")


def extract_text(path: str | Path) -> str:
    """The normalised text of one résumé file; ``ExtractionError`` naming the file otherwise."""
    path = Path(path)
    try:
        return extract_bytes(path.read_bytes(), path.suffix)
    except ExtractionError as exc:
        raise ExtractionError(f"{path.name}: {exc}") from None
    except OSError as exc:
        raise ExtractionError(f"{path.name}: cannot be read ({exc.strerror or exc})") from None
