"""Your own résumés: files read into a table, and which probes apply to each (issue 28, first part)."""
