import json
import math
import subprocess
import sys

from conftest import ROOT


def test_bench_reports_every_figure_against_its_floor(tmp_path):
  out = tmp_path / "bench.json"
  r = subprocess.run([sys.executable, "-m", "experiments.bench", "--game", "tictactoe", "--preset", "smoke",
                      "--repeats", "2", "--json", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
  assert r.returncode == 0, r.stderr[-2000:]
  result = json.loads(out.read_text())
  for key in ("compile_s", "step_s", "selfplay_s", "train_s", "selfplay_floor_s", "train_floor_s",
              "inference_flops_per_call", "update_flops", "matmul_peak_flops_per_s"):
    assert math.isfinite(result[key]) and result[key] > 0, key
  # Positions follow from the timed step: 8 games x 4 plies each call.
  assert math.isclose(result["selfplay_positions_per_s"], 32 / result["selfplay_s"], rel_tol=1e-9)
  assert math.isclose(result["network_evaluations_per_s"], 32 * 5 / result["selfplay_s"], rel_tol=1e-9)
  assert "self-play / floor" in r.stdout and "median of 2" in r.stdout
  r = subprocess.run([sys.executable, "-m", "experiments.bench", "--game", "tictactoe", "--set", "search.nope=1"],
                     cwd=ROOT, capture_output=True, text=True, timeout=300)
  assert r.returncode == 2 and "search.nope" in r.stderr
