import os
import re
import subprocess
import sys
import textwrap

from conftest import ROOT


def test_a_test_that_kills_its_worker_runs_again_once_and_a_second_kill_fails_it(tmp_path):
  # Two tests under xdist with this suite's crash hook: one aborts its worker on its first run only (a marker
  # file remembers), the other on every run. The first passes on its second run; the second fails after two.
  (tmp_path / "test_abort.py").write_text(textwrap.dedent(f"""
      import os, pathlib

      def test_aborts_once():
        mark = pathlib.Path({str(tmp_path / "ran")!r})
        if not mark.exists():
          mark.touch()
          os.abort()
        assert os.environ.get("JAX_ENABLE_COMPILATION_CACHE") == "false"  # the rerun's worker: no cache

      def test_aborts_always():
        os.abort()
      """))
  env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tests"))
  env.pop("JAX_ENABLE_COMPILATION_CACHE", None)  # set in this process too if one of the suite's workers crashed
  out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "1", "-p", "crashes", "-p", "no:cacheprovider",
                        "-rA", "test_abort.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
  text = out.stdout + out.stderr
  assert out.returncode == 1, text
  assert "PASSED test_abort.py::test_aborts_once" in text, text
  assert "FAILED test_abort.py::test_aborts_always" in text, text
  assert "1 failed, 1 passed" in text and "2 rerun" in text, text
  # The progress line marks each rerun "R", where pytest prints "F" for an outcome it does not know.
  letters = "".join(re.findall(r"(?m)^([RF.]+)(?=\[gw|\s+\[100%\]|$)", out.stdout))
  assert sorted(letters) == sorted("RR.F"), out.stdout
