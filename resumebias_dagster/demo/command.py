"""``resumebias demo [--out DIR]``: a small, real audit on shipped sample data, in about two minutes.

The demo is ``resumebias run --config AUDIT_FILE`` on a folder it writes first:

- ``audit/``: the audit file, models file and two job descriptions of ``catalog/demo/``, and
  ten résumés written as PDF, DOCX, Markdown and text files in layouts people use
  (``testing/resume_corpus.py``: invented people, the same files on every run);
- ``data/``: the run's data folder (DuckDB tables, the Dagster instance, the report);
- ``samples/``: the run's results in the formats of ``analyze``, ``analyze-fit``, ``analyze-validity`` and
  ``analyze-rank`` (``samples.py``);
- ``run.log``: what the run printed.

The screener audited is ``screener.py``: MiniLM similarity with a planted career-break
penalty. The run is a child process whose environment names the data folder and keeps
every cache and state folder under the output folder (nothing in the home folder, no model
hub); none of the caller's resumebias or Dagster settings reaches it, so a demo never touches
an operator's store, instance or tables.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from resumebias_dagster.cli_support import fail

DEFAULT_OUT = "resumebias-demo"
SAMPLE = Path(__file__).resolve().parents[1] / "catalog" / "demo"
# Ten résumés: two PDFs, two DOCX files, three Markdown and three text files. Ten, because the
# sign-flip test over résumés cannot go below p = 2 / 2**n: five résumés could never show anything.
LAYOUTS = (
    "pdf_two_columns",
    "pdf_title_at",
    "docx_tables",
    "docx_dates_own_line",
    "markdown_pipes",
    "markdown_pipes",
    "markdown_no_city",
    "comma_title_txt",
    "dates_first_txt",
    "contact_section_txt",
)
# The variables of the caller that could point the run elsewhere (a store, an instance, tables).
DROPPED_PREFIXES = ("RESUMEBIAS_", "DAGSTER_")


def demo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        metavar="DIR",
        help=f"a new or empty folder for everything the demo writes (default: ./{DEFAULT_OUT})",
    )


def out_problem(out: Path, option: str) -> str | None:
    """Why ``out`` cannot take the demo (it is a file, or a folder with something in it), or None."""
    if out.is_dir() and any(out.iterdir()):
        return f"{option} {out}: the folder is not empty; name a new or empty folder with --out DIR"
    if out.exists() and not out.is_dir():
        return f"{option} {out}: it is a file, not a folder; name a new or empty folder with --out DIR"
    return None


def write_audit_folder(out: Path) -> Path:
    """The audit folder (the packaged sample and the résumé files); the audit file's path."""
    from resumebias_dagster.testing.resume_corpus import corpus, write_corpus

    audit = out / "audit"
    shutil.copytree(SAMPLE, audit, ignore=shutil.ignore_patterns("__pycache__"))
    write_corpus(audit / "resumes", corpus(per_layout=1, layouts=LAYOUTS))
    return audit / "audit.yaml"


def child_environment(out: Path) -> dict[str, str]:
    """The run's environment: its data folder, and every cache and state folder under ``out``."""
    from resumebias_dagster.settings import DATA_DIR_ENV, command_environment

    caches = out / ".cache"
    values = {
        DATA_DIR_ENV: str(out / "data"),
        "XDG_CACHE_HOME": str(caches),  # Hugging Face, matplotlib's font list
        "XDG_STATE_HOME": str(out / ".state"),  # what resumebias remembers writing
        "XDG_CONFIG_HOME": str(out / ".config"),
        "MPLCONFIGDIR": str(caches / "matplotlib"),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    return command_environment(values, DROPPED_PREFIXES)


def run_audit(audit: Path, out: Path) -> tuple[int, list[str]]:
    """``resumebias run --config audit`` as a child process, its lines shown and kept in run.log."""
    command = [sys.executable, "-m", "resumebias_dagster.cli", "run", "--config", str(audit)]
    lines: list[str] = []
    with (
        open(out / "run.log", "w", encoding="utf-8") as log,
        subprocess.Popen(
            command,
            cwd=out,
            env=child_environment(out),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
        ) as child,
    ):
        assert child.stdout is not None
        for line in child.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            log.write(line)
            lines.append(line.rstrip("\n"))
    return child.returncode, lines


def next_commands(samples: dict[str, list[Path]]) -> list[str]:
    """One command per analyze command, on the sample files."""
    return [f"resumebias {name} " + " ".join(shlex.quote(str(p)) for p in paths) for name, paths in samples.items()]


def verdict_lines(database: Path) -> list[str]:
    """The run's verdicts in a few lines: how many of each, the findings beyond noise, and why
    none is ruled out with this few résumés (from the verdicts' own notes)."""
    import re

    import duckdb

    with duckdb.connect(str(database), read_only=True) as con:
        verdicts = con.execute(
            "select finding, estimate, ci_low, ci_high, unit, verdict, note from audit.fit_verdicts union all "
            "select finding, estimate, ci_low, ci_high, unit, verdict, note from audit.seniority_verdicts"
        ).df()
    counts = verdicts["verdict"].value_counts()
    names = ("beyond_noise", "equivalent", "within_noise", "inconclusive")
    lines = ["Verdicts: " + ", ".join(f"{int(counts.get(v, 0))} {v.replace('_', ' ')}" for v in names)]
    for row in verdicts[verdicts["verdict"] == "beyond_noise"].itertuples(index=False):
        lines.append(
            f"  beyond noise: {row.finding} {row.estimate:+.2f} {row.unit} (95% CI {row.ci_low:+.2f} to {row.ci_high:+.2f})"
        )
    needed = [
        int(n) for note in verdicts["note"].dropna() for n in re.findall(r"ruling out \S+ takes (\d+) résumés", note)
    ]
    if not counts.get("equivalent", 0) and needed:
        lines.append(
            f"  ruled out (equivalent): none; ruling out an effect the size of its margin takes {min(needed)} résumés "
            f"or more (each verdict's note), the demo has {len(LAYOUTS)}"
        )
    return lines


def summary(out: Path, samples: dict[str, list[Path]], ui_line: str | None, seconds: float) -> str:
    from resumebias_dagster.demo.screener import GAP_PENALTY

    report = out / "data" / "reports" / "audit_report.html"
    lines = [
        "",
        "=" * 80,
        f"DEMO DONE in {seconds:.0f} s. Everything it wrote is under {out}:",
        "  audit/     the audit file, the screener's models file, 2 job descriptions, 10 résumé files",
        "  data/      the DuckDB tables, the Dagster instance and the reports",
        "  samples/   the run's results as files for the analyze commands",
        "  run.log    everything above",
        f"The screener (resumebias_dagster/demo/screener.py) takes {GAP_PENALTY} points off a résumé that shows a "
        "career break (its planted defect).",
        *verdict_lines(out / "data" / "resumebias.duckdb"),
        "",
        "Next, try:",
        *(f"  {command}" for command in next_commands(samples)),
    ]
    if ui_line:
        lines.append(f"  {ui_line.removeprefix('UI: ').split('   (')[0]}   (the UI on this run)")
    lines += [
        "  resumebias run --config YOUR_AUDIT.yaml   (your own tool and résumés: docs/howto/own-tool.md)",
        f"Report: {report}",
    ]
    return "\n".join(lines)


def demo_handler(args: argparse.Namespace) -> int:
    out = Path(args.out or DEFAULT_OUT).expanduser().absolute()
    problem = out_problem(out, "--out" if args.out else "--out (default)")
    if problem:
        return fail(problem)
    began = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    audit = write_audit_folder(out)
    print(f"resumebias demo: auditing a sample screener on 10 sample résumés; writing into {out}", flush=True)
    status, lines = run_audit(audit, out)
    if status != 0:
        print(
            f"error: the demo's audit run failed (exit status {status}); its output is in {out / 'run.log'}",
            file=sys.stderr,
        )
        return status
    from resumebias_dagster.demo.samples import write_samples

    samples = write_samples(out / "data" / "resumebias.duckdb", out / "samples")
    ui_line = next((line for line in reversed(lines) if line.startswith("UI: ")), None)
    print(summary(out, samples, ui_line, time.monotonic() - began))
    return 0
