"""Pure logic of the audit: no Dagster imports, no heavy imports at module level."""
