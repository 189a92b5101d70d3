"""A person's name in a résumé's text: the tokens it contributes, and swapping it for another.

The seniority study's name variants (``core/seniority/names.py``) and the job-description
audit's name edits (``core/jd_audit/probes/edits.py``) both swap names with ``replace_person``
and check what survived with ``name_tokens``.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[A-Za-z0-9]+")


def name_tokens(first: str, last: str) -> set[str]:
    """Every lower-case alphanumeric token a name contributes to a résumé.

    Covers the words of the name and their concatenations (``firstlast`` and ``lastfirst``,
    as in e-mail addresses and LinkedIn slugs); separated forms such as ``first.last`` or
    ``first-last`` tokenise into the words themselves.
    """
    firsts = [t.lower() for t in _TOKEN.findall(first)]
    lasts = [t.lower() for t in _TOKEN.findall(last)]
    return set(firsts) | set(lasts) | {"".join(firsts) + "".join(lasts), "".join(lasts) + "".join(firsts)}


def _cased(new: str, found: str) -> str:
    if found.isupper() and len(found) > 1:
        return new.upper()
    if found.islower():
        return new.lower()
    return new


def replace_person(text: str, old_first: str, old_last: str, new_first: str, new_last: str) -> str:
    """Replace a person's name everywhere in ``text``, keeping each occurrence's case form.

    Handles "First Last", "LAST, First", e-mail local parts (``first.last``, ``first_last``,
    ``firstlast``, ``last.first``), LinkedIn slugs and lone first or last names. Raises
    ``ValueError`` if the full name does not occur, if the new name shares a token with the
    old one (the check below could not work), or if a token of the old name survives.
    """
    old_first, old_last = old_first.strip(), old_last.strip()
    if not old_first or not old_last:
        raise ValueError("the original first and last name must both be non-empty")
    old, new = f"{old_first} {old_last}", f"{new_first} {new_last}"
    shared = (name_tokens(old_first, old_last) & name_tokens(new_first, new_last)) - {""}
    if shared:
        raise ValueError(f"the new name {new!r} shares {sorted(shared)} with {old!r}")
    # Letters only as boundaries: "greg.smith", "smith07" and "Smith," all contain "smith".
    fst, lst = re.escape(old_first), re.escape(old_last)
    full = re.compile(rf"(?<![A-Za-z])(?:{fst}\s+{lst}|{lst},\s*{fst})(?![A-Za-z])", re.IGNORECASE)
    if not full.search(text):
        raise ValueError(f"the name {old!r} does not occur in the text")
    pattern = re.compile(
        rf"(?<![A-Za-z])(?:(?P<fl_f>{fst})(?P<fl_l>{lst})|(?P<lf_l>{lst})(?P<lf_f>{fst})|(?P<f>{fst})|(?P<l>{lst}))"
        r"(?![A-Za-z])",
        re.IGNORECASE,
    )

    new_for = {"fl_f": new_first, "fl_l": new_last, "lf_l": new_last, "lf_f": new_first, "f": new_first, "l": new_last}

    def repl(m: re.Match) -> str:
        return "".join(_cased(new_for[g], found) for g, found in m.groupdict().items() if found is not None)

    out = pattern.sub(repl, text)
    # Each word of the old name too ("Q. Doe" leaves "doe" in jane.doe@); an initial is too short to tell.
    words = [re.escape(w) for w in _TOKEN.findall(f"{old_first} {old_last}") if len(w) > 1]
    left = re.search(rf"(?<![A-Za-z])(?:{'|'.join([fst, lst, *words])})(?![A-Za-z])", out, re.IGNORECASE)
    if left:
        raise ValueError(f"{left.group(0)!r} of the name {old!r} is still in the text after replacement")
    return out
