"""The résumé itself, shared by both studies: its content, its text layout, its checks.

The seniority study generates résumés and the job-description audit edits them; both work
on the same text, so what that text looks like is defined once, here, beneath both:

* ``layout``: the facts of a résumé (``ResumeContent``) and how ``render_resume`` writes them
  (the generator's layout).
* ``reader``: what the probes need of any résumé's text (the generator's or a user's PDF, DOCX,
  Markdown or text): the name, contact details, sections, positions, gaps and degrees, each with
  its place in the text (``fields``, built from ``contact``, ``sections``, ``dates``, ``entries``).
* ``timeline``: whether the dates of a written résumé hang together.
* ``names``: a person's name in the text: its tokens, and swapping it for another.

Nothing here imports either study (``tests/test_layout.py`` holds the order).
"""
