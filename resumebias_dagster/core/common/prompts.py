"""Prompt templates, kept as packaged catalog data (``catalog/prompts/<name>.txt``).

A user catalog folder can override a template with a file of the same name.
"""

from __future__ import annotations

import os
import string

from resumebias_dagster.catalog import CatalogError, catalog_path

SENIORITY_PROMPT = "seniority_classification"
# The seniority study sends at most this many characters of résumé text to every model.
RESUME_CHAR_CAP = 8000
# The placeholders a template must use, for prompts whose callers fill them; a user
# override without them would silently send prompts without the résumé.
EXPECTED_FIELDS = {SENIORITY_PROMPT: {"resume_text"}}


def load_prompt(
    name: str, catalog_dir: str | os.PathLike | None = None, fields: set[str] | frozenset[str] | None = None
) -> str:
    """The template text of prompt ``name`` (with or without ``.txt``).

    ``fields``: the placeholders the template must use exactly (default: ``EXPECTED_FIELDS``
    for known prompts, anything for others).
    """
    stem = name.removesuffix(".txt")
    filename = f"{stem}.txt"
    path = catalog_path(f"prompts/{filename}", catalog_dir)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    # The template ends where the model's answer begins; an editor's final newline would
    # change the next token, so it is dropped.
    text = text.rstrip("\r\n")
    try:
        found = {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}
    except ValueError as exc:
        raise CatalogError(f"{path}: not a valid template ({exc}); write a literal brace as {{{{ or }}}}") from exc
    expected = set(fields) if fields is not None else EXPECTED_FIELDS.get(stem)
    if expected is not None and found != expected:
        wanted = ", ".join(f"{{{f}}}" for f in sorted(expected))
        raise CatalogError(f"{path}: the template must use exactly the fields {wanted}, found {sorted(found)}")
    return text


def seniority_prompt(resume_text: str, template: str) -> str:
    """Fill ``template`` with the résumé text capped as the seniority study does."""
    return template.format(resume_text=resume_text[:RESUME_CHAR_CAP])
