"""`resumebias run`'s progress: plain lines in a log, a live bar on a terminal, an estimate
of what is left from the runs already done."""

import io

import pytest

from resumebias_dagster.progress import StudyProgress, estimate_left


def test_estimate_uses_each_jobs_mean_and_the_overall_mean_for_new_jobs():
    done = [("inputs", 100.0), ("fit", 10.0), ("fit", 20.0)]
    assert estimate_left(done, ["fit", "fit"]) == pytest.approx(30.0)
    assert estimate_left(done, ["tables"]) == pytest.approx(130.0 / 3)
    assert estimate_left([], ["fit"]) is None


def test_a_log_gets_a_line_as_each_run_starts_and_ends_and_no_bar():
    out = io.StringIO()
    progress = StudyProgress(["inputs", "fit"], out)
    assert not progress.live
    progress.start("inputs", "study_inputs")
    progress.finish(True)
    progress.start("fit", "fit_scores_job [a|m]")
    progress.finish(False)
    progress.close()
    progress.close()
    lines = out.getvalue().splitlines()
    assert lines[0] == "study_inputs: started"
    assert lines[1].startswith("study_inputs: succeeded in ")
    assert lines[2] == "fit_scores_job [a|m]: started"
    assert lines[3].startswith("fit_scores_job [a|m]: FAILED in ")
    assert lines[4].startswith("2 of 2 runs in ") and len(lines) == 5
    assert "\x1b[" not in out.getvalue()


def test_a_terminal_gets_a_live_bar_with_what_runs_and_what_is_left():
    out = io.StringIO()
    progress = StudyProgress(["inputs", "fit", "fit"], out, live=True)
    progress.start("inputs", "study_inputs")
    progress.finish(True)
    progress.start("fit", "fit_scores_job [a|m]")
    assert progress.left_text().startswith("about ")
    progress._bar.refresh()
    shown = out.getvalue()
    assert "fit_scores_job [a|m]" in shown and "1/3" in shown and "study_inputs: succeeded" in shown
    progress.close()


@pytest.mark.parametrize(
    "label",
    ["seniority_predictions_job [gemma3-270m]", "fit_scores_job [staff-engineer|gpt5]", "fit_scores_job [bold]"],
)
def test_the_live_lines_keep_the_partition(label):
    # Rich reads "[word]" as markup and dropped it: issue 25, item 8.
    out = io.StringIO()
    progress = StudyProgress(["a"], out, live=True)
    progress.start("a", label)
    progress.finish(True)
    progress.close()
    assert f"{label}: succeeded in " in out.getvalue()


def test_a_step_gets_its_line_in_a_log_and_above_the_bar():
    for live in (False, True):
        out = io.StringIO()
        progress = StudyProgress(["fit"], out, live=live)
        progress.start("fit", "fit_scores_job [staff-engineer|gpt5]")
        progress.step("fit_scores", "staff-engineer|gpt5", 12.34, True)
        progress.step("fit_plots", None, 0.5, False)
        progress.finish(True)
        progress.close()
        shown = out.getvalue()
        assert "  fit_scores [staff-engineer|gpt5]: succeeded in 12.3 s" in shown
        assert "  fit_plots: FAILED in 0.5 s" in shown
        if not live:  # a log also says which run is under way, before its steps end
            assert shown.splitlines()[:3] == [
                "fit_scores_job [staff-engineer|gpt5]: started",
                "  fit_scores [staff-engineer|gpt5]: succeeded in 12.3 s",
                "  fit_plots: FAILED in 0.5 s",
            ]
            assert "\r" not in shown


def test_a_log_says_when_a_step_starts_and_that_it_still_runs():
    # Issue 41: a log printed nothing for 23 minutes while fine_tuned_classifiers trained.
    out = io.StringIO()
    progress = StudyProgress(["inputs"], out, heartbeat_s=0)  # no heartbeat thread: beat() by hand
    progress.start("inputs", "study_inputs")
    progress.step_started("fine_tuned_classifiers", None)
    progress.beat()
    progress.step("fine_tuned_classifiers", None, 12.0, True)
    progress.beat()  # nothing is running: no line
    progress.finish(True)
    progress.close()
    lines = out.getvalue().splitlines()
    assert lines[1] == "  fine_tuned_classifiers: started"
    assert lines[2].startswith("  fine_tuned_classifiers: still running after 0:0")
    assert lines[3] == "  fine_tuned_classifiers: succeeded in 12.0 s"
    assert lines[4].startswith("study_inputs: succeeded in ")


def test_the_heartbeat_names_a_step_that_runs_long():
    import time

    out = io.StringIO()
    progress = StudyProgress(["fit"], out, heartbeat_s=0.01)
    progress.start("fit", "fit_scores_job [a|m]")
    progress.step_started("fit_scores", "a|m")
    deadline = time.monotonic() + 60  # generous: only the order of events matters, not the speed
    while "still running" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    progress.step("fit_scores", "a|m", 1.0, True)
    progress.finish(True)
    progress.close()
    assert "  fit_scores [a|m]: still running after 0:00" in out.getvalue()
