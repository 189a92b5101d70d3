"""The fine-tuned classifiers of the seniority study: a training set kept apart from the
evaluation résumés, and one classifier per base model."""

# Who answers for this group's assets: every asset loaded from this folder gets it (definitions.py).
OWNER = "team:seniority-models"
