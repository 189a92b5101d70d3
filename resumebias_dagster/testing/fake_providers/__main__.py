"""``python -m resumebias_dagster.testing.fake_providers --wire openai ...``: one server in its own process."""

from resumebias_dagster.testing.fake_providers.cli import main

main()
