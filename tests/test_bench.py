import argparse
import json
import math
import subprocess
import sys

import pytest

from conftest import ROOT, batched_init, run_module, xla_env


def test_bench_reports_every_figure_against_its_floor(tmp_path, capfd):
  out = tmp_path / "bench.json"
  r = subprocess.run([sys.executable, "-m", "experiments.bench", "--game", "tictactoe", "--preset", "smoke",
                      "--repeats", "2", "--cpu-devices", "2", "--json", str(out)], cwd=ROOT, capture_output=True,
                     text=True, timeout=600)
  assert r.returncode == 0, r.stderr[-2000:]
  result = json.loads(out.read_text())
  assert result["devices"] == 2 and "; 2 x cpu;" in r.stdout
  # The floors' FLOPs are the devices' shares summed: a forward pass over the 8 games, however they are split.
  assert result["inference_flops_per_call"] == one_device_inference_flops("tictactoe", 8)
  for key in ("compile_s", "step_s", "selfplay_s", "train_s", "selfplay_floor_s", "train_floor_s",
              "selfplay_env_steps_s", "inference_flops_per_call", "update_flops", "matmul_peak_flops_per_s",
              "selfplay_over_network_and_game", "step_over_halves"):
    assert math.isfinite(result[key]) and result[key] > 0, key
  # Positions follow from the timed step: 8 games x 4 plies each call.
  assert math.isclose(result["selfplay_positions_per_s"], 32 / result["selfplay_s"], rel_tol=1e-9)
  assert math.isclose(result["network_evaluations_per_s"], 32 * 5 / result["selfplay_s"], rel_tol=1e-9)
  assert "self-play / floor" in r.stdout and "median of 2" in r.stdout
  assert "self-play / (forward passes + game steps)" in r.stdout and "train_step / (self-play + training half)" in r.stdout
  # The refusals need no process of their own (`conftest.run_module`).
  code, _, err = run_module(capfd, "experiments.bench", "--game", "tictactoe", "--set", "search.nope=1")
  assert code == 2 and "search.nope" in err
  code, _, err = run_module(capfd, "experiments.bench", "--game", "tictactoe", "--cpu-devices", "two")
  assert code == 2 and "--cpu-devices" in err and "Traceback" not in err
  code, _, err = run_module(capfd, "experiments.bench", "--game", "tictactoe", "--checkpoint", str(tmp_path / "none"))
  assert code == 2 and "--checkpoint" in err and "Traceback" not in err
  r = subprocess.run([sys.executable, "-m", "experiments.bench", "--game", "tictactoe", "--preset", "smoke",
                      "--cpu-devices", "3"], cwd=ROOT, capture_output=True, text=True, timeout=300, env=xla_env())
  assert r.returncode == 2 and "device count 3" in r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]


def one_device_inference_flops(game: str, positions: int) -> float:
  """XLA's FLOPs for one forward pass of the game's smoke network over `positions` positions, on one device."""
  import jax
  import azjax
  from azjax import bench
  program = azjax.build(azjax.preset(game, "smoke"))
  obs = batched_init(program.env)(jax.random.split(jax.random.PRNGKey(0), positions)).observation
  params, bn_state = program.network.init(jax.random.PRNGKey(1), obs[:1])
  return bench._flops(jax.jit(lambda x: program.network.apply(params, bn_state, x, False)[0]).lower(
      obs.astype("float32")))


def test_the_floors_split_their_work_over_the_devices_as_the_step_does():
  """`bench.on_every_device` runs on each device of the mesh at once, each on its own share of the batch."""
  code = ("import jax, jax.numpy as jnp\n"
          "from azjax import bench, train_step\n"
          "mesh = train_step.make_mesh()\n"
          "share = bench.split(jnp.arange(8.0), mesh.size)\n"
          "out = bench.on_every_device(lambda x: x + 100 * jax.lax.axis_index(train_step.AXIS), mesh)(share)\n"
          "print(mesh.size, out.tolist(), sorted(d.id for d in out.sharding.device_set))\n")
  r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                     env=xla_env("--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu"))
  assert r.returncode == 0, r.stderr[-2000:]
  assert r.stdout.split() == "2 [[0.0, 1.0, 2.0, 3.0], [104.0, 105.0, 106.0, 107.0]] [0, 1]".split()


def test_peer_comparison_runs_azjax_at_the_peers_settings(tmp_path, capfd):
  from experiments import peer
  code, _, err = run_module(capfd, "experiments.peer", "--pgx", str(tmp_path / "nowhere"))
  assert code == 2 and "examples/alphazero/train.py" in err
  args = argparse.Namespace(game="go9",
                            blocks=1, channels=8, simulations=4, selfplay_batch=4, plies=8, training_batch=16, seed=0,
                            iterations=3)
  config = peer.azjax_config(args)
  assert (config.search.algorithm, config.train.optimizer, config.train.learning_rate) == ("gumbel", "adam", 1e-3)
  assert peer.azjax_config(argparse.Namespace(**dict(vars(args), game="chess"))).game == "chess"
  # As many positions trained on as generated, as in the example: 4 games x 8 plies = 2 updates of 16.
  assert config.train.updates_per_step * config.train.batch_size == 4 * 8 == config.replay.window
  r = subprocess.run([sys.executable, "-m", "experiments.peer", "--pgx", "-", "--only", "azjax", "--iterations", "3",
                      "--selfplay-batch", "4", "--plies", "8", "--training-batch", "16", "--channels", "8",
                      "--blocks", "1", "--simulations", "4", "--out", str(tmp_path / "out")], cwd=ROOT,
                     capture_output=True, text=True, timeout=600)
  assert r.returncode == 0, r.stderr[-2000:]
  result = json.loads((tmp_path / "out" / "results.json").read_text())
  (row,) = result["rows"]
  assert row["system"] == "azjax" and row["iterations"] == 3 and row["positions_per_iteration"] == 32
  assert math.isclose(row["seconds_per_million_positions"], row["median_s"] / 32 * 1e6)


def test_bench_memory_and_precision(tmp_path):
  out = tmp_path / "bench.json"
  r = subprocess.run([sys.executable, "-m", "experiments.bench", "--game", "connect_four", "--preset", "smoke",
                      "--measure", "memory,precision", "--budget-gb", "1", "--repeats", "1", "--json", str(out)], cwd=ROOT,
                     capture_output=True, text=True, timeout=600)
  assert r.returncode == 0, r.stderr[-2000:]
  result = json.loads(out.read_text())
  # A game's search tree and state grow with the batch; the replay stores a position in a few bytes
  # (42 cells x 2 planes as bits, 7 policy entries; test_replay checks chess against the dense layout).
  assert result["selfplay_bytes_per_game"] > 0 and 0 < result["replay_bytes_per_position"] < 100
  (b0, b1, b2), (t0, t1, t2) = result["memory_batches"], result["memory_bytes"]  # the line through the largest two
  assert (b0, b1, b2) == (8, 16, 32) and result["selfplay_bytes_per_game"] == (t2 - t1) / (b2 - b1)
  fixed = result["selfplay_fixed_bytes"]
  assert result["memory_fit_error"] == pytest.approx((fixed + 8 * result["selfplay_bytes_per_game"] - t0) / t0)
  assert result["largest_selfplay_batch"] == int((1e9 - result["selfplay_fixed_bytes"])
                                                 // result["selfplay_bytes_per_game"])
  assert 0 <= result["bf16_value_mean_abs_error"] < 0.1 and result["bf16_policy_argmax_agreement"] > 0.5
  assert "compile_s" not in result  # throughput was not asked for
  r = subprocess.run([sys.executable, "-m", "experiments.bench", "--game", "chess", "--measure", "speed"], cwd=ROOT,
                     capture_output=True, text=True, timeout=300)
  assert r.returncode == 2 and "throughput, memory, precision" in r.stderr


def test_the_self_play_floor_counts_the_calls_playout_caps_make():
  from azjax import bench, selfplay
  from azjax.config import apply_overrides
  from azjax.presets import preset
  full = apply_overrides(preset("go9", "cpu"), ["selfplay.full_search_fraction=1.0"])
  assert bench.search_calls(full, range(1, 6)) == 16 * (16 + 1)  # 16 plies, each a root evaluation and 16 simulations
  # The cpu preset searches the plies whose coin comes up (a quarter) with 16 simulations and the rest with 4:
  # each step's floor counts its own coins' calls (not 272 every step, which put the measured step below
  # its floor), and the bench, timing steps 1..repeats, takes their median as it does the times.
  capped = preset("go9", "cpu")
  assert (capped.selfplay.full_search_fraction, capped.selfplay.fast_simulations) == (0.25, 4)
  heads = [int(selfplay.playout_coins(capped.selfplay, step).sum()) for step in range(1, 6)]
  calls = [h * 17 + (16 - h) * 5 for h in heads]
  assert [bench.search_calls(capped, [step]) for step in range(1, 6)] == calls
  assert bench.search_calls(capped, range(1, 6)) == sorted(calls)[2] < 272


def test_the_training_floor_trains_the_auxiliary_heads_the_step_trains():
  """The floor's updates carry every auxiliary head the config trains (each adds FLOPs): XLA dropped the ownership
  head once (its loss was not in the floor's update, and nothing else reads it)."""
  import azjax
  from azjax import bench, learner, train_step as train_lib

  def flops(game, *extra):
    program = azjax.build(azjax.apply_overrides(azjax.preset(game, "smoke"), list(extra)))
    return bench.training_floor(program, train_lib.make_mesh())[1]

  heads = {"ownership": ("go9", 1.5), "moves_left": ("go9", 1.0), "opponent_policy": ("go9", 0.15),
           "future_position": ("go9", 0.25), "material_change": ("chess", 0.5)}
  assert set(heads) == set(learner.AUX_LOSSES)
  plain = {game: flops(game) for game in ("go9", "chess")}
  for name, (game, weight) in heads.items():
    assert flops(game, f"network.{name}={weight}") > plain[game] * 1.0001, name


def test_the_matmul_peak_multiplies_numbers_of_one_scale_however_often_it_runs():
  """`bench.matmul_peak` times repeated calls of one chain of products; each call starts from the last one's
  result. Rescaled by a constant, the numbers fell to zero within three calls, so later calls timed zeros."""
  import jax  # noqa: PLC0415
  import jax.numpy as jnp  # noqa: PLC0415

  from azjax import bench  # noqa: PLC0415
  n = 256
  a = jax.random.normal(jax.random.PRNGKey(0), (n, n), jnp.float32)
  x = a
  for _ in range(12):  # the peak's warm-up and repeats, and more
    x = bench.matmul_chain(a, x)
  rms = float(jnp.sqrt(jnp.mean(jnp.square(x))))
  assert math.isclose(rms, 1.0, rel_tol=1e-3) and bool(jnp.isfinite(x).all())
  assert float(jnp.abs(x).min()) < float(jnp.abs(x).max()) and float(jnp.abs(x).max()) < 100.0
