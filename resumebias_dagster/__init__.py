"""Audits AI models for bias in résumé screening, as Dagster software-defined assets."""
