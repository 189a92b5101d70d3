"""The résumé itself, shared by both studies: its content, its text layout, its checks.

The seniority study generates résumés and the job-description audit edits them; both work
on the same text, so what that text looks like is defined once, here, beneath both:

* ``layout``: the facts of a résumé (``ResumeContent``), how ``render_resume`` writes them,
  and how ``parse_layout`` reads the written text back; one set of line formats serves both.
* ``timeline``: whether the dates of a written résumé hang together.
* ``names``: a person's name in the text: its tokens, and swapping it for another.

Nothing here imports either study (``tests/test_layout.py`` holds the order).
"""
