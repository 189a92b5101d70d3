"""The job-description audit (study 003): job descriptions, probe variants, fit scoring, fit statistics, the judge."""
