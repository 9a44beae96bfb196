"""A pytest plugin: each test's time in XLA compiles, in tracing and lowering, and its persistent-cache hits.

  PYTHONPATH=docs/results/suite COMPILE_PROFILE_OUT=profile.jsonl python -m pytest -n auto -p compile_profile ...

One JSON line per test call (xdist workers append to the same file): the test's id, its wall time, the seconds and
number of XLA backend compiles, the seconds of tracing to a jaxpr and lowering to MLIR, the persistent cache's hits
and misses, and the worker's pid. A test that runs its work in a subprocess shows only the waiting.
`summarise.py profile.jsonl [other.jsonl]` totals them by file.
"""
import json
import os
import time

import pytest
from jax import monitoring

OUT = os.environ.get("COMPILE_PROFILE_OUT", "compile_profile.jsonl")
_test = {"name": None}


def _on_duration(event: str, duration: float, **_):
  if _test["name"] is None:
    return
  if event == "/jax/core/compile/backend_compile_duration":
    _test["compile_s"] += duration
    _test["compiles"] += 1
  elif event in ("/jax/core/compile/jaxpr_trace_duration", "/jax/core/compile/jaxpr_to_mlir_module_duration"):
    _test["trace_s"] += duration


def _on_event(event: str, **_):
  if _test["name"] is not None and event == "/jax/compilation_cache/cache_hits":
    _test["hits"] += 1
  elif _test["name"] is not None and event == "/jax/compilation_cache/cache_misses":
    _test["misses"] += 1


monitoring.register_event_duration_secs_listener(_on_duration)
monitoring.register_event_listener(_on_event)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
  _test.update(name=item.nodeid, compile_s=0.0, compiles=0, trace_s=0.0, hits=0, misses=0)
  start = time.time()
  yield
  record = dict(_test, wall=time.time() - start, pid=os.getpid())
  _test["name"] = None
  with open(OUT, "a") as f:
    f.write(json.dumps(record) + "\n")
