"""Progress of a quiet test run as lines with counts, instead of a row of dots per 72 tests.

A passed or skipped test prints nothing; a failure or error prints its test's
id at once; every twentieth of the run, at its end, and when a test ends half a
minute or more after the last line, a line says how many
tests are done, failed and skipped and how long the run has taken, e.g.
``tests: 1660/3320 done (50%), 0 failed, 0 skipped, 3m05s``.  With
pytest-xdist the lines come from the controller, which sees every worker's
reports.  Registered by ``tests/conftest.py``; ``-v`` keeps pytest's own
line per test.
"""

from __future__ import annotations

import time

import pytest


class CountingProgress:
    """Counts finished tests (their teardown reports) and writes a line at each step of the run."""

    LINES = 20
    QUIET_SECONDS = 30.0

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.session: pytest.Session | None = None
        self.started = time.monotonic()
        self.done = 0
        self.failed: set[str] = set()
        self.skipped = 0
        self.next_line = 0
        self.last_line = time.monotonic()

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session
        self.started = self.last_line = time.monotonic()

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(self, report: pytest.TestReport):
        """The usual category (the summary counts it) with no letter: the lines below say it."""
        if hasattr(report, "wasxfail"):
            return None
        if report.failed:
            return ("failed" if report.when == "call" else "error"), "", ""
        if report.skipped:
            return "skipped", "", ""
        if report.when == "call":
            return "passed", "", ""
        return None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            self.failed.add(report.nodeid)
            self.line("FAILED " if report.when == "call" else f"ERROR at {report.when} of ", report.nodeid)
        elif report.skipped:
            self.skipped += 1
        if report.when != "teardown":
            return
        self.done += 1
        total = self.session.testscollected if self.session is not None else 0
        if total <= 0:
            return
        step = max(10, total // self.LINES)
        if self.next_line == 0:
            self.next_line = step
        # a line per twentieth, and at least one per half minute while tests finish: the longest tests start
        # first, so the first twentieth of a run takes about a quarter of its time
        quiet = time.monotonic() - self.last_line >= self.QUIET_SECONDS
        if self.done >= self.next_line or self.done == total or quiet:
            while self.next_line <= self.done:
                self.next_line += step
            self.write(total)

    def write(self, total: int) -> None:
        self.last_line = time.monotonic()
        minutes, seconds = divmod(int(time.monotonic() - self.started), 60)
        self.line(f"tests: {self.done}/{total} done ({100 * self.done // total}%), {len(self.failed)} failed, "
                  f"{self.skipped} skipped, {minutes}m{seconds:02d}s")

    def line(self, *parts: str) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("".join(parts))


def register(config: pytest.Config) -> None:
    """Use the counting lines on a quiet or normal run's terminal (not in xdist workers, not with -v)."""
    if hasattr(config, "workerinput") or config.get_verbosity() > 0:
        return
    config.pluginmanager.register(CountingProgress(config), "perun-counting-progress")
