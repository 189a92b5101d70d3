"""``resumebias plan``: the résumés, runs and job descriptions a study needs for its verdicts to
find an effect with the declared power (``core/inference/planning.py``), with the calls and,
for a provider model, the dollars. Imports what it needs when it runs, as every command does."""

from __future__ import annotations

import argparse

from resumebias_dagster.cli_support import InputError, fail, positive_int


def plan_arguments(parser: argparse.ArgumentParser) -> None:
    from resumebias_dagster.core.inference import KINDS

    parser.add_argument(
        "--kind",
        choices=KINDS,
        help="kind of finding to plan for (default: the pilot's most common kind with a standard error, "
        "else fit_delta: a change of the 1-10 fit score)",
    )
    parser.add_argument(
        "--effect", type=float, help="effect to detect, in the kind's unit (default: inference.yaml's `detect`)"
    )
    parser.add_argument(
        "--pilot",
        metavar="PATH",
        help="JSON of `resumebias analyze --json` / `analyze-fit --json`, or a verdicts table as CSV: "
        "its standard errors give the noise",
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
        if args.kind == "impact_ratio" and not 0 < effect < 1:
            return fail(f"--effect of an impact ratio must lie in (0, 1), got {effect}")
        if args.kind != "impact_ratio" and effect <= 0:
            return fail(f"--effect must be positive, got {effect}")
        noise, source, structure = _plan_noise(args, pilot)
        task = "fit" if args.kind == "fit_delta" else "seniority"
        per_resume = _variants_per_resume(task)
        structure_source = "the pilot's" if structure else "the default study's"
        structure = structure or default_structure(args.kind)
    except (CatalogError, ValueError) as exc:  # InputError included
        return fail(str(exc))
    jds = (1, 2, 4) if task == "fit" else (1,)
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
                        "source": structure_source,
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


def default_structure(kind: str):
    """The families of one model in the default study (the one a finding of ``kind`` is
    judged among): the seniority study's style, names and impact families, or the fit audit's
    arm and axis families of probe_axes.yaml with its name groups and impact families."""
    from resumebias_dagster.core.inference.planning import Structure

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
    """The verdicts of a pilot: ``analyze --json`` / ``analyze-fit --json`` output, or a CSV."""
    import json

    import pandas as pd

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


def _pilot_kind(verdicts) -> str:
    """The kind of finding the pilot measured most often with a standard error (``analyze
    --json`` of a seniority study plans its name contrasts, not a fit change it never had)."""
    import numpy as np

    if "kind" not in verdicts:
        return "fit_delta"
    usable = verdicts[np.isfinite(verdicts["se"])]["kind"].value_counts()
    return str(usable.index[0]) if len(usable) else "fit_delta"


def _plan_noise(args: argparse.Namespace, verdicts):
    """The noise of one résumé's difference: from the pilot's ``verdicts`` (``--pilot``),
    ``--sd``, or assumed; where it came from; and the pilot's family structure (None without one)."""
    from resumebias_dagster.core.inference.planning import ASSUMED_SD, Noise, pilot_noise, pilot_structure

    if verdicts is not None:
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
    print(
        f"To detect {args.kind} = {effect:g} with {settings.power:.0%} power at alpha {settings.alpha:g} "
        f"(two-sided), from {source}: one résumé's difference has SD {unit}{noise.sd:.3g} at {noise.runs} run(s) "
        f"and {noise.jds} job description(s), {noise.run_share:.0%} of its variance run-to-run noise. "
        f"Power is that of the verdict printed: beyond noise after the multiplicity control over "
        f"{sum(structure.sizes)} findings in {len(structure.sizes)} families of the model ({structure_source}). "
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
