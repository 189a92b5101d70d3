"""Study 003's vocabulary: "injection probes" are its demographic axes; the arm that adds hidden
instructions to a résumé is the prompt-injection arm, and nothing else may call it "injection"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "resumebias_dagster"
# "injection" alone, not "prompt injection" / "prompt_injection" / "promptInjection", nor
# study 003's "injection probes" or an occupation's "injection molding".
BARE = re.compile(r"(?<![Pp]rompt[ _-])(?<![A-Za-z])[Ii]njection(?!\s+(?:probes?|molding))")


def texts():
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix in {".py", ".yaml", ".txt", ".md"}:
            yield path
    yield REPO / "README.md"


@pytest.mark.parametrize("path", list(texts()), ids=lambda p: str(p.relative_to(REPO)))
def test_no_bare_injection_for_the_prompt_injection_arm(path):
    hits = [
        f"{path.name}:{i}: {line.strip()[:120]}"
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if BARE.search(line)
    ]
    assert not hits, "\n".join(hits)


def test_the_rule_catches_the_old_names():
    for old in ("injection_mean_delta", "arm: injection", "judge_injection", "three injections"):
        assert BARE.search(old), old
    for new in (
        "prompt_injection_mean_delta",
        "promptInjection_explicit",
        "prompt injection",
        "study 003's injection probes",
        "injection molding",
    ):
        assert not BARE.search(new), new


def test_the_arm_and_the_column_carry_the_new_name():
    from resumebias_dagster.core.jd_audit.fit_stats import MODEL_SUMMARY_COLUMNS
    from resumebias_dagster.core.jd_audit.probes import ARMS, load_probe_axes

    assert "prompt_injection" in ARMS and "injection" not in ARMS
    assert "prompt_injection_mean_delta" in MODEL_SUMMARY_COLUMNS
    assert load_probe_axes().arms()["promptInjection"] == "prompt_injection"
