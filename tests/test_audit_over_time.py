"""Issue 44's "Done when": two audits of a planted scoring endpoint (kind http, a real HTTP server
on 127.0.0.1) whose version header changes between them and whose name penalty doubles.

300 résumés in ten layouts (PDF, DOCX, Markdown, text), each probed with four groups' names and a
career gap, are audited with `resumebias run --config`. The sensor's probe reads the tool's version
header; when the version changes it asks for the tool's fit partitions again, and the re-run calls
the tool afresh (a new epoch in every request key). The second audit's `audit_changes` finds the
doubled penalty on Black women's names beyond noise (and the sex and race contrasts and the impact
ratios it is part of) and calls every other probe finding and impact ratio unchanged: 300 résumés,
above the 264 a change carried by a few résumés needs to have shown. The validity sets, on the
design's three generated résumés, stay not decided.
"""

import json
import re

import duckdb
import yaml

from resumebias_dagster.automation import build_model_alias_sensor
from resumebias_dagster.cli import main
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.testing.fake_providers import FakeProviderServer
from resumebias_dagster.testing.fake_providers.scorer import resume_of, score_reply
from resumebias_dagster.testing.processes import resumebias_env, run_audit_file
from resumebias_dagster.testing.resume_corpus import corpus, write_corpus
from resumebias_dagster.testing.sensors import requested, tick

PACKAGED_AXES = "resumebias_dagster/catalog/probe_axes.yaml"
GROUPS = ("white_male", "white_female", "black_male", "black_female")
JD = "staff-software-engineer"
SCORE_CUT = 3.5


def _catalog(folder):
    """Four groups' names (the packaged pools) and the two-year career gap; one job description."""
    axes = yaml.safe_load(open(PACKAGED_AXES, encoding="utf-8"))
    names = axes["axes"]["firstName"]
    names["levels"] = {g: names["levels"][g] for g in GROUPS}
    names["groups"] = {g: names["groups"][g] for g in GROUPS}
    gap = axes["axes"]["careerGap"]
    gap["levels"] = {"caregiving": gap["levels"]["caregiving"]}
    axes["axes"] = {"firstName": names, "careerGap": gap}
    folder.mkdir()
    (folder / "probe_axes.yaml").write_text(yaml.safe_dump(axes, sort_keys=False), encoding="utf-8")
    design = {"resumes": {"occupation": "software_engineer", "levels": ["junior", "mid", "senior"], "per_level": 1}}
    (folder / "fit_design.yaml").write_text(yaml.safe_dump({**design, "job_descriptions": [JD]}), encoding="utf-8")
    return names["levels"]["black_female"]


class PlantedScorer:
    """The packaged scorer (keyword overlap, a career-gap penalty) that also takes ``penalty``
    points off a résumé carrying one of the names in ``names``, reporting ``version``."""

    def __init__(self, names):
        self.names = re.compile("|".join(re.escape(n) for n in names))
        self.version, self.penalty = "2026.1", 0.5

    def __call__(self, request) -> str:
        reply = score_reply(request.body)
        if self.names.search(resume_of(request.body)):
            reply["result"]["score"] = round(reply["result"]["score"] - self.penalty, 2)
        return json.dumps(reply)


def _changes(data):
    files = [p for p in data.rglob("*.duckdb") if p.name != "audit_history.duckdb"]
    for path in files:
        with duckdb.connect(str(path), read_only=True) as con:
            found = con.execute(
                "SELECT table_schema FROM information_schema.tables WHERE table_name = 'audit_changes'"
            ).fetchall()
            if found:
                return con.execute(f"SELECT * FROM {found[0][0]}.audit_changes").df()
    raise AssertionError(f"no audit_changes table in {files}")


def test_a_new_version_whose_name_penalty_doubled_is_reaudited_and_the_change_found(tmp_path, capsys, monkeypatch):
    folder = tmp_path / "audit"
    write_corpus(folder / "resumes", corpus(per_layout=30))
    scorer = PlantedScorer(_catalog(folder / "catalog"))
    data = tmp_path / "data"
    with FakeProviderServer("scorer", answer=scorer, resolved_model=lambda _: scorer.version, record=False) as server:
        entry = {
            "name": "vendor-screener",
            "kind": "http",
            "url": server.base_url,
            "body": '{"resume": {{ resume | tojson }}, "job_description": {{ job_description | tojson }}}',
            "answer": {"score": "$.result.score", "recommend": "$.result.decision"},
            "version": {"header": "X-Model-Version"},
            "max_concurrency": 8,
        }
        (folder / "models.yaml").write_text(yaml.safe_dump({"models": [entry]}), encoding="utf-8")
        audit = {
            "models_file": "models.yaml",
            "catalog_dir": "catalog",
            "assets": {
                "user_resumes": {"folder": "resumes"},
                "probe_variants": {"resumes": "user"},
                # The scorer gives 2 to 5 points: selected at 3.5 or more, its impact ratios are defined.
                "fit_verdicts": {"score_cut": SCORE_CUT},
                "fit_impact_ratios": {"score_cut": SCORE_CUT},
            },
        }
        (folder / "audit.yaml").write_text(yaml.safe_dump(audit), encoding="utf-8")
        env = resumebias_env(data)

        first = run_audit_file(folder / "audit.yaml", folder, env)
        assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
        calls = server.stats.requests
        assert calls > 300 * 6

        # The sensor, on the store the audit wrote: the first probe is the baseline.
        monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(data))
        monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))
        providers = ProvidersResource(
            models_file=str(folder / "models.yaml"),
            catalog_dir=str(folder / "catalog"),
            store_path=str(data / "responses.sqlite"),
        )
        sensor = build_model_alias_sensor(set(), {"vendor-screener"}, [JD])
        baseline = tick(sensor, providers, None)
        assert baseline.run_requests == [] and "no alias moved (1 probed)" in baseline.skip_reason.skip_message

        scorer.version, scorer.penalty = "2026.2", 1.0  # the vendor retrains: the name penalty doubles
        moved = tick(sensor, providers, baseline.cursor)
        assert requested(moved) == [("fit_scores_job", f"{JD}|vendor-screener")]
        assert moved.run_requests[0].tags["resumebias/snapshot"] == "2026.2"

        server.reset_counts()
        second = run_audit_file(folder / "audit.yaml", folder, env)
        assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
        assert server.stats.requests >= calls - 1, "the new version is called afresh, not answered from the store"

    changes = _changes(data)
    by = changes.set_index("finding")
    assert by.loc["fit_level:firstName_black_female", "verdict"] == "beyond_noise"
    assert by.loc["fit_level:firstName_black_female", "ci_high"] < 0
    reached = {"fit_level:firstName_black_female", "fit_group:sex", "fit_group:race:black"}
    assert by.loc[sorted(reached), "verdict"].eq("beyond_noise").all()
    probes = changes[changes["finding"].str.startswith("fit_") & ~changes["finding"].isin(reached)]
    assert len(probes) == 4 and probes["verdict"].eq("equivalent").all(), probes[["finding", "verdict", "note"]]
    # The validity sets are the design's three generated résumés: too few to call anything
    # unchanged, and nothing changed beyond noise there.
    validity = changes[changes["finding"].str.startswith("validity:")]
    assert len(validity) and validity["verdict"].isin(["within_noise", "inconclusive"]).all()
    assert (validity["n_resumes"] < 264).all()
    # Both audits scored the same 300 files: the levels, the group contrasts and the impact
    # ratios are compared résumé by résumé, validity unpaired.
    fit = changes["finding"].str.startswith(("fit_level:", "fit_group:", "impact_ratio:"))
    assert set(changes.loc[fit, "test"]) == {"t_resume"} and set(changes.loc[~fit, "test"]) == {"welch_t"}

    # The impact ratios (selected: a score of 3.5 or more), the later over the earlier, résumé by
    # résumé: Black women's ratio fell beyond noise (and the Black and female ratios with it); the
    # other groups' ratios are unchanged within the margin (0.9 to 1.11).
    ratios = changes[changes["kind"] == "impact_ratio"].set_index("finding")
    hers = ratios.loc["impact_ratio:score_at_least_3.5:intersection:black_female"]
    assert hers["verdict"] == "beyond_noise" and hers["ci_high"] < 1 and hers["test"] == "t_resume", hers
    others = ratios[~ratios.index.str.contains(":black_female|:black$|:female$")]
    assert len(others) and others["verdict"].eq("equivalent").all(), others[["verdict", "note"]]
    assert ratios.drop(index=others.index)["verdict"].eq("beyond_noise").all()

    assert main(["audits", "--data-dir", str(data)]) == 0
    listing = capsys.readouterr().out
    assert listing.startswith("2 audit snapshot(s)") and "2026.1" in listing and "2026.2" in listing
    report = (data / "reports" / "audit_report.html").read_text(encoding="utf-8")
    assert "Since the last audit" in report and "worse" in report
    # Local Law 144 over time: the second audit's published summary is produced from its snapshot,
    # names the first as the prior audit and gives each category's prior impact ratio beside its own.
    published = json.loads((data / "reports" / "bias_audit_summary.json").read_text(encoding="utf-8"))
    audit = next(a for a in published["audits"] if a["model"] == "vendor-screener")
    ids = re.findall(r"vendor-screener@\S+", listing)
    assert (audit["prior_snapshot_id"], audit["snapshot_id"]) == (ids[0], ids[1]), (audit, listing)
    row = next(
        r
        for r in audit["rates"]
        if r["job_description"] == "all"
        and r["category"] == "Black or African American Female"
        and r["measure"] == "scoring_rate"
    )
    assert row["prior_impact_ratio"] is not None and row["impact_ratio"] <= row["prior_impact_ratio"]
    assert "prior audit&#39;s impact ratio" in report or "prior audit's impact ratio" in report
