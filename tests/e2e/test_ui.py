"""The Dagster UI end to end in a real browser: open the asset graph, materialise
`job_descriptions` with the UI's Materialize button, wait for the run, read its metadata.
Screenshots go to test-output/e2e/."""

import contextlib
import json
import re
import time
import urllib.request

import pytest

from resumebias_dagster.core.jd_audit.job_descriptions import load_job_descriptions

pytestmark = pytest.mark.e2e

ASSET = "job_descriptions"
RUN_TIMEOUT_S = 120
RUNS_QUERY = "query { runsOrError(limit: 10) { __typename ... on Runs { results { runId status } } } }"


def _runs(url: str) -> list[dict]:
    """Runs of the instance, newest first, from the webserver's GraphQL API."""
    request = urllib.request.Request(
        f"{url}/graphql", data=json.dumps({"query": RUNS_QUERY}).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)["data"]["runsOrError"]["results"]


def _wait_for_run(server) -> dict:
    deadline = time.monotonic() + RUN_TIMEOUT_S
    runs: list[dict] = []
    while time.monotonic() < deadline:
        runs = _runs(server.url)
        if runs and runs[0]["status"] in ("SUCCESS", "FAILURE", "CANCELED"):
            return runs[0]
        time.sleep(1)
    pytest.fail(f"the run did not finish within {RUN_TIMEOUT_S} s: {runs}\n{server.log_tail()}")


def test_materialize_from_the_asset_graph_shows_metadata(page, webserver, screenshots):
    from playwright.sync_api import expect

    jds = load_job_descriptions()

    def shot(name):
        return page.screenshot(path=str(screenshots / name), full_page=True)

    # A fresh instance greets the first visit with a newsletter dialog that covers the page.
    page.add_locator_handler(
        page.get_by_text("Join the Dagster community"), lambda: page.get_by_role("button", name="Skip").click()
    )
    try:
        page.goto(f"{webserver.url}/asset-groups")
        expect(page.get_by_text("jd_audit").first).to_be_visible(timeout=90_000)
        expect(page.get_by_text("fetching statuses")).to_have_count(0, timeout=60_000)
        shot("01-global-asset-graph.png")

        # The asset alone (it has no upstream): among its many neighbours (issue 42 added the validity and
        # pairwise assets) the graph is drawn too small for the nodes to show their status.
        page.goto(f"{webserver.url}/assets/{ASSET}?view=lineage&lineageScope=upstream")
        expect(page.get_by_text(ASSET).first).to_be_visible(timeout=60_000)
        expect(page.get_by_text("Never materialized").first).to_be_visible(timeout=60_000)
        assert _runs(webserver.url) == [], "a fresh instance has no run yet"
        shot("02-asset-graph.png")

        page.locator("button", has_text=re.compile(r"^\s*Materialize\s*$")).click()
        expect(page.get_by_text("Launched run")).to_be_visible(timeout=60_000)
        shot("03-run-launched.png")
        run = _wait_for_run(webserver)
        assert run["status"] == "SUCCESS", f"run {run['runId']} ended {run['status']}\n{webserver.log_tail()}"
        expect(page.get_by_text("Materialized", exact=True).first).to_be_visible(timeout=60_000)
        shot("04-asset-graph-materialized.png")

        page.goto(f"{webserver.url}/assets/{ASSET}?view=events")
        row_count = page.get_by_role("row").filter(has_text="dagster/row_count")
        expect(row_count).to_contain_text(str(len(jds)), timeout=60_000)
        expect(page.get_by_text(f"Materialized in run {run['runId'][:8]}")).to_be_visible()
        page.get_by_text("[Show Markdown]").click()
        expect(page.get_by_role("dialog")).to_contain_text(jds["title"].iloc[0])
        shot("05-metadata.png")
    except Exception:
        # The page as the failure left it; a dead browser must not hide the original error.
        with contextlib.suppress(Exception):
            shot("failure.png")
        raise
