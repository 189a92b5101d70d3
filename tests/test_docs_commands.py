"""Every shell command the how-to pages give (docs/howto/*.md, docs/first-run.md) runs in a test
(issue 41). The commands are read from the pages' fenced shell blocks. Each one is run here,
verbatim, in a fresh folder with the input files it names written first; or it is run by another
test, which is named and must hold the command's own words; or it is listed with the reason it
cannot run in CI. A new command on a page that none of the three lists fails the first test."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from resumebias_dagster.testing.processes import resumebias_env

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
SHELL = {"bash", "sh", "shell", "console"}
FENCE = re.compile(r"^[ \t]*(```|~~~)[ \t]*(\w*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)
MAX_LINE = 100  # a longer line is split with `\` (the site wraps code, but a reader copies lines)


def pages() -> list[Path]:
    found = sorted((DOCS / "howto").glob("*.md"))
    return found + ([DOCS / "first-run.md"] if (DOCS / "first-run.md").exists() else [])


def _strip_comment(line: str) -> str:
    """``line`` without a trailing ``# comment`` (a ``#`` outside quotes, after a blank)."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
    return line.rstrip()


def shell_blocks(text: str) -> list[str]:
    """The bodies of the fenced shell blocks of a page, their indentation removed."""
    blocks = []
    for match in FENCE.finditer(text):
        if match.group(2) in SHELL:
            lines = match.group(3).splitlines()
            indent = min((len(s) - len(s.lstrip()) for s in lines if s.strip()), default=0)
            blocks.append("\n".join(s[indent:] for s in lines))
    return blocks


def commands(block: str) -> list[str]:
    """The commands of a shell block: lines joined where they end in ``\\``, comments removed."""
    found, pending = [], ""
    for line in block.splitlines():
        if pending:
            line = line.lstrip()
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1].rstrip() + " "
            continue
        command = _strip_comment(pending + line).strip()
        pending = ""
        if command:
            found.append(command)
    return found


def documented() -> dict[str, str]:
    """Every command of the how-to pages -> the page it is on."""
    return {
        command: str(page.relative_to(REPO))
        for page in pages()
        for block in shell_blocks(page.read_text(encoding="utf-8"))
        for command in commands(block)
    }


# --- commands this file runs -------------------------------------------------------------


def _seniority_files(folder: Path) -> None:
    from resumebias_dagster.testing.seniority_simulation import simulate_seniority_predictions, write_study_files

    style, social = write_study_files(simulate_seniority_predictions(40, runs=2, seed=3), folder)
    Path(style).rename(folder / "test2_predictions.csv")
    Path(social).rename(folder / "test3_llm_predictions.csv")


def _analyze_inputs(folder: Path) -> None:
    from resumebias_dagster.testing.fit_simulation import simulate_fit_scores

    _seniority_files(folder)
    variants = ["baseline", "addressCountry_nigeria", "school_mit", "placebo_blank_line"]
    scores = simulate_fit_scores(["m"], ["j1", "j2"], variants, 3, resumes=6, integer=True, seed=1)
    scores.to_csv(folder / "fit_runs.csv", index=False)
    lines = []
    for resume in range(4):
        shown = [f"Brad Walsh {resume}", f"Jamal Jones {resume}"]
        for order in (shown, shown[::-1]):
            groups = {shown[0]: "white_male", shown[1]: "black_male"}
            answer = f"1. {order[resume % 2]}\n2. {order[1 - resume % 2]}"
            lines.append({"job": "backend", "model": "m", "shown": order, "groups": groups, "answer": answer})
            lines[-1]["resume"] = f"r{resume}"
    (folder / "rankings.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    from resumebias_dagster.testing.validity_simulation import deterministic_validity

    # A screener that orders 97% of its pairs right, on 40 résumés with two groups' names.
    scores, pairs = deterministic_validity(2, resumes=40, groups=("white_male", "black_female"), validity=0.97)
    rows = scores.merge(pairs[["jd", "resume_id", "variant", "group", "role", "edit"]])
    columns = ["model", "jd", "resume_id", "group", "name", "variant", "role", "edit", "run", "score"]
    rows[columns].to_csv(folder / "validity_scores.csv", index=False)


def _resume_files(folder: Path) -> None:
    from resumebias_dagster.testing.resume_files import write

    write(folder / "home" / "resumes" / "jane_doe.pdf", "Jane Doe\nSoftware Engineer")
    write(folder / "home" / "resumes" / "john_roe.docx", "John Roe\nData Analyst")
    (folder / "examples").mkdir()
    subprocess.run(["cp", "-r", str(REPO / "examples" / "own_tool"), str(folder / "examples")], check=True)


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


# page -> (write the inputs, the commands in order, a check run in the same shell afterwards).
# The check is shell too, so it sees what the commands exported or started.
RUN_HERE: dict[str, tuple[Callable[[Path], None], list[str], str]] = {
    "docs/howto/analyze.md": (
        _analyze_inputs,
        [
            "resumebias analyze test2_predictions.csv test3_llm_predictions.csv",
            "resumebias analyze test2_predictions.csv test3_llm_predictions.csv --json > pilot.json",
            "resumebias analyze-fit fit_runs.csv --json",
            "resumebias plan --pilot pilot.json --model gpt-5",
            "resumebias analyze-rank rankings.jsonl --top-k 3 --json",
            "resumebias analyze-validity validity_scores.csv --reference white_male",
            "resumebias analyze-validity validity_scores.csv --json > validity.json",
            "resumebias plan --pilot validity.json",
            "resumebias plan --pilot validity_scores.csv --kind validity_gap",
        ],
        'python -c \'import json; assert json.load(open("pilot.json"))["verdicts"]\' && '
        'python -c \'import json; assert json.load(open("validity.json"))["summary"] == {"tool": "valid"}\'',
    ),
    "docs/howto/models.md": (
        lambda folder: None,
        [
            "mkdir -p my-catalog",
            "catalog=$(python -c 'import resumebias_dagster.catalog as c; print(c.__path__[0])')",
            'cp "$catalog/models.yaml" my-catalog/',
            "export RESUMEBIAS_CATALOG_DIR=$PWD/my-catalog",
        ],
        'cmp my-catalog/models.yaml "$catalog/models.yaml" && [ "$RESUMEBIAS_CATALOG_DIR" = "$PWD/my-catalog" ]',
    ),
    "docs/howto/own-tool.md": (
        _resume_files,
        [
            "python -m resumebias_dagster.testing.fake_providers --wire scorer --port 8400 &",
            "cp ~/resumes/*.pdf ~/resumes/*.docx examples/own_tool/resumes/",
            "export ACME_SCORER_KEY=any-key PYTHONPATH=examples/own_tool",
        ],
        # The screener answers on the port the example's models.yaml names; the key is exported.
        "for i in $(seq 120); do python -c 'import socket; socket.create_connection((\"127.0.0.1\", 8400))' "
        "2>/dev/null && break; sleep 0.5; done; "
        "python -c 'import socket; socket.create_connection((\"127.0.0.1\", 8400))' && "
        "ls examples/own_tool/resumes/jane_doe.pdf examples/own_tool/resumes/john_roe.docx && "
        '[ "$ACME_SCORER_KEY" = any-key ] && python -c "import acme_scorer"; status=$?; kill %1; exit $status',
    ),
}

# command -> (the test that runs it, words that test holds which show it runs this command).
RUN_ELSEWHERE: dict[str, tuple[str, tuple[str, ...]]] = {
    # docs/first-run.md: the demo runs once (about a minute), then the page's commands on what it wrote.
    "resumebias demo": ("tests/test_demo.py", ('resumebias("resumebias demo", cwd, env)',)),
    "resumebias analyze resumebias-demo/samples/seniority_styles.csv resumebias-demo/samples/seniority_names.csv": (
        "tests/test_demo.py",
        ('PAGE = REPO / "docs" / "first-run.md"', "for command in commands[1:]"),
    ),
    "resumebias analyze-fit resumebias-demo/samples/fit_runs.csv --all": (
        "tests/test_demo.py",
        ('PAGE = REPO / "docs" / "first-run.md"', "for command in commands[1:]"),
    ),
    "resumebias analyze-rank resumebias-demo/samples/rankings.jsonl": (
        "tests/test_demo.py",
        ('PAGE = REPO / "docs" / "first-run.md"', "for command in commands[1:]"),
    ),
    "resumebias run --config examples/own_tool/audit.yaml": (
        # The whole audit of the worked example, on résumé files of twelve layouts (minutes):
        # tests/test_audit_your_own_tool.py and tests/e2e/test_report_worked_example.py run it
        # through this helper.
        "resumebias_dagster/testing/worked_example.py",
        ("shutil.copytree(EXAMPLE, example)", 'run_audit_file(example / "audit.yaml"'),
    ),
    "dagster sensor start default_automation_condition_sensor -m resumebias_dagster.definitions": (
        "tests/test_automation_sensor_command.py",
        ('COMMAND = "dagster sensor start default_automation_condition_sensor -m resumebias_dagster.definitions"',),
    ),
}

# command -> why no test runs it (a paid API key, a GPU, a service CI does not have).
NOT_RUN: dict[str, str] = {}


def test_every_command_of_the_how_to_pages_is_run_by_a_test_or_listed_with_its_reason():
    found = documented()
    here = {c for _, listed, _ in RUN_HERE.values() for c in listed}
    accounted = here | set(RUN_ELSEWHERE) | set(NOT_RUN)
    new = {c: page for c, page in found.items() if c not in accounted}
    assert not new, (
        "commands on the how-to pages that no test runs; run them in tests/test_docs_commands.py "
        f"(RUN_HERE), name the test that does (RUN_ELSEWHERE), or say why none can (NOT_RUN): {new}"
    )
    stale = sorted(accounted - set(found))
    assert not stale, f"listed in tests/test_docs_commands.py, on no page any more: {stale}"
    for page, (_, listed, _) in RUN_HERE.items():
        assert all(found[c] == page for c in listed), f"RUN_HERE[{page!r}] holds another page's command"


@pytest.mark.parametrize("command", sorted(RUN_ELSEWHERE))
def test_the_test_named_for_a_command_runs_it(command):
    test_file, evidence = RUN_ELSEWHERE[command]
    text = (REPO / test_file).read_text(encoding="utf-8")
    assert all(words in text for words in evidence), f"{test_file} no longer holds {evidence}"


def test_every_line_of_a_shell_block_fits():
    long = [
        f"{page.relative_to(REPO)}: {line[:60]}..."
        for page in pages()
        for block in shell_blocks(page.read_text(encoding="utf-8"))
        for line in block.splitlines()
        if len(line) > MAX_LINE
    ]
    assert not long, f"split these lines with `\\` (at most {MAX_LINE} characters): {long}"


def test_the_collector_reads_continuations_comments_and_indented_blocks():
    text = (
        "- a step\n\n    ```bash\n    resumebias plan \\\n      --pilot p.json  # why\n    # only a comment\n    ```\n"
    )
    assert [c for b in shell_blocks(text) for c in commands(b)] == ["resumebias plan --pilot p.json"]
    assert commands("echo '# not a comment' # a comment") == ["echo '# not a comment'"]
    assert shell_blocks("```yaml\nmodels: []\n```\n") == []


@pytest.mark.parametrize("page", sorted(RUN_HERE))
def test_the_commands_of_a_page_run_as_written(page, tmp_path):
    write_inputs, listed, check = RUN_HERE[page]
    work = tmp_path / "work"
    work.mkdir()
    write_inputs(work)
    home = work / "home"
    home.mkdir(exist_ok=True)
    env = resumebias_env(tmp_path / "data", HOME=str(home))
    # `python` and `resumebias` are the ones of the interpreter running the tests.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    if page.endswith("own-tool.md") and _port_open(8400):
        pytest.skip("port 8400, which the worked example names, is taken on this machine")
    script = "set -e\n" + "".join(f"{c}\necho '--- ran: {i}'\n" for i, c in enumerate(listed)) + check + "\n"
    started = time.monotonic()
    proc = subprocess.run(
        ["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=600, start_new_session=True
    )
    ran = proc.stdout.count("--- ran: ")
    assert proc.returncode == 0, (
        f"{page}: command {ran} failed ({listed[ran] if ran < len(listed) else 'the check'}) after "
        f"{time.monotonic() - started:.0f} s:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    assert ran == len(listed)
