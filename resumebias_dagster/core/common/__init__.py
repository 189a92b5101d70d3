"""Helpers with no study in them: labels, strict parsing, prompts, token diffs, snapshots, plots, file errors."""
