"""Audits over time (issue 44): snapshots of completed audits (``store``) and what changed
between two of them (``changes``). No Dagster import."""
