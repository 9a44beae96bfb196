"""Gating (AlphaGo Zero's evaluator, `run.gate_games`): self-play plays the best network so far, and the
trained network replaces it only by winning the gating games."""

import csv
import shutil

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import azjax
from azjax import checkpoint as ckpt, train_step as train_lib


def _config(*overrides):
  return azjax.apply_overrides(azjax.preset("tictactoe", "smoke"),
                               ["run.eval_every=2", "run.gate_games=8", "run.checkpoint_every=1",
                                "run.keep_checkpoints=10", *overrides])


def _selfplay(program, state):
  step = train_lib.make_train_step(program, azjax.make_mesh(), phase="selfplay")
  return jax.device_get(step(jax.tree.map(jnp.copy, state))[0].replay)  # the step donates its input


def _differ(a, b) -> bool:
  return any(not np.array_equal(x, y) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)))


def test_selfplay_plays_the_best_network_not_the_trained_one():
  program = azjax.build(_config())
  mesh = azjax.make_mesh()
  state = azjax.init_state(program, mesh)
  other = jax.tree.map(lambda x: x + 0.5, state.params)  # a different trained network
  same = _selfplay(program, state)
  assert not _differ(same, _selfplay(program, state.replace(params=other)))  # same best: same games
  assert _differ(same, _selfplay(program, state.replace(best=state.best.replace(params=other))))
  ungated = azjax.build(_config("run.gate_games=0"))
  plain = azjax.init_state(ungated, mesh)
  assert plain.best is None
  assert _differ(_selfplay(ungated, plain), _selfplay(ungated, plain.replace(params=other)))


def test_gating_decisions_are_checkpointed_and_a_resumed_run_repeats_them(tmp_path):
  config = _config("train.num_steps=6", "run.gate_score=0.5")
  whole = azjax.train(config, tmp_path / "whole", progress=False)
  assert whole.step == 6
  with (tmp_path / "whole" / "gating.csv").open() as f:
    rows = list(csv.DictReader(f))
  assert [int(r["step"]) for r in rows] == [2, 4, 6]
  best = 0
  abstract = train_lib.abstract_state(azjax.build(config))
  shardings = train_lib.state_shardings(abstract, azjax.make_mesh())
  mngr = ckpt.manager(tmp_path / "whole" / "checkpoints", keep=10)
  for r in rows:
    assert int(r["best"]) == best  # each gate plays the network the previous ones chose
    assert int(r["promoted"]) == (float(r["score"]) > 0.5)
    best = int(r["step"]) if int(r["promoted"]) else best
    state = jax.device_get(ckpt.restore_state(mngr, abstract, shardings, int(r["step"])))
    assert int(state.best.step) == best
    if best:  # the very network trained to that step
      chosen = jax.device_get(ckpt.restore_state(mngr, abstract, shardings, best)) if best != int(r["step"]) else state
      jax.tree.map(np.testing.assert_array_equal, state.best.params, chosen.params)
      assert np.abs(np.asarray(jax.tree.leaves(state.best.params)[0])).sum() > 0
  with (tmp_path / "whole" / "metrics.csv").open() as f:
    played = {int(r["step"]): int(float(r["selfplay_network"])) for r in csv.DictReader(f)}
  assert played[3] == int(rows[0]["step"]) * int(rows[0]["promoted"])  # step 3 played step 2's choice
  # Killed after step 3's checkpoint and resumed: the same decisions and the same final state, bit for bit.
  part = tmp_path / "part"
  shutil.copytree(tmp_path / "whole", part)
  for step in (4, 5, 6):
    shutil.rmtree(part / "checkpoints" / str(step))
  azjax.train(config, part, resume=True, progress=False)
  with (part / "gating.csv").open() as f:
    assert [(r["step"], r["best"], r["promoted"]) for r in csv.DictReader(f)] == [
        (r["step"], r["best"], r["promoted"]) for r in rows]
  final = lambda run: jax.device_get(ckpt.restore_state(ckpt.manager(run / "checkpoints"), abstract, shardings, 6))
  jax.tree.map(np.testing.assert_array_equal, final(part), final(tmp_path / "whole"))


def test_gating_is_refused_without_evaluations_and_in_sweeps(tmp_path):
  with pytest.raises(azjax.ConfigError, match="run.gate_games"):
    _config("run.eval_every=0")
  with pytest.raises(azjax.ConfigError, match="run.gate_score"):
    _config("run.gate_score=0.4")
  with pytest.raises(azjax.ConfigError, match="gating is per run"):
    azjax.train(_config(), tmp_path / "sweep", seeds=[0, 1], progress=False)
