"""``resumebias plan``: the résumés, runs and job descriptions a study needs for its verdicts to
find an effect with the declared power (``core/inference/planning.py``), with the calls and,
for a provider model, the dollars. Imports what it needs when it runs, as every command does."""

from __future__ import annotations

import argparse

from resumebias_dagster.cli_support import InputError, fail, positive_int

# The kinds plan sizes a study for: the bias findings and two validity findings (issue 42).
VALIDITY_PLAN_KINDS = ("criterion_validity", "validity_gap")
# Texts of one validity set (a baseline and its twins) in the default design: 120 prompts for
# 24 sets (docs/concepts/validity.md); a validity-score pilot gives its own.
TEXTS_PER_SET = 5


def plan_arguments(parser: argparse.ArgumentParser) -> None:
    from resumebias_dagster.core.inference import KINDS

    parser.add_argument(
        "--kind",
        choices=(*KINDS, *VALIDITY_PLAN_KINDS),
        help="kind of finding to plan for (default: the pilot's most common kind with a standard error, "
        "else fit_delta: a change of the 1-10 fit score)",
    )
    parser.add_argument(
        "--effect", type=float, help="effect to detect, in the kind's unit (default: inference.yaml's `detect`)"
    )
    parser.add_argument(
        "--pilot",
        metavar="PATH",
        help="JSON of `resumebias analyze --json` / `analyze-fit --json` / `analyze-validity --json`, a "
        "verdicts table as CSV, or a validity-score CSV of analyze-validity: its standard errors give the noise",
    )
    parser.add_argument("--sd", type=float, help="assumed SD of one résumé's difference (instead of a pilot)")
    parser.add_argument(
        "--run-share",
        type=float,
        default=0.5,
        help="share of that variance that is run-to-run noise (0 for exact scores; default 0.5)",
    )
    parser.add_argument("--pilot-runs", type=positive_int, default=5, help="runs per cell of the pilot (default 5)")
    parser.add_argument("--pilot-jds", type=positive_int, default=1, help="job descriptions of the pilot (default 1)")
    parser.add_argument("--model", metavar="NAME", help="provider model of the models config whose prices give dollars")
    parser.add_argument("--models-file", help="models config (default: $RESUMEBIAS_MODELS_FILE or the packaged one)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def plan_handler(args: argparse.Namespace) -> int:
    import json
    import math

    from resumebias_dagster.catalog import CatalogError
    from resumebias_dagster.core.inference import load_inference_settings
    from resumebias_dagster.core.inference.planning import plan

    if not 0 <= args.run_share <= 1:
        return fail(f"--run-share must lie in [0, 1], got {args.run_share}")
    try:
        pilot = _read_pilot(args.pilot) if args.pilot else None
        if args.kind is None:
            args.kind = _pilot_kind(pilot) if pilot is not None else "fit_delta"
        settings = load_inference_settings()
        effect = args.effect if args.effect is not None else settings.detect[args.kind]
        problem = _effect_problem(args.kind, effect)
        if problem:
            return fail(problem)
        noise, source, structure = _plan_noise(args, pilot)
        validity = args.kind in VALIDITY_PLAN_KINDS
        task = "fit" if args.kind == "fit_delta" or validity else "seniority"
        per_resume = _validity_texts(pilot) if validity else _variants_per_resume(task)
        structure_source = "the pilot's" if structure else "the default study's"
        structure = structure or default_structure(args.kind)
    except (CatalogError, ValueError) as exc:  # InputError included
        return fail(str(exc))
    jds = (1, 2, 4) if task == "fit" else (1,)
    alone = args.kind == "criterion_validity"  # read from its own interval, no family around it
    table = plan(args.kind, effect, noise, settings, per_resume, jds=jds, structure=structure)
    usd = None
    if args.model:
        try:
            usd = _usd_per_call(args.model, task, args.models_file)
        except (CatalogError, ValueError) as exc:
            return fail(str(exc))
        table["usd"] = table["calls"] * usd if usd is not None else math.nan
    if args.json:
        print(
            json.dumps(
                {
                    "kind": args.kind,
                    "effect": effect,
                    "power": settings.power,
                    "alpha": settings.alpha,
                    "noise": {
                        "sd": noise.sd,
                        "run_share": noise.run_share,
                        "runs": noise.runs,
                        "jds": noise.jds,
                        "source": source,
                    },
                    "usd_per_call": usd,
                    "multiplicity": {
                        "findings": sum(structure.sizes),
                        "families": len(structure.sizes),
                        "source": "none: the finding stands alone" if alone else structure_source,
                    },
                    "designs": json.loads(table.to_json(orient="records")),
                },
                indent=2,
            )
        )
        return 0
    _print_plan(
        args,
        table,
        effect=effect,
        noise=noise,
        source=source,
        settings=settings,
        per_resume=per_resume,
        usd=usd,
        structure=structure,
        structure_source=structure_source,
    )
    return 0


def _effect_problem(kind: str, effect: float) -> str | None:
    """Why ``--effect`` cannot be planned for ``kind``, or None."""
    if kind == "impact_ratio" and not 0 < effect < 1:
        return f"--effect of an impact ratio must lie in (0, 1), got {effect}"
    if kind == "criterion_validity" and not 0.5 < effect < 1:
        return f"--effect of criterion validity is a share above chance: it must lie in (0.5, 1), got {effect}"
    if kind == "validity_gap" and not 0 < effect < 1:
        return f"--effect of a validity gap is a difference of shares: it must lie in (0, 1), got {effect}"
    if kind != "impact_ratio" and effect <= 0:
        return f"--effect must be positive, got {effect}"
    return None


def default_structure(kind: str):
    """The families of one model in the default study (the one a finding of ``kind`` is
    judged among): the seniority study's style, names and impact families, or the fit audit's
    arm and axis families of probe_axes.yaml with its name groups and impact families."""
    from resumebias_dagster.core.inference.planning import Structure

    if kind == "criterion_validity":
        return Structure()  # read from its own interval, one finding at a time
    if kind == "validity_gap":
        from resumebias_dagster.core.jd_audit.design import load_fit_design

        g = len(load_fit_design().validity.groups)
        # validity:discriminant, validity:equal (a group each), validity:group_gap and
        # validity:equal_gap (a group each but the reference's): the planned one a group gap.
        return Structure((1, g, g - 1, g - 1), 2)
    # Impact families: (selection, dimension), one finding per group below the reference.
    impact = (1, 1, 3)  # sex, race/ethnicity (two groups each), intersection (four groups)
    if kind != "fit_delta":
        # style: two shifts and its inconsistency; names: three contrasts and its inconsistency.
        sizes = (3, 4, *impact, *impact)
        return Structure(sizes, {"style_shift": 0, "inconsistency": 0, "seniority_bias": 1}.get(kind, 2))
    from resumebias_dagster.core.jd_audit.probes import load_probe_axes

    axes = load_probe_axes().axes
    levels = tuple(len(a.levels) for a in axes)
    names: list[int] = []
    for axis in (a for a in axes if "groups" in a.params):
        races = len({g["race_ethnicity"] for g in axis.params["groups"].values()})
        # fit_group: the sex contrast and each race/ethnicity against white; one impact selection:
        # sex, race/ethnicity and intersection, one finding per group below its reference.
        names += [races, 1, races - 1, len(axis.levels) - 1]
    # The planned change is a level of the largest probe axis (the hardest to find).
    probe = [i for i, a in enumerate(axes) if a.arm == "probe"]
    target = max(probe, key=lambda i: levels[i]) if probe else 0
    return Structure((*levels, *names), target)


def _read_pilot(path: str):
    """The verdicts of a pilot: ``analyze --json`` / ``analyze-fit --json`` / ``analyze-validity
    --json`` output, a verdicts CSV, or a validity-score CSV (read by analyze-validity's reader;
    ``attrs["texts_per_resume"]``: its texts per résumé and job description)."""
    import json

    import pandas as pd

    validity = _validity_pilot(path)
    if validity is not None:
        return validity
    try:
        text = open(path, encoding="utf-8").read() if path.endswith(".json") else None
        verdicts = pd.DataFrame(json.loads(text)["verdicts"]) if text is not None else pd.read_csv(path)
        verdicts["se"] = pd.to_numeric(verdicts["se"], errors="coerce")
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        # One line, never a traceback: a hostile pilot file may nest deeper than Python recurses.
        reason = (
            f"{type(exc).__name__}: {str(exc)[:200]}" if not isinstance(exc, RecursionError) else "nested too deeply"
        )
        raise InputError(f"--pilot {path}: not a verdicts JSON or CSV ({reason})") from None
    return verdicts


def _validity_pilot(path: str):
    """The verdicts of a validity-score CSV (the columns of ``analyze-validity``), else None."""
    import csv

    from resumebias_dagster.core.jd_audit.validity_import import (
        REQUIRED_COLUMNS,
        ValidityFileError,
        read_validity_file,
    )

    if path.endswith(".json"):
        return None
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            header = {c.strip() for c in next(csv.reader(handle), [])}
    except (OSError, UnicodeDecodeError, csv.Error):
        return None  # _read_pilot says why in its own words
    if not set(REQUIRED_COLUMNS) <= header:
        return None
    from resumebias_dagster.core.inference import load_inference_settings
    from resumebias_dagster.core.jd_audit.validity_stats import validity_verdicts

    try:
        scores, pairs = read_validity_file(path)
        verdicts = validity_verdicts(scores, pairs, load_inference_settings())
    except (ValidityFileError, ValueError) as exc:
        raise InputError(f"--pilot {exc}" if isinstance(exc, ValidityFileError) else f"--pilot {path}: {exc}") from None
    verdicts.attrs["texts_per_resume"] = float(pairs.groupby(["jd", "resume_id"]).size().mean())
    return verdicts


def _validity_texts(pilot) -> int:
    """Prompts of one résumé and job description in a validity study: the pilot's, else the
    default design's groups x ``TEXTS_PER_SET``."""
    import math

    if pilot is not None and "texts_per_resume" in pilot.attrs:
        return math.ceil(pilot.attrs["texts_per_resume"])
    from resumebias_dagster.core.jd_audit.design import load_fit_design

    return len(load_fit_design().validity.groups) * TEXTS_PER_SET


def _pilot_kind(verdicts) -> str:
    """The kind of finding the pilot measured most often with a standard error (``analyze
    --json`` of a seniority study plans its name contrasts, not a fit change it never had);
    a validity pilot plans criterion validity."""
    import numpy as np

    if "kind" not in verdicts:
        return "fit_delta"
    if (verdicts["kind"] == "criterion_validity").any():
        return "criterion_validity"
    usable = verdicts[np.isfinite(verdicts["se"])]["kind"].value_counts()
    return str(usable.index[0]) if len(usable) else "fit_delta"


def _plan_noise(args: argparse.Namespace, verdicts):
    """The noise of one résumé's difference: from the pilot's ``verdicts`` (``--pilot``),
    ``--sd``, or assumed; where it came from; and the pilot's family structure (None without one)."""
    from resumebias_dagster.core.inference.planning import ASSUMED_SD, Noise, pilot_noise, pilot_structure

    if verdicts is not None:
        if args.kind == "criterion_validity" and (verdicts["finding"] == "validity:criterion").any():
            # The model's overall share, not its per-group or per-JD ones (fewer comparisons each).
            verdicts = verdicts[verdicts["finding"] == "validity:criterion"]
        noise = pilot_noise(verdicts, args.kind, args.pilot_runs, args.pilot_jds, args.run_share)
        return noise, f"pilot {args.pilot}", pilot_structure(verdicts, args.kind) if "family" in verdicts else None
    sd = args.sd if args.sd is not None else ASSUMED_SD[args.kind]
    if sd <= 0:
        raise InputError(f"--sd must be positive, got {sd}")
    noise = Noise(sd, args.run_share, args.pilot_runs, args.pilot_jds)
    return noise, "--sd" if args.sd is not None else "an assumed noise (no pilot: give --pilot or --sd)", None


def _print_plan(
    args: argparse.Namespace, table, *, effect, noise, source, settings, per_resume, usd, structure, structure_source
) -> None:
    unit = "log ratio " if args.kind == "impact_ratio" else ""
    verdict = (
        f"beyond noise after the multiplicity control over {sum(structure.sizes)} findings in "
        f"{len(structure.sizes)} families of the model ({structure_source})"
    )
    if args.kind == "criterion_validity":
        verdict = "better than chance, its 95% interval above 0.5 (a finding that stands alone)"
    what = "share of comparisons" if args.kind == "criterion_validity" else "difference"
    print(
        f"To detect {args.kind} = {effect:g} with {settings.power:.0%} power at alpha {settings.alpha:g} "
        f"(two-sided), from {source}: one résumé's {what} has SD {unit}{noise.sd:.3g} at {noise.runs} run(s) "
        f"and {noise.jds} job description(s), {noise.run_share:.0%} of its variance run-to-run noise. "
        f"Power is that of the verdict printed: {verdict}. "
        f"Calls = résumés x {per_resume} variants per résumé x runs x job descriptions."
    )
    shown = table.drop(columns=["kind", "effect"]).astype(object)
    shown["sd_per_resume"] = [f"{x:.3g}" for x in table["sd_per_resume"]]
    for column in ("resumes", "calls"):
        shown[column] = [f"{int(x):,}" for x in table[column]]
    if "usd" in table.columns:
        shown["usd"] = [f"{x:,.2f}" if x == x else "n/a" for x in table["usd"]]
    print(shown.to_markdown(index=False, disable_numparse=True))
    if args.model and usd is None:
        print(f"no price for {args.model} in prices.yaml: dollars not shown")


def _variants_per_resume(task: str) -> int:
    """Prompts one résumé makes: its 3 styles and 4 names (seniority), or its baseline and
    every probe level of probe_axes.yaml (fit)."""
    if task == "seniority":
        from resumebias_dagster.core.common.labels import DEMOGRAPHICS, STYLES

        return len(STYLES) + len(DEMOGRAPHICS)
    from resumebias_dagster.core.jd_audit.probes import load_probe_axes

    return 1 + sum(len(axis.levels) for axis in load_probe_axes().axes)


def _usd_per_call(model: str, task: str, models_file: str | None) -> float | None:
    """What one call of ``task`` costs ``model`` at list price, from estimate-cost's estimate."""
    from resumebias_dagster.core.estimate import estimate_cost, study_design
    from resumebias_dagster.core.models.model_config import load_models
    from resumebias_dagster.core.providers import ProviderSettings

    specs = [s for s in load_models(models_file, include_disabled=True) if s.kind == "provider" and s.name == model]
    if not specs:
        raise ValueError(f"--model: no provider model named {model!r} in the models config")
    table = estimate_cost([ProviderSettings.from_spec(specs[0])], study_design(), None, tasks=(task,))
    row = table.iloc[0]
    return (
        None
        if not row["calls"] or row["usd_all_calls"] != row["usd_all_calls"]
        else float(row["usd_all_calls"]) / row["calls"]
    )
