"""The seniority study (notebooks 000, 001, 004): base résumés, style and name variants and
their validation, predictions by model, metric tables, impact ratios and plots."""
