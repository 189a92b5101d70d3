"""The seniority study (notebooks 000, 001, 004): base résumés, style and name variants and
their validation, predictions by model, metric tables, impact ratios and plots."""

# Who answers for this group's assets: every asset loaded from this folder gets it (definitions.py).
OWNER = "team:seniority-study"
