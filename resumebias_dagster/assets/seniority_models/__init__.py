"""The fine-tuned classifiers of the seniority study: a training set kept apart from the
evaluation résumés, and one classifier per base model."""
