"""The job-description audit (study 003): job descriptions, probe variants, fit scores by
model x JD, effects, the LLM-as-judge, impact ratios and plots."""
