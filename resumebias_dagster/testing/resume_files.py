"""Real résumé files for tests: PDFs written by hand (one column or two), DOCX via python-docx (paragraphs, tables).

pypdf reads PDFs but cannot lay out text, so ``pdf_bytes`` writes a minimal valid PDF itself:
one page per ``LINES_PER_PAGE`` lines, the standard Helvetica font in WinAnsiEncoding (so
"–", "é" and "•" survive), one ``Tj`` per résumé line and a cross-reference table with exact
byte offsets. ``scanned_pdf_bytes`` is a page with a drawing and no text (what a scan without
OCR looks like to a text extractor), ``encrypted_pdf_bytes`` a copy protected by pypdf.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

# A résumé as people write them: its sections parse, but the contact line has no city, the
# positions and schools are not "Employer | City | dates" / "School | year" lines (only the
# prompt-injection, placebo and anonymisation axes apply), and the middle initial keeps the
# surname of the e-mail address out of the name swap's reach.
FREE_FORM_RESUME = """Jane Q. Doe
jane.doe@example.com | +1 415 555 0100

SUMMARY
Backend engineer who likes tidy data pipelines and calm on-call rotations.

EXPERIENCE
Software Engineer, Acme Corp (2019 to now)
- Built the billing service in Go and Python.
- Cut the nightly batch from four hours to forty minutes.

EDUCATION
B.Sc. Computer Science, State University, 2018

SKILLS
Go, Python, PostgreSQL, Kafka
"""
LINES_PER_PAGE = 60
_FONT_SIZE = 9
_LEADING = 12


def _pdf_string(line: str) -> bytes:
    """A PDF literal string of ``line`` in WinAnsiEncoding (cp1252), ``( ) \\`` escaped."""
    raw = line.encode("cp1252")
    return b"(" + raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b")"


def _text_stream(lines: Sequence[str]) -> bytes:
    ops = [f"BT /F1 {_FONT_SIZE} Tf {_LEADING} TL 40 760 Td".encode()]
    for line in lines:
        ops.append(_pdf_string(line) + b" Tj T*" if line else b"T*")
    ops.append(b"ET")
    return b"\n".join(ops)


def _assemble(page_streams: Sequence[bytes], *, font: bool = True) -> bytes:
    """A PDF file of one page per content stream, with a correct xref table."""
    n = len(page_streams)
    font_id = 3 + 2 * n
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids ["
        + b" ".join(f"{3 + 2 * i} 0 R".encode() for i in range(n))
        + f"] /Count {n} >>".encode(),
    ]
    resources = f"/Resources << /Font << /F1 {font_id} 0 R >> >>" if font else "/Resources << >>"
    for i, stream in enumerate(page_streams):
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] {resources} /Contents {4 + 2 * i} 0 R >>".encode()
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n".encode() + stream + b"\nendstream")
    if font:
        objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for k, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{k} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n".encode() + b"0000000000 65535 f \n"
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def _column_stream(x: int, y: int, lines: Sequence[str]) -> bytes:
    ops = [f"BT /F1 {_FONT_SIZE} Tf {_LEADING} TL {x} {y} Td".encode()]
    ops += [_pdf_string(line) + b" Tj T*" if line else b"T*" for line in lines]
    ops.append(b"ET")
    return b"\n".join(ops)


def pdf_columns_bytes(top: str, left: str, right: str) -> bytes:
    """A one-page PDF: ``top`` across the page, then ``left`` (a narrow sidebar) and ``right``
    side by side below it, each column written whole, as word processors write a two-column
    page (so a text extractor returns the sidebar, then the main column)."""
    head = top.rstrip("\n").split("\n")
    below = 760 - _LEADING * (len(head) + 1)
    streams = [_column_stream(40, 760, head), _column_stream(40, below, left.rstrip("\n").split("\n"))]
    streams.append(_column_stream(230, below, right.rstrip("\n").split("\n")))
    return _assemble([b"\n".join(streams)])


def pdf_bytes(text: str) -> bytes:
    """A valid PDF showing ``text`` line by line (``LINES_PER_PAGE`` lines a page)."""
    lines = text.rstrip("\n").split("\n")
    pages = [lines[i : i + LINES_PER_PAGE] for i in range(0, len(lines), LINES_PER_PAGE)] or [[]]
    return _assemble([_text_stream(p) for p in pages])


def scanned_pdf_bytes() -> bytes:
    """A one-page PDF with a drawing and no text layer, as a scan looks before OCR."""
    return _assemble([b"0.2 g 40 600 300 150 re f 0 g 40 560 m 500 560 l S"], font=False)


def encrypted_pdf_bytes(text: str, user_password: str = "x", owner_password: str | None = None) -> bytes:
    """``pdf_bytes(text)`` protected by pypdf; an empty ``user_password`` opens without one."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(text))))
    writer.encrypt(user_password=user_password, owner_password=owner_password)
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def truncated_pdf_bytes(text: str, keep: float = 0.5) -> bytes:
    """The first ``keep`` share of ``pdf_bytes(text)``: a download cut short."""
    data = pdf_bytes(text)
    return data[: int(len(data) * keep)]


def docx_bytes(
    text: str,
    *,
    header: str | None = None,
    table: Sequence[Sequence[str]] | None = None,
    table_after: int = 1,
) -> bytes:
    """A Word document with one paragraph per line of ``text``.

    ``header``: text put in the page header (as many templates place the name there);
    ``table``: rows of cells inserted as a table after the first ``table_after`` lines.
    """
    from docx import Document

    doc = Document()
    if header is not None:
        doc.sections[0].header.paragraphs[0].text = header
    lines = text.rstrip("\n").split("\n")
    for k, line in enumerate(lines):
        if table is not None and k == table_after:
            grid = doc.add_table(rows=len(table), cols=max(len(r) for r in table))
            for r, row in enumerate(table):
                for c, cell in enumerate(row):
                    grid.cell(r, c).text = cell
        doc.add_paragraph(line)
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def docx_blocks_bytes(blocks: Sequence[str | Sequence[Sequence[str]]]) -> bytes:
    """A Word document of ``blocks`` in order: a string is one paragraph, a list of rows of
    cells is a table (as résumé templates lay out contact lines and positions)."""
    from docx import Document

    doc = Document()
    for block in blocks:
        if isinstance(block, str):
            doc.add_paragraph(block)
            continue
        grid = doc.add_table(rows=len(block), cols=max(len(r) for r in block))
        for r, row in enumerate(block):
            for c, cell in enumerate(row):
                grid.cell(r, c).text = cell
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def write(path: str | Path, data: bytes | str, encoding: str = "utf-8") -> Path:
    """Write ``data`` (text in ``encoding``) to ``path``, creating folders; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode(encoding) if isinstance(data, str) else data)
    return path
