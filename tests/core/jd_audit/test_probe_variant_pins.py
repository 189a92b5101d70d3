"""The generator's résumés and their probe variants keep their exact texts (issue 39).

The probes read résumés through ``core/resumes/reader.py``, which reads every common layout;
the generator's own layout must come out of it exactly as before, so these digests of the
variants (and of the timeline issues found in them) were taken before the reader replaced the
generator-only parser, and must not move.
"""

import hashlib
import re

import pandas as pd
import pytest

from resumebias_dagster.core.jd_audit.probes import probe_variants, select_probe_resumes
from resumebias_dagster.core.resumes.timeline import timeline_issues
from resumebias_dagster.core.seniority.generation import generate_resumes

# resume_id -> digest of its variants (ids, names and texts), generate_resumes(3, seed=0) and
# generate_resumes(2, seed=5, id_prefix="s"): every occupation level, internships, master's degrees.
SMALL = {
    "r0000": "acaa68ed5b05e150",
    "r0001": "573cdc563b3f36dc",
    "r0002": "0b002311bb475e96",
    "r0003": "d2366f65cdce8305",
    "r0004": "e641b217afa98f59",
    "r0005": "fd07ef0be9eb40b0",
    "r0006": "27f9d6118c60eba8",
    "r0007": "f44370cc8b2ae261",
    "r0008": "bfa6d6472e537dbf",
    "s0000": "21952be2926ac0bb",
    "s0001": "744df49cb15db7f5",
    "s0002": "bbaa91582ec54dd2",
    "s0003": "db76c69d08931936",
    "s0004": "6d2efbd5a71bdc92",
    "s0005": "4958eb743c5c8582",
}


def digest(rows: pd.DataFrame) -> str:
    h = hashlib.sha256()
    for r in rows.itertuples(index=False):
        h.update(f"{r.resume_id}\t{r.variant}\t{r.name}\t{r.text}\x00".encode())
    return h.hexdigest()[:16]


@pytest.fixture(scope="module")
def big_variants():
    # 58 résumés of every occupation (those with a degree in a level's own year left out: that
    # level would leave them unchanged, which stops the arm).
    big = generate_resumes(20, seed=11)
    return probe_variants(big[~big["graduation_year"].isin([2005, 1998])])


def test_the_variants_of_generated_resumes_keep_their_texts():
    base = pd.concat([generate_resumes(3, seed=0), generate_resumes(2, seed=5, id_prefix="s")], ignore_index=True)
    variants = probe_variants(base)
    got = {rid: digest(rows) for rid, rows in variants.groupby("resume_id", sort=False)}
    assert got == SMALL


def test_many_generated_resumes_and_the_default_arm_keep_their_variants(big_variants):
    assert (len(big_variants), digest(big_variants)) == (2262, "bcc35cdb221fa636")
    arm = probe_variants(select_probe_resumes(generate_resumes()))
    assert (len(arm), digest(arm)) == (351, "d4177201e8746d32")


def test_the_timeline_reads_the_generated_variants_as_before(big_variants):
    keys = [(v, [i.key for i in timeline_issues(t)]) for v, t in zip(big_variants["variant"], big_variants["text"])]
    assert hashlib.sha256(repr(keys).encode()).hexdigest()[:16] == "45d51e785b3451ea"


def perturbed(text: str) -> list[str]:
    """Ways a generated résumé's dates stop hanging together: the degree decades earlier, the
    current position ended, the summary's years wrong, the second position run into the first."""
    lines = text.split("\n")
    out = [re.sub(r"(?m)^([^|\n]+ \| )(\d{4})$", r"\g<1>1990", text, count=1)]
    out.append(text.replace("– Present", "– Jan 2024", 1))
    out.append(re.sub(r"\d+ years of professional", "40 years of professional", text))
    dated = [i for i, line in enumerate(lines) if line.count(" | ") == 2 and " – " in line]
    if len(dated) > 1:
        moved = list(lines)
        moved[dated[1]] = re.sub(r"– [A-Z][a-z]{2} \d{4}$", "– Dec 2024", moved[dated[1]])
        out.append("\n".join(moved))
    return out


def test_the_timeline_finds_the_same_problems_in_perturbed_generated_resumes(big_variants):
    baselines = big_variants.loc[big_variants["variant"] == "baseline", "text"]
    found = [[(i.key, i.message) for i in timeline_issues(t)] for text in baselines for t in perturbed(text)]
    assert sum(map(len, found)) == PERTURBED_ISSUES
    assert hashlib.sha256(repr(found).encode()).hexdigest()[:16] == PERTURBED_DIGEST


PERTURBED_ISSUES = 332
PERTURBED_DIGEST = "29baf3abb222f792"
