"""The ranking task: the same base résumé under one name per perceived group, in rotated
orders, ranked by each model for each job description; selection rates, impact ratios and
position bias of the rankings."""

# Who answers for this group's assets: every asset loaded from this folder gets it (definitions.py).
OWNER = "team:ranking"
