"""Your own résumés: files read into a table, and which probes apply to each (issue 28, first part)."""

# Who answers for this group's assets: every asset loaded from this folder gets it (definitions.py).
OWNER = "team:user-resumes"
