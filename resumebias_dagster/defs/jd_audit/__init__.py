"""The job-description audit (study 003): job descriptions, probe variants, fit scores by
model x JD, effects, the LLM-as-judge, impact ratios and plots."""

# Who answers for this group's assets: every asset loaded from this folder gets it (definitions.py).
OWNER = "team:jd-audit"
