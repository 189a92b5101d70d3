"""The section headings of a résumé, in the words and cases people write them.

A heading is a whole line: "EXPERIENCE", "Work History", "Professional Experience:",
"Employment", "Education & Training", "Technical Skills", "Profile" (Markdown's ``#`` and
``**`` are gone by the time the text is read: ``extract.markdown_to_text``). Each is keyed
by the section it opens (``EXPERIENCE``, ``EDUCATION``, ``SKILLS``, ``SUMMARY``,
``INTERESTS``, ``CONTACT``, or ``OTHER`` for a section no probe reads, such as Projects, whose
dates must not be read as positions). A line of prose that contains a heading's word is no
heading.
"""

from __future__ import annotations

import re

# Headings of more than one word, and of one, by the section they open.
_MULTI = {
    "EXPERIENCE": (
        "work experience",
        "professional experience",
        "relevant experience",
        "employment history",
        "work history",
        "career history",
        "professional background",
        "professional history",
        "experience and employment",
        "positions held",
        "industry experience",
    ),
    "EDUCATION": (
        "academic background",
        "education and training",
        "educational background",
        "education and certifications",
        "academic history",
    ),
    "SKILLS": (
        "technical skills",
        "key skills",
        "core skills",
        "skills and tools",
        "core competencies",
        "skill set",
        "areas of expertise",
        "tools and technologies",
    ),
    "SUMMARY": (
        "professional summary",
        "professional profile",
        "about me",
        "career objective",
        "career summary",
        "personal statement",
    ),
    "INTERESTS": ("hobbies and interests", "interests and hobbies"),
    "CONTACT": ("contact details", "contact information", "personal details", "personal information"),
    "OTHER": (
        "selected projects",
        "certifications and licenses",
        "honors and awards",
        "volunteer experience",
        "community involvement",
        "additional information",
        "professional development",
    ),
}
_SINGLE = {
    "EXPERIENCE": ("experience", "employment", "career"),
    "EDUCATION": ("education", "academics", "qualifications"),
    "SKILLS": ("skills", "competencies", "expertise", "tools", "technologies"),
    "SUMMARY": ("summary", "profile", "about", "objective", "overview"),
    "INTERESTS": ("interests", "hobbies"),
    "CONTACT": ("contact", "details"),
    "OTHER": (
        "projects",
        "certifications",
        "certificates",
        "licenses",
        "awards",
        "honors",
        "achievements",
        "accomplishments",
        "languages",
        "publications",
        "volunteer",
        "volunteering",
        "activities",
        "leadership",
        "references",
        "training",
        "courses",
        "memberships",
        "affiliations",
        "links",
    ),
}
HEADINGS: dict[str, str] = {p: key for key, phrases in (*_MULTI.items(), *_SINGLE.items()) for p in phrases}
# Decoration around a heading: a trailing colon, rules of dashes or equals signs, numbering.
_DECORATION = re.compile(r"^[\s#=*_~|:–—-]*(?:\d+\.\s+)?|[\s#=*_~|:–—-]*$")


def heading_words(line: str) -> str:
    """``line`` as a heading would be looked up: without decoration, "&" as "and", lower case."""
    core = _DECORATION.sub("", line)
    return " ".join(core.replace("&", " and ").split()).lower()


def section_of(line: str) -> str | None:
    """The section ``line`` opens when it is a heading (see the module docstring), else None."""
    if not line.strip() or len(line) > 60 or line.lstrip().startswith(("- ", "• ", "* ")):
        return None
    return HEADINGS.get(heading_words(line))


def is_heading(line: str) -> bool:
    return section_of(line) is not None
