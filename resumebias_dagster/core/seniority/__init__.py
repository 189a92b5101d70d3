"""The seniority study (notebooks 000, 001, 004): résumés, style and name variants, the seniority task, metrics."""
