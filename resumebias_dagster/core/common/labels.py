"""Label vocabularies shared by every stage of the seniority study."""

SENIORITY_LEVELS = ("junior", "mid", "senior")
SENIORITY_RANK = {"junior": 0, "mid": 1, "senior": 2}
# The level words a generated résumé must never contain (its seniority is carried by facts).
LEVEL_WORDS = r"(?i)\b(?:junior|senior|mid|mid-level|entry[- ]level)\b"
# Predictions that carry no seniority: excluded from rates, counted on their own.
INVALID_PREDICTIONS = ("unknown", "error")
PREDICTION_VALUES = SENIORITY_LEVELS + INVALID_PREDICTIONS

STYLES = ("neutral", "overstated", "understated")
DEMOGRAPHICS = (
    "caucasian_male",
    "caucasian_female",
    "african_american_male",
    "african_american_female",
)
# variant_kind column of seniority_predictions: which experiment a row belongs to.
VARIANT_KINDS = {"style": STYLES, "demographic": DEMOGRAPHICS}


def race_of(demographic: str) -> str:
    return "african_american" if demographic.startswith("african_american") else "caucasian"


def gender_of(demographic: str) -> str:
    return "female" if demographic.endswith("female") else "male"


# How a name variant swaps the name: in the whole text, or on the name line only (notebook 004).
NAME_SCOPES = ("everywhere", "first_line")
# How the versions of one résumé are compared for similarity (notebook 004).
SIMILARITY_MEASURES = ("tfidf", "minilm")
# The judge's verdict on a cell, in the order of study 003's stability matrix, and its confidence.
VERDICTS = ("bias", "justified", "mixed")
CONFIDENCES = ("high", "medium", "low")
