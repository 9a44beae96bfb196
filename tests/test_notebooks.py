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


def test_ablations_notebook(monkeypatch):
  outputs = _run("ablations", monkeypatch)
  text = _text(outputs)
  # The shipped 4-seed sweep: 2 combinations x 4 seeds x evaluations at steps 15, 30, 45 and 60.
  assert "32 result rows" in text
  assert "| search.num_simulations=32 | 60 | 4 | 593 (505 to 680) |" in text
  assert sum("image/png" in o.get("data", {}) for o in outputs) == 3
