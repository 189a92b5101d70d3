"""``resumebias demo``: a first audit on shipped sample data (``command.py``), the screener it
audits (``screener.py``) and the sample files it writes for the analyze commands (``samples.py``)."""
