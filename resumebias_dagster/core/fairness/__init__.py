"""Fairness measures HR audits are held to (selection rates, impact ratios), for both studies."""
