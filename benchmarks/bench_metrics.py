"""Benchmark of core/seniority/metrics/ against the seniority notebooks' per-résumé loops.

(a) group_metrics + bias_summary + analysis_json on ~1,000,000 synthetic
    predictions (5 models x both experiments x 5 runs), 3 of the 5 models with
    label distributions (p_junior, p_mid, p_senior; their predictions are drawn
    from them): target < 3 s. Also timed without the p_* columns, for reference.
(b) the same tables on ~100,000 rows, vectorised vs a seed-style loop (boolean
    masks per model and original, iterrows for promotions): target >= 50x, and
    both must give the same numbers.
(c) the expected-value (exp_*) figures of (b)'s table against a plain pandas
    groupby reference: same numbers.
(d) the test-retest floors of (b)'s table against independent references: the
    inconsistency floor by enumerating every V-subset of each text's runs, the bias
    floors and exact floors with pandas groupbys: same numbers.

Run: python benchmarks/bench_metrics.py [--rows-large N] [--rows-small N]
"""

from __future__ import annotations

import argparse
import itertools
import math
import time

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.labels import DEMOGRAPHICS, SENIORITY_LEVELS, STYLES
from resumebias_dagster.core.seniority.metrics import FLOOR_Z, analysis_json, bias_summary, group_metrics

SEED = 20240601
MODELS = ("distilbert", "roberta", "gpt5", "gemini3", "sonnet45")
RUNS = 5
TARGET_LARGE_S = 3.0
TARGET_RATIO = 50.0

# Per model: chance of answering the truth, and how much an overstated /
# understated wording and a caucasian-male name push the predicted rank.
_SKILL = {"distilbert": 0.45, "roberta": 0.38, "gpt5": 0.72, "gemini3": 0.8, "sonnet45": 0.98}
_STYLE_PUSH = {"neutral": 0.0, "overstated": 0.5, "understated": -0.3}
_NAME_PUSH = {d: 0.04 if d == "caucasian_male" else 0.0 for d in DEMOGRAPHICS}
# Models that store a label distribution (scored models); the others are API-like (p_* NaN).
DIST_MODELS = ("distilbert", "roberta", "gemini3")
DIST_COLUMNS = ["p_junior", "p_mid", "p_senior"]


def synthetic_predictions(n_rows: int, seed: int = SEED) -> pd.DataFrame:
    """About ``n_rows`` predictions in the normalised table format, noisy but realistic.

    ~2% unknown, ~0.5% error and ~0.5% variants missing altogether. Models in
    ``DIST_MODELS`` get a label distribution per (original, variant), the same on
    every run, and their predictions are draws from it; error rows and the other
    models have NaN ``p_*``.
    """
    rng = np.random.default_rng(seed)
    variants_per_original = len(STYLES) + len(DEMOGRAPHICS)
    n_originals = math.ceil(n_rows / (len(MODELS) * RUNS * variants_per_original * 0.995))
    truth = rng.integers(0, 3, n_originals)
    frames = []
    for kind, variants, push in (("style", STYLES, _STYLE_PUSH), ("demographic", DEMOGRAPHICS, _NAME_PUSH)):
        m, r, o, v = np.meshgrid(
            np.arange(len(MODELS)), np.arange(RUNS), np.arange(n_originals), np.arange(len(variants)), indexing="ij"
        )
        m, r, o, v = m.ravel(), r.ravel(), o.ravel(), v.ravel()
        skill = np.array([_SKILL[x] for x in MODELS])[m]
        shift = np.array([push[x] for x in variants])[v]
        # A per-résumé bias shared by its variants keeps predictions correlated, as real ones are.
        resume_noise = rng.normal(0, 0.6, (len(MODELS), n_originals))[m, o]
        noisy = truth[o] + np.where(rng.random(len(m)) < skill, 0.0, resume_noise + rng.normal(0, 0.7, len(m)))
        rank = np.clip(np.rint(noisy + shift * (1 - skill) * 2), 0, 2).astype(int)
        # Label distribution per (model, original, variant): a softmax around a noisy
        # mean rank, wider for weaker models; the scored models' predictions are draws from it.
        variant_noise = rng.normal(0, 0.3, (len(MODELS), n_originals, len(variants)))[m, o, v]
        centre = truth[o] + (resume_noise + variant_noise + shift * 2) * (1 - skill)
        width = 0.35 + 0.8 * (1 - skill)
        logits = -((np.arange(3)[None, :] - centre[:, None]) ** 2) / (2 * width[:, None] ** 2)
        dist = np.exp(logits - logits.max(axis=1, keepdims=True))
        dist /= dist.sum(axis=1, keepdims=True)
        scored = np.isin(np.asarray(MODELS)[m], DIST_MODELS)
        draw = rng.random(len(m))
        sampled = (draw > dist[:, 0]).astype(int) + (draw > dist[:, 0] + dist[:, 1])
        rank = np.where(scored, sampled, rank)
        labels = np.asarray(SENIORITY_LEVELS, dtype=object)[rank]
        u = rng.random(len(m))
        labels = np.where(u < 0.02, "unknown", np.where(u < 0.025, "error", labels))
        dist[~scored | (labels == "error")] = np.nan
        frame = pd.DataFrame(
            {
                "variant_kind": kind,
                "original_idx": o,
                "variant": np.asarray(variants, dtype=object)[v],
                "model": np.asarray(MODELS, dtype=object)[m],
                "run": r,
                "prediction": labels,
                "true_seniority": np.asarray(SENIORITY_LEVELS, dtype=object)[truth[o]],
                "latency_s": rng.gamma(2.0, 0.4, len(m)),
                **{c: dist[:, j] for j, c in enumerate(DIST_COLUMNS)},
            }
        )
        frames.append(frame[rng.random(len(m)) >= 0.005])
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------- seed-style loop


def seed_loop_tables(df: pd.DataFrame) -> tuple[dict, dict]:
    """The seniority notebooks' analysis, loops and all, extended to experiments and runs.

    Returns ({(model, kind, group_kind, group): {metric: value}},
             {(model, kind): {"n_inconsistent", "inconsistency_rate", biases}}).
    """
    valid_df = df[~df["prediction"].isin(["error", "unknown"])].copy()
    valid_df["race"] = valid_df["variant"].apply(lambda x: "african_american" if "african" in x else "caucasian")
    valid_df["gender"] = valid_df["variant"].apply(lambda x: "female" if "female" in x else "male")
    seniority_rank = {"junior": 0, "mid": 1, "senior": 2}
    valid_df["true_rank"] = valid_df["true_seniority"].map(seniority_rank)
    valid_df["pred_rank"] = valid_df["prediction"].map(seniority_rank)
    valid_df["rank_diff"] = valid_df["pred_rank"] - valid_df["true_rank"]
    valid_df["correct"] = valid_df["prediction"] == valid_df["true_seniority"]

    groups: dict = {}
    summary: dict = {}
    for model_name in sorted(df["model"].unique()):
        for kind, variants in (("style", STYLES), ("demographic", DEMOGRAPHICS)):
            all_df = df[(df["model"] == model_name) & (df["variant_kind"] == kind)]
            model_df = valid_df[(valid_df["model"] == model_name) & (valid_df["variant_kind"] == kind)]
            if len(all_df) == 0:
                continue
            selections = [("all", "all", model_df)] + [(kind, v, model_df[model_df["variant"] == v]) for v in variants]
            if kind == "demographic":
                selections += [("race", x, model_df[model_df["race"] == x]) for x in ("caucasian", "african_american")]
                selections += [("gender", x, model_df[model_df["gender"] == x]) for x in ("male", "female")]
            for group_kind, group, sel in selections:
                groups[(model_name, kind, group_kind, group)] = {
                    "n_valid": len(sel),
                    "accuracy": sel["correct"].mean(),
                    "rank_diff": sel["rank_diff"].mean(),
                    "senior_share": (sel["prediction"] == "senior").mean(),
                    "junior_share": (sel["prediction"] == "junior").mean(),
                    "promotions": 0,
                    "demotions": 0,
                }

            inconsistent = 0
            runs = sorted(all_df["run"].unique())
            originals = all_df["original_idx"].unique()
            for run in runs:
                run_df = model_df[model_df["run"] == run]
                for orig_idx in originals:
                    resume_preds = run_df[run_df["original_idx"] == orig_idx]
                    if len(resume_preds) < len(variants):
                        continue
                    if len(resume_preds["prediction"].unique()) > 1:
                        inconsistent += 1
                    avg_rank = resume_preds["pred_rank"].mean()
                    for _, row in resume_preds.iterrows():
                        moved = (
                            "promotions"
                            if row["pred_rank"] > avg_rank + 0.01
                            else "demotions"
                            if row["pred_rank"] < avg_rank - 0.01
                            else None
                        )
                        if moved is None:
                            continue
                        keys = [("all", "all"), (kind, row["variant"])]
                        if kind == "demographic":
                            keys += [("race", row["race"]), ("gender", row["gender"])]
                        for gk, g in keys:
                            groups[(model_name, kind, gk, g)][moved] += 1

            entry = {
                "n_inconsistent": inconsistent,
                "inconsistency_rate": inconsistent / (len(originals) * len(runs)),
            }
            if kind == "demographic":

                def mean_rank(col, value):
                    return model_df[model_df[col] == value]["rank_diff"].mean()

                entry["racial_bias"] = mean_rank("race", "caucasian") - mean_rank("race", "african_american")
                entry["gender_bias"] = mean_rank("gender", "male") - mean_rank("gender", "female")
                entry["extreme_bias"] = mean_rank("variant", "caucasian_male") - mean_rank(
                    "variant", "african_american_female"
                )
            summary[(model_name, kind)] = entry
    return groups, summary


def compare(df: pd.DataFrame, loop_groups: dict, loop_summary: dict) -> list[str]:
    """Differences between the vectorised tables and the loop's numbers (empty = identical)."""
    problems = []
    gm = group_metrics(df).set_index(["model", "variant_kind", "group_kind", "group"])
    bs = bias_summary(df).set_index(["model", "variant_kind"])
    if set(gm.index) != set(loop_groups):
        problems.append(f"group keys differ: {set(gm.index) ^ set(loop_groups)}")
    for key, expected in loop_groups.items():
        for metric, value in expected.items():
            got = gm.loc[key, metric] if key in gm.index else None
            if got is None or not np.isclose(got, value, rtol=0, atol=1e-12, equal_nan=True):
                problems.append(f"{key} {metric}: vectorised {got} vs loop {value}")
    for key, expected in loop_summary.items():
        for metric, value in expected.items():
            got = bs.loc[key, metric]
            if not np.isclose(got, value, rtol=0, atol=1e-12, equal_nan=True):
                problems.append(f"{key} {metric}: vectorised {got} vs loop {value}")
    return problems


def expected_reference(df: pd.DataFrame) -> tuple[dict, dict]:
    """The exp_* figures with plain pandas groupbys (an independent formulation).

    Returns ({(model, kind, group_kind, group): {exp metric: value}},
             {(model, kind): {"n_dist_originals", "exp_inconsistency_rate"}}).
    """
    d = df[df["p_junior"].notna()].copy()
    rank = d["true_seniority"].map({"junior": 0, "mid": 1, "senior": 2}).to_numpy()
    p = d[DIST_COLUMNS].to_numpy()
    p = p / p.sum(axis=1, keepdims=True)
    d["exp_accuracy"] = p[np.arange(len(d)), rank]
    d["exp_rank_diff"] = p[:, 1] + 2 * p[:, 2] - rank
    d["exp_senior_share"], d["exp_junior_share"] = p[:, 2], p[:, 0]
    d["all"] = "all"
    d["race"] = d["variant"].map(lambda x: "african_american" if "african" in x else "caucasian")
    d["gender"] = d["variant"].map(lambda x: "female" if "female" in x else "male")
    measures = ["exp_accuracy", "exp_rank_diff", "exp_senior_share", "exp_junior_share"]
    groups: dict = {}
    for group_kind, column in (
        ("all", "all"),
        ("style", "variant"),
        ("demographic", "variant"),
        ("race", "race"),
        ("gender", "gender"),
    ):
        sel = d if group_kind in ("all", "race", "gender") else d[d["variant_kind"] == group_kind]
        if group_kind in ("race", "gender"):
            sel = d[d["variant_kind"] == "demographic"]
        for (model, kind, group), values in sel.groupby(["model", "variant_kind", column])[measures].mean().iterrows():
            groups[(model, kind, group_kind, group)] = dict(values)
    d[DIST_COLUMNS] = p
    n_variants = df.groupby("variant_kind")["variant"].nunique()
    per_variant = d.groupby(["model", "variant_kind", "original_idx", "variant"])[DIST_COLUMNS].mean()
    per_original = per_variant.groupby(level=[0, 1, 2])
    agree = per_original.prod().sum(axis=1)
    count = per_original.size()
    complete = count.to_numpy() == n_variants.reindex(count.index.get_level_values(1)).to_numpy()
    incons = (1 - agree)[complete].groupby(level=[0, 1])
    summary = {
        key: {"n_dist_originals": n, "exp_inconsistency_rate": rate}
        for key, n, rate in zip(incons.size().index, incons.size(), incons.mean())
    }
    return groups, summary


def compare_expected(df: pd.DataFrame, ref_groups: dict, ref_summary: dict) -> list[str]:
    problems = []
    gm = group_metrics(df).set_index(["model", "variant_kind", "group_kind", "group"])
    bs = bias_summary(df).set_index(["model", "variant_kind"])
    with_dist = set(gm.index[gm["n_dist"] > 0])
    if with_dist != set(ref_groups):
        problems.append(f"groups with distributions differ: {with_dist ^ set(ref_groups)}")
    if gm.loc[gm["n_dist"] == 0, ["exp_accuracy", "exp_rank_diff"]].notna().any().any():
        problems.append("a group without distributions has expected values")
    for table, reference in ((gm, ref_groups), (bs, ref_summary)):
        for key, expected in reference.items():
            for metric, value in expected.items():
                got = table.loc[key, metric] if key in table.index else None
                if got is None or not np.isclose(got, value, rtol=0, atol=1e-9):
                    problems.append(f"{key} {metric}: vectorised {got} vs reference {value}")
    return problems


def floor_reference(df: pd.DataFrame) -> dict:
    """The floors by other means: loops over run subsets and pandas groupbys.

    Returns {(model, kind): {"inconsistency_floor", "exp_inconsistency_floor", bias floors}}.
    """
    valid_labels = set(SENIORITY_LEVELS)
    rank = {"junior": 0, "mid": 1, "senior": 2}
    n_variants = df.groupby("variant_kind")["variant"].nunique()
    out: dict = {}
    for (model, kind), sel in df.groupby(["model", "variant_kind"]):
        v = int(n_variants[kind])
        variants = sorted(df.loc[df["variant_kind"] == kind, "variant"].unique())
        runs = sorted(sel["run"].unique())
        label = dict(zip(zip(sel["original_idx"], sel["variant"], sel["run"]), sel["prediction"]))
        subsets = list(itertools.combinations(runs, v))
        inconsistent = 0
        for original in sel["original_idx"].unique():
            for variant in variants:
                for subset in subsets:
                    got = [label.get((original, variant, run)) for run in subset]
                    inconsistent += all(g in valid_labels for g in got) and len(set(got)) > 1
        pseudo = sel["original_idx"].nunique() * len(variants) * len(subsets)
        entry = {"inconsistency_floor": inconsistent / pseudo if pseudo else math.nan}
        # Exact floor: per complete original, mean over variants of 1 - sum_k p(k)^V.
        d = sel[sel["p_junior"].notna()]
        if len(d):
            per_variant = d.groupby(["original_idx", "variant"])[DIST_COLUMNS].mean()
            per_variant = per_variant.div(per_variant.sum(axis=1), axis=0)
            floor = 1 - (per_variant**v).sum(axis=1)
            by_original = floor.groupby(level=0)
            complete = by_original.size() == v
            entry["exp_inconsistency_floor"] = by_original.mean()[complete].mean()
        if kind == "demographic":
            ok = sel[sel["prediction"].isin(valid_labels)].assign(r=lambda x: x["prediction"].map(rank))
            texts = ok.groupby(["original_idx", "variant"])["r"]
            stats = (
                pd.DataFrame(
                    {
                        "ss": texts.var(ddof=1).fillna(0.0) * (texts.size() - 1),
                        "dof": texts.size() - 1,
                        "n": texts.size(),
                    }
                )
                .groupby(level=1)
                .sum()
            )
            p = d[DIST_COLUMNS].to_numpy()
            p = p / p.sum(axis=1, keepdims=True)
            var = pd.Series(p[:, 1] + 4 * p[:, 2] - (p[:, 1] + 2 * p[:, 2]) ** 2, index=d["variant"].to_numpy())
            exact = var.groupby(level=0).agg(["sum", "size"])

            def side(groups):
                s = stats.loc[list(groups)].sum()
                e = exact.reindex(list(groups)).sum()
                return s["ss"] / s["dof"] / s["n"], (e["sum"] / e["size"] ** 2 if e["size"] else math.nan)

            for name, a, b in (
                ("racial", DEMOGRAPHICS[:2], DEMOGRAPHICS[2:]),
                ("gender", DEMOGRAPHICS[0::2], DEMOGRAPHICS[1::2]),
                ("extreme", DEMOGRAPHICS[:1], DEMOGRAPHICS[3:]),
            ):
                (sa, ea), (sb, eb) = side(a), side(b)
                entry[f"{name}_bias_floor"] = FLOOR_Z * math.sqrt(sa + sb)
                if len(d):
                    entry[f"exp_{name}_bias_floor"] = FLOOR_Z * math.sqrt(ea + eb)
        out[(model, kind)] = entry
    return out


def compare_floors(df: pd.DataFrame, reference: dict) -> list[str]:
    bs = bias_summary(df).set_index(["model", "variant_kind"])
    problems = []
    for key, expected in reference.items():
        for metric, value in expected.items():
            got = bs.loc[key, metric]
            if not np.isclose(got, value, rtol=0, atol=1e-9, equal_nan=True):
                problems.append(f"{key} {metric}: vectorised {got} vs reference {value}")
    return problems


# --------------------------------------------------------------------------- main


def _all_tables(df: pd.DataFrame) -> None:
    group_metrics(df)
    bias_summary(df)
    analysis_json(df)


def _best_of(fn, repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows-large", type=int, default=1_000_000)
    parser.add_argument("--rows-small", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    large = synthetic_predictions(args.rows_large)
    _all_tables(large.head(1000))  # warm-up: imports, first-call allocations
    t_large = _best_of(lambda: _all_tables(large), args.repeat)
    share = large["p_junior"].notna().mean()
    print(
        f"(a) {len(large):,} rows, p_* on {len(DIST_MODELS)} of {len(MODELS)} models ({share:.0%} of rows): "
        f"group_metrics + bias_summary + analysis_json in {t_large:.2f} s "
        f"(best of {args.repeat}; target < {TARGET_LARGE_S:.0f} s) {_verdict(t_large < TARGET_LARGE_S)}"
    )
    plain = large.drop(columns=DIST_COLUMNS)
    t_plain = _best_of(lambda: _all_tables(plain), args.repeat)
    print(f"    same rows without p_* columns: {t_plain:.2f} s")

    small = synthetic_predictions(args.rows_small, seed=SEED + 1)
    t_vec = _best_of(lambda: _all_tables(small), args.repeat)
    t0 = time.perf_counter()
    loop_groups, loop_summary = seed_loop_tables(small)
    t_loop = time.perf_counter() - t0
    ratio = t_loop / t_vec
    print(
        f"(b) {len(small):,} rows: vectorised {t_vec:.3f} s, seed-style loop {t_loop:.2f} s, "
        f"ratio {ratio:.0f}x (target >= {TARGET_RATIO:.0f}x) {_verdict(ratio >= TARGET_RATIO)}"
    )
    problems = compare(small, loop_groups, loop_summary)
    n_checked = sum(len(v) for v in loop_groups.values()) + sum(len(v) for v in loop_summary.values())
    print(f"    same numbers as the loop ({n_checked} values compared): {_verdict(not problems)}")
    for p in problems[:20]:
        print(f"      {p}")

    ref_groups, ref_summary = expected_reference(small)
    exp_problems = compare_expected(small, ref_groups, ref_summary)
    n_exp = sum(len(v) for v in ref_groups.values()) + sum(len(v) for v in ref_summary.values())
    print(f"(c) expected values vs pandas groupby reference ({n_exp} values compared): {_verdict(not exp_problems)}")
    for p in exp_problems[:20]:
        print(f"      {p}")

    floors = floor_reference(small)
    floor_problems = compare_floors(small, floors)
    n_floor = sum(len(v) for v in floors.values())
    print(
        f"(d) test-retest floors vs subset enumeration and groupby reference ({n_floor} values compared): "
        f"{_verdict(not floor_problems)}"
    )
    for p in floor_problems[:20]:
        print(f"      {p}")
    ok = t_large < TARGET_LARGE_S and ratio >= TARGET_RATIO and not problems and not exp_problems and not floor_problems
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
