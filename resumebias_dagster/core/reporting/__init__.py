"""The shareable audit report: one self-contained HTML file for readers outside the team."""
