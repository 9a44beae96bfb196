"""A test whose xdist worker dies of a native crash runs once more, on a fresh worker; a second crash fails it.

CI once lost a worker to a fatal signal (most likely native, in XLA:CPU) in a tic-tac-toe train-step test that
passed alone 3 of 3 times and in 6 earlier full runs (jax's CPU executables have known native crashes, e.g.
jax-ml/jax#28908). A crash is still reported: the worker's fatal-error dump stays in the output and the summary
counts a "rerun" (an "R" in the progress line, not the "F" pytest would print for an outcome it does not know); a
test that crashes its worker twice fails as before. Loaded by conftest.py; with -p crashes in
any pytest run.

Since then every crash seen (two local CI runs of stop 103 and 104, in two different tests) was a segmentation
fault inside jax's persistent compilation cache, serialising a freshly compiled executable for it
(`compilation_cache.put_executable_and_time`). So the workers started after a crash run without that cache: the
rerun compiles what it needs and writes nothing, at the cost of compile time in that worker alone.
"""
import os

import pytest

_crashed: set[str] = set()  # node ids whose worker has died once (the controller's memory)


@pytest.hookimpl(optionalhook=True)  # an xdist hook: without xdist there are no workers to lose
def pytest_handlecrashitem(crashitem, report, sched):
  if crashitem in _crashed:
    return
  _crashed.add(crashitem)
  os.environ["JAX_ENABLE_COMPILATION_CACHE"] = "false"  # inherited by the workers xdist starts from now on
  sched.mark_test_pending(crashitem)
  report.outcome = "rerun"
  report.longrepr = f"{report.longrepr}; running it once more on a fresh worker"


def pytest_report_teststatus(report):
  if report.outcome == "rerun":
    return "rerun", "R", "RERUN"
