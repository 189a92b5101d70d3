"""Asset group `report`: the shareable audit report."""

# Who answers for this group's assets: every asset loaded from this folder gets it (definitions.py).
OWNER = "team:report"
