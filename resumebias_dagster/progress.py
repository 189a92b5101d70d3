"""What `resumebias run` shows while it works.

Every finished step prints one line as it ends (step, partition, outcome, seconds), every
finished run one more (job, partition, outcome, seconds). On a terminal a live bar (rich) sits
under those lines: runs done of the plan, the run in progress, the time elapsed and an
estimate of what is left. Written to a file or a pipe, only the lines are printed (and one
when a run or a step starts, so a log says what is under way), flushed as they come, with no
bar redraws (issue 26, item 8); a step still running says so every ``HEARTBEAT_S`` (a log was
silent for 23 minutes while a classifier trained, issue 41).
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import TextIO


def estimate_left(done: Sequence[tuple[str, float]], remaining: Sequence[str]) -> float | None:
    """Seconds the ``remaining`` runs (their job names) will take: each at the mean time of
    the finished runs of its job, else of all finished runs; None before any run finished."""
    if not done:
        return None
    by_job: dict[str, list[float]] = defaultdict(list)
    for job, seconds in done:
        by_job[job].append(seconds)
    overall = sum(s for _, s in done) / len(done)
    return sum(sum(by_job[job]) / len(by_job[job]) if job in by_job else overall for job in remaining)


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


HEARTBEAT_S = 60.0


class StudyProgress:
    """Progress of a plan of runs: ``start(job, label)`` before each, ``finish(ok)`` after."""

    def __init__(self, jobs: Sequence[str], out: TextIO, live: bool | None = None, heartbeat_s: float = HEARTBEAT_S):
        self.jobs = list(jobs)
        self.out = out
        self.live = out.isatty() if live is None else live
        self.done: list[tuple[str, float]] = []
        self.began = time.monotonic()
        self._started = self.began
        self._label = ""
        self._bar = None
        self._closed = False
        # The steps under way (label -> when it started), and the heartbeat that names them.
        self._running: dict[str, float] = {}
        self._lock = threading.Lock()
        self._heartbeat_s = heartbeat_s
        self._stop = threading.Event()
        self._beating: threading.Thread | None = None
        if self.live:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            console = Console(file=out, force_terminal=True)
            self._bar = Progress(
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.fields[left]}"),
                console=console,
                transient=True,
            )
            self._task = self._bar.add_task("starting", total=len(self.jobs), left="")
            self._bar.start()

    def left_text(self) -> str:
        left = estimate_left(self.done, self.jobs[len(self.done) :])
        return "" if left is None else f"about {_clock(left)} left"

    def _line(self, line: str) -> None:
        if self._bar is not None:
            self._bar.console.print(line, highlight=False, markup=False)  # a partition reads like markup
        else:
            print(line, file=self.out, flush=True)

    def note(self, text: str) -> None:
        """Lines between the runs (a table of what a run found), above the live bar if any."""
        for line in text.rstrip("\n").split("\n"):
            self._line(line)

    def start(self, job: str, label: str) -> None:
        self._label, self._started = label, time.monotonic()
        if self._bar is not None:
            self._bar.update(self._task, description=label, left=self.left_text())
        else:
            self._line(f"{label}: started")

    def step_started(self, step_key: str, partition: str | None) -> None:
        """A step of the run in progress started: a line in a log, and the heartbeat names it."""
        label = step_key + (f" [{partition}]" if partition else "")
        with self._lock:
            self._running[label] = time.monotonic()
        if self._bar is None:
            self._line(f"  {label}: started")
        if self._beating is None and self._heartbeat_s > 0:
            self._beating = threading.Thread(target=self._beat_every, name="progress-heartbeat", daemon=True)
            self._beating.start()

    def beat(self) -> None:
        """A line for each step still running, with how long it has run."""
        now = time.monotonic()
        with self._lock:
            running = list(self._running.items())
        for label, since in running:
            self._line(f"  {label}: still running after {_clock(now - since)}")

    def _beat_every(self) -> None:
        while not self._stop.wait(self._heartbeat_s):
            self.beat()

    def step(self, step_key: str, partition: str | None, seconds: float, ok: bool) -> None:
        """A step of the run in progress ended (called as it ends, not when the run does)."""
        label = step_key + (f" [{partition}]" if partition else "")
        with self._lock:
            self._running.pop(label, None)
        self._line(f"  {label}: {'succeeded' if ok else 'FAILED'} in {seconds:.1f} s")

    def finish(self, ok: bool) -> float:
        seconds = time.monotonic() - self._started
        self.done.append((self.jobs[len(self.done)], seconds))
        self._line(f"{self._label}: {'succeeded' if ok else 'FAILED'} in {seconds:.1f} s")
        if self._bar is not None:
            self._bar.update(self._task, advance=1, left=self.left_text())
        return seconds

    def close(self) -> None:
        """Stop the bar and print the totals (once)."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._beating is not None:
            self._beating.join(timeout=5)
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        total = time.monotonic() - self.began
        print(f"{len(self.done)} of {len(self.jobs)} runs in {_clock(total)}", file=self.out, flush=True)
