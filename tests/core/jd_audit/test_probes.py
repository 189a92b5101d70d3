"""Single-signal probe variants (core/jd_audit/probes/, catalog/probe_axes.yaml)."""

import re
import shutil

import pandas as pd
import pytest

from resumebias_dagster.catalog import PACKAGED_DIR, CatalogError
from resumebias_dagster.core.common.diffing import tokens
from resumebias_dagster.core.jd_audit.probes import (
    BASELINE,
    VARIANT_COLUMNS,
    check_probe_variants,
    load_probe_axes,
    probe_variants,
    select_probe_resumes,
    verify_single_signal,
)
from resumebias_dagster.core.resumes.layout import MONTHS
from resumebias_dagster.core.resumes.timeline import timeline_problems
from resumebias_dagster.core.seniority.generation import generate_resumes

AXES = [
    "firstName",
    "graduationYear",
    "addressCountry",
    "careerGap",
    "companyNames",
    "companyLocations",
    "school",
    "anonymize",
    "promptInjection",
    "placebo",
]


@pytest.fixture(scope="module")
def base():
    # Two seeds x all levels: juniors (one position), mids, seniors with master's degrees, internships.
    return pd.concat([generate_resumes(3, seed=0), generate_resumes(2, seed=5, id_prefix="s")], ignore_index=True)


@pytest.fixture(scope="module")
def variants(base):
    return probe_variants(base)


def text_of(variants, resume_id, variant):
    hit = variants[(variants["resume_id"] == resume_id) & (variants["variant"] == variant)]
    assert len(hit) == 1, (resume_id, variant)
    return hit["text"].iloc[0]


def senior_id(base):
    return base.loc[base["seniority"] == "senior", "resume_id"].iloc[0]


def test_every_variant_of_several_resumes_changes_one_signal(variants, base):
    assert list(variants.columns) == VARIANT_COLUMNS
    assert set(variants["resume_id"]) == set(base["resume_id"])
    problems = check_probe_variants(variants)
    assert problems.empty, problems.to_string()


def test_naming_convention_and_axes(variants):
    assert [a.id for a in load_probe_axes().axes] == AXES
    assert set(variants["axis"]) == {BASELINE, *AXES}
    probes = variants[variants["variant"] != BASELINE]
    assert (probes["variant"] == probes["axis"] + "_" + probes["level"]).all()
    assert (probes["variant"].str.split("_", n=1).str[0] == probes["axis"]).all()
    assert not probes["axis"].str.contains("_").any()
    base_rows = variants[variants["variant"] == BASELINE]
    assert (base_rows[["arm", "axis", "level"]] == [BASELINE, BASELINE, ""]).all().all()
    spec = load_probe_axes()
    levels = {a.id: list(a.levels) for a in spec.axes}
    assert len(levels["firstName"]) == 8 and levels["graduationYear"] == ["2005", "1998"]
    assert len(levels["addressCountry"]) == 5 and levels["careerGap"] == ["unexplained", "caregiving"]
    assert len(levels["companyNames"]) == 4 and len(levels["companyLocations"]) == 4 and len(levels["school"]) == 4
    assert levels["anonymize"] == ["name", "all"]
    assert len(levels["promptInjection"]) >= 2 and len(levels["placebo"]) >= 3
    assert spec.arms()["placebo"] == "placebo" and spec.arms()["promptInjection"] == "prompt_injection"
    assert {"anonymize_name", "anonymize_all", "addressCountry_brazil", "firstName_asian_female"} <= set(
        variants["variant"]
    )


def test_first_name_changes_the_name_everywhere(variants, base):
    named = variants.set_index(["resume_id", "variant"])["name"]
    for row in base.itertuples():
        text = text_of(variants, row.resume_id, "firstName_black_female")
        name = named[row.resume_id, "firstName_black_female"]
        first = name.split()[0]
        assert text.startswith(f"{name}\n")
        assert not ({row.first_name.lower(), row.last_name.lower()} & set(tokens(text)))
        assert first.lower() in text.split("\n")[1].split("@")[0]
        if row.linkedin:
            assert f"linkedin.com/in/{first.lower()}" in text
    # Study 003's single names (the study003 preset) include a hyphenated surname.
    hyphen = probe_variants(base.iloc[:1], axes=["firstName"], catalog_dir="preset:study003")
    hyphen = text_of(hyphen, base.resume_id[0], "firstName_mohammed_al_said")
    assert hyphen.startswith("Mohammed Al-Said\n") and "al-said" in hyphen.split("\n")[1]


def test_signal_specific_edits(variants, base):
    rid = senior_id(base)
    baseline = text_of(variants, rid, BASELINE)
    b_lines = baseline.split("\n")

    lagos = text_of(variants, rid, "addressCountry_nigeria").split("\n")
    assert [i for i, (a, b) in enumerate(zip(b_lines, lagos)) if a != b] == [1]
    assert "Lagos, Nigeria" in lagos[1]

    dates = re.compile(rf"(?:{'|'.join(MONTHS)}) \d{{4}} – (?:(?:{'|'.join(MONTHS)}) \d{{4}}|Present)")
    older = text_of(variants, rid, "graduationYear_1998")
    assert re.search(r"\| 1998$", older, re.M)
    # The career starts after the 1998 degree, as the baseline's starts after its own.
    first_start = dates.findall(older)[-1].split(" – ")[0]
    assert first_start.endswith("1998") or first_start.endswith("1999")

    gap = text_of(variants, rid, "careerGap_caregiving")
    gap_line = next(line for line in gap.split("\n") if line.startswith("Career break: full-time caregiver"))
    assert dates.search(gap_line)
    assert len(gap.split("\n")) == len(b_lines) + 2
    assert dates.findall(gap)[0] == dates.findall(baseline)[0]  # the newest position keeps its dates

    faang = text_of(variants, rid, "companyNames_faang")
    for employer in base.set_index("resume_id").loc[rid, "employers"].split("; "):
        assert employer in baseline and employer not in faang
    assert "Google |" in faang

    kenya = text_of(variants, rid, "companyLocations_kenya")
    assert "Nairobi, Kenya" in kenya and kenya.split("\n")[1] == b_lines[1]

    mit = text_of(variants, rid, "school_mit")
    assert "Massachusetts Institute of Technology |" in mit

    blind = text_of(variants, rid, "anonymize_all")
    row = base.set_index("resume_id").loc[rid]
    assert blind.startswith("Candidate A\n[email] | [phone] | [location]")
    assert row["school"] not in blind and not dates.search(blind) and "Company A" in blind
    assert not re.search(r"\b(19|20)\d\d\b", blind.split("EXPERIENCE")[1].split("SKILLS")[0])
    name_only = text_of(variants, rid, "anonymize_name")
    assert name_only.split("\n")[1].endswith(row["city"]) and row["school"] in name_only

    injected = text_of(variants, rid, "promptInjection_explicit")
    assert (
        "assign a score of 10" in injected
        and injected.replace(injected.split("\n")[-2], "").strip() == baseline.strip()
    )

    for placebo in ("placebo_blank_line", "placebo_trailing_space", "placebo_bullet_glyph"):
        text = text_of(variants, rid, placebo)
        assert text != baseline and tokens(text) == tokens(baseline)
    assert "green" in text_of(variants, rid, "placebo_hobby_colour") and "INTERESTS" in baseline


def test_a_level_that_changes_nothing_stops_the_arm_naming_axis_level_and_resume(base):
    same_year = base.iloc[[0]].copy()
    text = same_year["text"].iloc[0]
    year = re.search(r"\| (\d{4})$", text, re.M).group(1)
    same_year["text"] = text.replace(f"| {year}\n", "| 2005\n")
    rid = same_year["resume_id"].iloc[0]
    with pytest.raises(ValueError, match=f"axis 'graduationYear' level '2005' leaves résumé {rid} unchanged"):
        probe_variants(same_year, axes=["graduationYear"])


def test_the_default_arm_has_every_configured_level_for_every_resume():
    # Regression: the default résumé (mid-level, no older job of 30 months) had no careerGap variants.
    arm = select_probe_resumes(generate_resumes())
    got = probe_variants(arm)
    configured = {(a.id, level) for a in load_probe_axes().axes for level in a.levels}
    for rid, rows in got[got["variant"] != BASELINE].groupby("resume_id"):
        assert set(zip(rows["axis"], rows["level"])) == configured, rid
    assert {"careerGap_unexplained", "careerGap_caregiving"} <= set(got["variant"])
    assert check_probe_variants(got).empty


def experience_months(text):
    total = 0
    degree = max(int(y) for y in re.findall(r"\| (\d{4})$", text.split("EDUCATION")[1], re.M))
    positions = r"^[^|\n]+ \| [^|\n]+ \| ([A-Z][a-z]{2} \d{4}) – ([A-Z][a-z]{2} \d{4}|Present)$"  # not gap lines
    for start, end in re.findall(positions, text, re.M):
        month = lambda label: int(label[-4:]) * 12 + MONTHS.index(label[:3])  # noqa: E731
        if month(start) >= degree * 12:
            total += (month("Nov 2025") if end == "Present" else month(end)) - month(start) + 1
    return total


@pytest.mark.parametrize("axis", AXES)
def test_every_edit_keeps_the_timeline_consistent(variants, base, axis):
    for rid in base["resume_id"]:
        baseline = text_of(variants, rid, BASELINE)
        assert timeline_problems(baseline) == [], rid
        rows = variants[(variants["resume_id"] == rid) & (variants["axis"] == axis)]
        assert len(rows), (rid, axis)
        for variant, text in zip(rows["variant"], rows["text"]):
            assert timeline_problems(text) == [], (rid, variant)
            if axis == "graduationYear":
                assert experience_months(text) > experience_months(baseline)
            elif variant != "anonymize_all":
                assert experience_months(text) == experience_months(baseline), (rid, variant)


def test_timeline_problems_name_what_is_wrong(variants, base):
    rid = senior_id(base)
    baseline = text_of(variants, rid, BASELINE)
    degree = re.search(r"\| (\d{4})$", baseline.split("EDUCATION")[1], re.M).group(1)
    # Study 003's edit: only the degree year moves, leaving decades unexplained before the first job.
    assert any("between the degree (1990)" in p for p in timeline_problems(baseline.replace(f"| {degree}", "| 1990")))
    present = re.search(r"\| ([A-Z][a-z]{2} \d{4}) – Present", baseline).group(1)
    assert any(
        "unexplained gap" in p and "after" in p
        for p in timeline_problems(baseline.replace(f"{present} – Present", f"{present} – Jan 2024"))
    )
    assert any(
        "summary states" in p
        for p in timeline_problems(re.sub(r"\d+ years of professional", "40 years of professional", baseline))
    )


def test_the_check_fails_on_an_inconsistent_timeline_and_on_a_missing_level(variants, base):
    rid = next(
        r
        for r in base["resume_id"]
        if "careerGap_unexplained" in set(variants.loc[variants["resume_id"] == r, "variant"])
        and base.set_index("resume_id").loc[r, "n_positions"] > 1
    )
    one = variants[variants["resume_id"] == rid].copy()
    baseline = text_of(one, rid, BASELINE)

    def broken(variant, edit):
        out = one.copy()
        at = out.index[out["variant"] == variant][0]
        out.loc[at, "text"] = edit(out.loc[at, "text"])
        return check_probe_variants(out)

    # The old career-gap edit: the gap carved out of the older job, which now ends earlier.
    lines = baseline.split("\n")
    second = [i for i, line in enumerate(lines) if re.search(r" \| [A-Z][a-z]{2} \d{4} – [A-Z][a-z]{2} \d{4}$", line)][
        0
    ]
    start, end = re.search(r"([A-Z][a-z]{2} \d{4}) – ([A-Z][a-z]{2} \d{4})$", lines[second]).groups()
    shortened = lines[second].replace(f"– {end}", f"– {start}")

    def old_gap(_text):
        out = list(lines)
        out[second] = shortened
        out[second - 1 : second - 1] = [f"Career break | {start} – {end}", ""]
        return "\n".join(out)

    problems = broken("careerGap_unexplained", old_gap)
    assert problems["problem"].str.contains("total experience changed|timeline:").any(), problems.to_string()
    # Study 003's graduation-year edit: the degree year alone.
    degree = re.search(r"\| (\d{4})$", baseline.split("EDUCATION")[1], re.M).group(1)
    seed_edit = broken("graduationYear_1998", lambda t: baseline.replace(f"| {degree}", "| 1998"))
    assert seed_edit["problem"].str.contains("timeline: unexplained gap").any(), seed_edit.to_string()
    missing = check_probe_variants(one[one["variant"] != "careerGap_caregiving"])
    assert list(missing["problem"]) == ["configured in the probe axes but missing for this résumé"]
    assert list(missing["variant"]) == ["careerGap_caregiving"]


def test_broken_variants_fail_the_check(variants, base):
    rid = senior_id(base)
    one = variants[variants["resume_id"] == rid].copy()
    assert check_probe_variants(one).empty
    baseline = text_of(one, rid, BASELINE)
    employer_city = re.search(r"^[^|\n]+ \| ([^|\n]+) \| ", baseline.split("EXPERIENCE")[1], re.M).group(1)

    def broken(variant, edit):
        out = one.copy()
        at = out.index[out["variant"] == variant][0]
        out.loc[at, "text"] = edit(out.loc[at, "text"])
        return check_probe_variants(out)

    extra_word = broken("addressCountry_brazil", lambda t: t.replace("EXPERIENCE\n", "EXPERIENCE\nRemote worker\n"))
    assert set(extra_word["variant"]) == {"addressCountry_brazil"}
    assert extra_word["problem"].str.contains("tokens changed outside the signal").any()
    # Same tokens as the signal but on the wrong line: caught by the line check.
    both_cities = broken(
        "addressCountry_brazil", lambda t: t.replace(f"| {employer_city} |", "| São Paulo, Brazil |", 1)
    )
    assert both_cities["problem"].str.contains("line").any()
    unchanged = broken("school_mit", lambda t: baseline)
    assert "identical" in unchanged["problem"].iloc[0]
    sneaky = broken("promptInjection_subtle", lambda t: t.replace("SKILLS\n", "SKILLS\nLeadership, "))
    assert not sneaky.empty
    renamed = check_probe_variants(one.assign(variant=one["variant"].replace({"school_mit": "school_harvard"})))
    assert sorted(renamed["variant"]) == ["school_harvard", "school_mit"]  # unknown, and the real one missing


def test_verify_single_signal_direct():
    a = "Ann Lee\nann@x.org | Denver, CO\n\nEXPERIENCE\nAcme | Denver, CO | Jan 2020 – Present\n"
    b = a.replace("ann@x.org | Denver, CO", "ann@x.org | Lagos, Nigeria")
    assert verify_single_signal(a, b, ["Denver, CO"], ["Lagos, Nigeria"], changeable_lines=[1]) == []
    both = b.replace("Acme | Denver, CO", "Acme | Lagos, Nigeria")
    assert verify_single_signal(a, both, ["Denver, CO"], ["Lagos, Nigeria"]) == []  # tokens alone cannot tell
    assert verify_single_signal(a, both, ["Denver, CO"], ["Lagos, Nigeria"], changeable_lines=[1])
    assert verify_single_signal(a, b + "Extra\n", ["Denver, CO"], ["Lagos, Nigeria", "Extra"], may_insert=False)
    assert verify_single_signal(a, a, [], []) == ["the variant is identical to the baseline"]


def user_catalog(tmp_path, edit):
    folder = tmp_path / "catalog"
    folder.mkdir()
    text = (PACKAGED_DIR / "probe_axes.yaml").read_text(encoding="utf-8")
    (folder / "probe_axes.yaml").write_text(edit(text), encoding="utf-8")
    return folder


def test_a_level_added_in_a_user_yaml_adds_a_variant(tmp_path, base):
    folder = user_catalog(
        tmp_path,
        lambda t: t.replace(
            '      romania: "Bucharest, Romania"\n',
            '      romania: "Bucharest, Romania"\n      kenya: "Nairobi, Kenya"\n',
        ),
    )
    got = probe_variants(base.iloc[:2], catalog_dir=folder)
    assert "addressCountry_kenya" in set(got["variant"])
    assert check_probe_variants(got, catalog_dir=folder).empty
    assert "addressCountry_kenya" not in set(probe_variants(base.iloc[:1])["variant"])
    # Checked against the packaged axes, the extra level is unknown.
    assert "no level 'kenya'" in " ".join(check_probe_variants(got)["problem"])


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda t: t.replace("  firstName:", "  first_name:"), "axis 'first_name'.*camelCase"),
        (lambda t: t.replace("edit: address\n", "edit: teleport\n"), "axis 'addressCountry'.*edit must be one of"),
        (lambda t: t.replace('"2005": 2005', '"2005": soon'), "axis 'graduationYear'.*level '2005'"),
        (lambda t: t.replace("      usa: ", "      U-S-A: "), "axis 'addressCountry': level 'U-S-A'"),
        (lambda t: t.replace("arm: placebo", "arm: control"), "axis 'placebo'.*arm must be one of"),
    ],
)
def test_bad_axes_files_name_the_file_and_the_axis(tmp_path, edit, message):
    folder = user_catalog(tmp_path, edit)
    with pytest.raises(CatalogError, match=f"probe_axes.yaml: {message}"):
        load_probe_axes(folder)


def test_axes_can_be_selected_and_layout_errors_name_the_resume(base):
    got = probe_variants(base.iloc[:1], axes=["school"])
    assert set(got["axis"]) == {BASELINE, "school"}
    with pytest.raises(ValueError, match="unknown probe axes"):
        probe_variants(base.iloc[:1], axes=["height"])
    bad = pd.DataFrame({"resume_id": ["x1"], "text": ["Just a line of text\n"]})
    with pytest.raises(ValueError, match="résumé x1"):
        probe_variants(bad)


def test_a_user_folder_without_the_file_falls_back_to_the_packaged_axes(tmp_path, base):
    folder = tmp_path / "empty"
    folder.mkdir()
    shutil.copy(PACKAGED_DIR / "people.yaml", folder / "people.yaml")
    assert len(probe_variants(base.iloc[:1], catalog_dir=folder)) == len(probe_variants(base.iloc[:1]))


def _wait_after_degree(text):
    """Months from January of the degree year to the first thing after it: the first position,
    or a gap line (a one-position career's gap comes straight after the degree)."""
    from resumebias_dagster.core.resumes.reader import read_resume

    layout = read_resume(text)
    first = min([layout.career()[-1].start, *(g.start for g in layout.gaps)])
    return first - 12 * layout.degree_year


def test_a_career_gap_changes_one_signal_not_the_wait_after_the_degree(variants, base):
    # Issue 24, item 9: an 18-month gap moved the degree by round(18 / 12) = 2 years, so the
    # wait between degree and first job grew by 6 months and the candidate aged: two signals.
    for rid in base["resume_id"]:
        baseline = text_of(variants, rid, BASELINE)
        for level in ("unexplained", "caregiving"):
            gap = text_of(variants, rid, f"careerGap_{level}")
            assert _wait_after_degree(gap) == _wait_after_degree(baseline), (rid, level)


def test_a_gap_that_is_not_whole_years_is_refused_naming_the_axis(tmp_path):
    text = (PACKAGED_DIR / "probe_axes.yaml").read_text()
    assert "months: 24" in text
    (tmp_path / "probe_axes.yaml").write_text(text.replace("months: 24", "months: 18"))
    with pytest.raises(
        CatalogError,
        match=r"probe_axes.yaml: axis 'careerGap': .*`months` must be whole years "
        r"\(12, 24, \.\.\.\).*got 18",
    ):
        load_probe_axes(tmp_path)


def test_a_career_gap_before_an_older_position_still_held_is_refused_not_a_crash(base):
    """A side job held beside the newest one (two "Present" positions): the gap cannot go
    before the newest position, and the edit says so (it raised TypeError, issue 28)."""
    from resumebias_dagster.core.resumes.layout import date_range, employer_line
    from resumebias_dagster.core.resumes.reader import read_resume

    row = base[base["resume_id"] == senior_id(base)].iloc[:1].copy()
    layout = read_resume(row["text"].iloc[0])
    older = layout.career()[1]
    lines = list(layout.lines)
    lines[older.line] = employer_line(older.employer, older.city, date_range(older.start, None))
    row["text"] = "\n".join(lines)
    with pytest.raises(ValueError, match=rf"résumé {row['resume_id'].iloc[0]}.*still current"):
        probe_variants(row, axes=["careerGap"])
