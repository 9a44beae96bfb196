"""A test whose xdist worker dies of a native crash runs once more, on a fresh worker; a second crash fails it.

CI once lost a worker to a fatal signal (most likely native, in XLA:CPU) in a tic-tac-toe train-step test that
passed alone 3 of 3 times and in 6 earlier full runs (jax's CPU executables have known native crashes, e.g.
jax-ml/jax#28908). A crash is still reported: the worker's fatal-error dump stays in the output and the summary
counts a "rerun" (an "R" in the progress line, not the "F" pytest would print for an outcome it does not know); a
test that crashes its worker twice fails as before. Loaded by conftest.py; with -p crashes in
any pytest run.
"""
import pytest

_crashed: set[str] = set()  # node ids whose worker has died once (the controller's memory)


@pytest.hookimpl(optionalhook=True)  # an xdist hook: without xdist there are no workers to lose
def pytest_handlecrashitem(crashitem, report, sched):
  if crashitem in _crashed:
    return
  _crashed.add(crashitem)
  sched.mark_test_pending(crashitem)
  report.outcome = "rerun"
  report.longrepr = f"{report.longrepr}; running it once more on a fresh worker"


def pytest_report_teststatus(report):
  if report.outcome == "rerun":
    return "rerun", "R", "RERUN"
