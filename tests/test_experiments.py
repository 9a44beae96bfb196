import csv
import subprocess
import sys

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import azjax
from azjax.checkpoint_files import steps
from conftest import ROOT, run_module


def _run(module, *args, timeout=600):
  return subprocess.run([sys.executable, "-m", f"experiments.{module}", *args], cwd=ROOT, capture_output=True,
                        text=True, timeout=timeout)


@pytest.mark.parametrize("game", azjax.GAMES)
def test_every_experiment_has_a_help(game, capfd):
  module = {"go": "go", "go9": "go9"}.get(game, game)
  code, out, _ = run_module(capfd, f"experiments.{module}", "--help")
  assert code == 0 and "--preset" in out
  # The field table: one column per preset, each holding that preset's value.
  header = next(line.split() for line in out.splitlines() if line.split()[:1] == ["field"])
  assert header == ["field", *azjax.PRESETS]
  sims = next(line.split() for line in out.splitlines() if line.split()[:1] == ["search.num_simulations"])
  assert sims[1:] == [str(azjax.preset(game, p).search.num_simulations) for p in azjax.PRESETS]
  assert sims[1] == "800"  # the paper's


def test_smoke_run_then_resume_from_the_command_line(tmp_path, capfd):
  run_dir = tmp_path / "run"
  r = _run("tictactoe", "--preset", "smoke", "--run-dir", str(run_dir), "--no-progress")
  assert r.returncode == 0, r.stderr[-2000:]
  assert "evaluation against the uniform random player" in r.stdout
  for name in ["config.json", "metrics.csv", "evals.csv", "run.log", "tb", "checkpoints"]:
    assert (run_dir / name).exists(), name
  r = _run("tictactoe", "--resume", str(run_dir), "--set", "train.num_steps=6", "--set", "run.eval_every=2",
           "--no-progress")
  assert r.returncode == 0, r.stderr[-2000:]
  assert "trained 2 steps" in r.stdout and "steps 5-6 (resumed at 4)" in r.stdout  # this run's steps, not all
  with (run_dir / "evals.csv").open() as f:
    evals = [(int(row["step"]), row["opponent"]) for row in csv.DictReader(f)]
  # The first run evaluated at its end (step 4); the resumed one at 6, against the anchor and steps 2 and 4.
  assert evals == [(4, "random"), (6, "random"), (6, "step2"), (6, "step4")]
  with (run_dir / "elo.csv").open() as f:
    assert [int(row["step"]) for row in csv.DictReader(f)] == [4, 6]
  assert (run_dir / "elo.png").stat().st_size > 1000
  with (run_dir / "metrics.csv").open() as f:
    rows = list(csv.DictReader(f))
  assert [int(row["step"]) for row in rows] == [1, 2, 3, 4, 5, 6]
  assert all(float(row["positions_per_s"]) > 0 for row in rows)
  # Resumed once more (in this process: it compiles nothing), the finished run says so and trains nothing.
  code, out, err = run_module(capfd, "experiments.tictactoe", "--resume", str(run_dir), "--no-progress")
  assert code == 0, err[-2000:]
  assert "already reached train.num_steps=6" in err and "trained 0 steps" in out and "(at step 6)" in out
  with (run_dir / "metrics.csv").open() as f:
    assert len(list(csv.DictReader(f))) == 6
  # A step's own folder resumes only if it is the latest: an older one is refused by name, nothing trained.
  older = [s for s in steps(run_dir / "checkpoints") if s < 6][-1]
  code, out, err = run_module(capfd, "experiments.tictactoe", "--resume", str(run_dir / "checkpoints" / str(older)))
  assert code == 2 and f"latest checkpoint, step 6, not step {older}" in err, err[-2000:]
  code, out, err = run_module(capfd, "experiments.tictactoe", "--resume", str(run_dir / "checkpoints" / "6"),
                              "--no-progress")
  assert code == 0 and "already reached train.num_steps=6" in err, err[-2000:]
  with (run_dir / "metrics.csv").open() as f:
    assert len(list(csv.DictReader(f))) == 6
  # TensorBoard, read by its own reader, shows what metrics.csv holds: each step once, none hidden by a
  # resume's purge (it hides the steps at and after the one it names).
  tb = EventAccumulator(str(run_dir / "tb"))
  tb.Reload()
  assert [e.step for e in tb.Scalars("train/loss")] == [1, 2, 3, 4, 5, 6]
  assert [e.step for e in tb.Scalars("eval/elo")] == [4, 6]


# The cpu preset's switches that change what a step computes, read from the preset so that the test follows it.
_CPU_SWITCHES = ("network.policy_head", "network.attacks", "network.history", "selfplay.max_plies",
                 "selfplay.adjudicate_material", "train.q_ratio")


@pytest.mark.parametrize("game, search, extra", [("othello", "puct", ()), ("go9", "puct", ()), ("go9", "gumbel", ()),
                                                 ("go", "puct", ()), ("chess", "puct", ()), ("shogi", "puct", ()),
                                                 ("chess", "gumbel", _CPU_SWITCHES)])
def test_smoke_preset_trains(game, search, extra):
  """Every game's smoke preset compiles and takes real steps (tic-tac-toe and connect four run whole elsewhere);
  chess also with its cpu preset's switches (AlphaZero's policy planes, the attack planes, two positions of
  history, material adjudication, Lc0's q_ratio)."""
  import jax
  import numpy as np
  cpu = azjax.preset(game, "cpu")
  switches = [f"{field}={getattr(getattr(cpu, field.split('.')[0]), field.split('.')[1])}" for field in extra]
  config = azjax.apply_overrides(azjax.preset(game, "smoke"),
                                 ["selfplay.chunk_plies=8", f"search.algorithm={search}", *switches])
  program, mesh = azjax.build(config), azjax.make_mesh()
  state = azjax.init_state(program, mesh)
  step = azjax.make_train_step(program, mesh)
  for _ in range(2):
    state, metrics = step(state)
  assert int(state.replay.written.sum()) == 2 * 8 * config.selfplay.batch_size
  assert all(np.isfinite(float(v)) for v in jax.device_get(metrics).values())
