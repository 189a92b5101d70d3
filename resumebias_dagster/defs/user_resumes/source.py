"""Which résumés a study runs on: the setting ``resumes`` of probe_variants and name_variants."""

import enum


class ResumeSource(enum.Enum):
    """Which résumés a study runs on (an enum: a bad value is a config error naming the setting)."""

    generated = "generated"
    user = "user"


RESUMES_DESCRIPTION = (
    "generated (default): the generated base_resumes; user: your own résumés, the user_resumes asset "
    "(materialise it with a folder or csv first)"
)
