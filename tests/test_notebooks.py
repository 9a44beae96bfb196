"""Every notebook in colab/ runs top to bottom at smoke size (AZJAX_SMOKE=1), as CI's proof that it works."""

import os
import time

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import ROOT

COLAB = os.path.join(ROOT, "colab")


def _run(name, monkeypatch):
  monkeypatch.setenv("AZJAX_SMOKE", "1")
  monkeypatch.setenv("JAX_PLATFORMS", "cpu")
  nb = nbformat.read(os.path.join(COLAB, f"{name}.ipynb"), as_version=4)
  started = time.time()
  NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": COLAB}}).execute()
  print(f"{name}.ipynb ran in {time.time() - started:.0f} s")
  return [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]


def _text(outputs):
  return "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") + o.get("data", {}).get("text/markdown", "")
                 for o in outputs)


def test_train_notebook(monkeypatch):
  outputs = _run("train", monkeypatch)
  text = _text(outputs)
  assert "trained to step 4" in text and "against the uniform random player" in text
  assert any("image/png" in o.get("data", {}) for o in outputs), "the live plots were drawn"


def test_play_notebook(monkeypatch):
  outputs = _run("play", monkeypatch)
  assert sum("image/svg+xml" in o.get("data", {}) for o in outputs) >= 2, "the board is drawn before and after"
  text = _text(outputs)
  assert "| move | probability | visits | value |" in text and "the agent plays" in text


def test_ablations_notebook(monkeypatch, tmp_path):
  """The notebook reads the sweep it is given and reports each combination's mean and 95% t-interval over seeds
  at its last evaluation, here on a sweep written by this test with numbers worked out by hand."""
  import csv
  import json
  (tmp_path / "sweep.json").write_text(json.dumps(
      {"game": "connect_four", "preset": "smoke", "set": [], "grid": ["search.num_simulations=8,32"], "seeds": [0, 1, 2]}))
  fields = ["combination", "search.num_simulations", "seed", "step", "positions", "elo", "elo_lo", "elo_hi",
            "score_vs_random", "loss"]
  # Elo at step 20: 100, 110, 120 (sims 8) and 300, 330, 360 (sims 32); at step 10 all 0.
  elo = {8: (100.0, 110.0, 120.0), 32: (300.0, 330.0, 360.0)}
  with (tmp_path / "results.csv").open("w", newline="") as f:
    w = csv.DictWriter(f, fields)
    w.writeheader()
    for sims in (8, 32):
      for seed in range(3):
        for step in (10, 20):
          e = elo[sims][seed] if step == 20 else 0.0
          w.writerow({"combination": f"search.num_simulations={sims}", "search.num_simulations": sims, "seed": seed,
                      "step": step, "positions": 100 * step, "elo": e, "elo_lo": e - 50, "elo_hi": e + 50,
                      "score_vs_random": 0.5 + step / 100, "loss": 2.0 - step / 100})
  monkeypatch.setenv("AZJAX_SWEEP", str(tmp_path))
  outputs = _run("ablations", monkeypatch)
  text = _text(outputs)
  assert "12 result rows" in text
  t = 4.302652729911275  # Student's t, 97.5% quantile, 2 degrees of freedom
  for mean, sd in ((110.0, 10.0), (330.0, 30.0)):  # the three seeds' mean and standard deviation
    half = t * sd / 3 ** 0.5
    assert f"| 20 | 3 | {mean:.3g} ({mean - half:.3g} to {mean + half:.3g}) |" in text, (mean, text[-1500:])
  assert sum("image/png" in o.get("data", {}) for o in outputs) == 3
