import csv
import dataclasses
import io
import json
import os
import struct
import subprocess
import sys

import jax
import numpy as np
import pytest

import azjax
from azjax import checkpoint as ckpt, replay as replay_lib, rules, train_step as train_lib
from azjax.config import RunConfig
from conftest import ROOT, batched_init, batched_step, xla_env


def _smoke(game="tictactoe", *overrides):
  return azjax.apply_overrides(azjax.preset(game, "smoke"), list(overrides))


def _trained(game, *overrides, steps=3):
  """(state, metrics) after `steps` train steps of the smoke preset with `overrides` (tic-tac-toe's 3: 12 plies
  a lane, no wrap of its 128 slots)."""
  program = azjax.build(_smoke(game, *overrides))
  mesh = azjax.make_mesh()
  state = azjax.init_state(program, mesh)
  step = azjax.make_train_step(program, mesh)
  for _ in range(steps):
    state, metrics = step(state)
  return state, metrics


def test_train_step_compiles_once():
  program = azjax.build(_smoke())
  mesh = azjax.make_mesh()
  state = azjax.init_state(program, mesh)
  step = azjax.make_train_step(program, mesh)
  traces = []  # jax's tracing events: a step traced again would be compiled again (or looked up on disk)
  listener = lambda event, duration, **kwargs: traces.append(event) if event.endswith("jaxpr_trace_duration") else None
  jax.monitoring.register_event_duration_secs_listener(listener)
  try:
    counts = []
    for _ in range(3):
      state, metrics = step(state)
      counts.append(len(traces))
  finally:
    jax.monitoring.unregister_event_duration_listener(listener)
  assert counts[0] >= 1 and counts[2] == counts[0], counts  # traced at the first call only
  assert int(state.step) == 3
  # 8 games x 12 plies: every tic-tac-toe game (5-9 plies) has ended at least once.
  assert float(metrics["games"]) >= 1 and 5 <= float(metrics["mean_game_length"]) <= 9
  assert float(metrics["updates"]) == 1 and np.isfinite(float(metrics["loss"])) and float(metrics["loss"]) > 0


def test_configs_that_differ_only_outside_the_step_share_its_compiled_program():
  """A resumed run, a notebook training again and a sweep's next group of seeds reuse the compiled step
  (`train_step.compiled_train_step`, keyed by `step_structure`). The fields its key leaves out change nothing in
  the program: a config that differs in every one of them lowers to the same text."""
  changed = {"log_every": 1, "checkpoint_every": 1, "eval_every": 2, "eval_games": 4, "eval_pool": 0,
             "eval_mcts_simulations": 8, "eval_opening_plies": 0, "keep_checkpoints": 9, "max_minutes": 5.0,
             "gate_score": 0.6}
  # A new run setting is either left out of the key and added here, or kept in it (as gating is).
  assert {f.name for f in dataclasses.fields(RunConfig)} - set(changed) == {
      "gate_games", "eval_engine_games"}  # tic-tac-toe has no engine to play
  base = _smoke()
  other = _smoke("tictactoe", "seed=7", "train.num_steps=3", *(f"run.{k}={v}" for k, v in changed.items()))
  assert all(getattr(other.run, k) != getattr(base.run, k) for k in changed)
  mesh = azjax.make_mesh()

  def lowered(config):
    program = azjax.build(config)
    return train_lib.make_train_step(program, mesh).lower(train_lib.abstract_state(program)).as_text()

  assert lowered(other) == lowered(base)
  step = train_lib.compiled_train_step(azjax.build(base), mesh)
  assert train_lib.compiled_train_step(azjax.build(other), mesh) is step
  gated = _smoke("tictactoe", "run.gate_games=2", "run.eval_every=1")  # gating adds self-play's network to the state
  assert train_lib.step_structure(gated) != train_lib.step_structure(base)


def test_no_update_until_every_lane_holds_a_finished_game():
  """Rows of an empty lane would enter the batch-norm moments (the cause of go9's dead value head)."""
  program = azjax.build(_smoke("tictactoe", "train.updates_per_step=2"))  # 4 plies a step, games last 5-9
  mesh = azjax.make_mesh()
  state = azjax.init_state(program, mesh)
  step = azjax.make_train_step(program, mesh)
  before = jax.device_get((state.params, state.bn_state, state.opt_state))
  state, metrics = step(state)
  assert float(metrics["updates"]) == 0 and float(metrics["loss"]) == 0
  jax.tree.map(np.testing.assert_array_equal, before, jax.device_get((state.params, state.bn_state,
                                                                       state.opt_state)))
  for _ in range(2):  # 12 plies: every game has ended
    state, metrics = step(state)
  assert float(metrics["updates"]) == 2 and float(metrics["loss"]) > 0
  changed = jax.tree.map(lambda a, b: not np.array_equal(a, b), before[0], jax.device_get(state.params))
  assert all(jax.tree.leaves(changed))


def test_lanes_shorter_than_a_game_still_train_every_step_once_each_lane_has_finished_one():
  # 2 positions a lane, tic-tac-toe games 5-9 plies: most of the time some lane's window holds only its game in
  # progress. Training must not wait for a moment when none does (go9 on a GPU once ran 380 steps without an update).
  program = azjax.build(_smoke("tictactoe", "replay.window=16", "train.updates_per_step=2"))  # 8 games
  mesh = azjax.make_mesh()
  state = azjax.init_state(program, mesh)
  step = azjax.make_train_step(program, mesh)
  seen = []  # (every lane has finished a game, some lane's window holds no finished position, updates)
  for _ in range(8):  # 32 plies
    replay = jax.device_get(state.replay)
    state, metrics = step(state)
    seen.append((bool((replay.labelled > 0).all()), bool((replay_lib.size(replay) == 0).any()),
                 float(metrics["updates"])))
  assert any(warm and starved for warm, starved, _ in seen), seen  # the case the old gate refused
  assert all(n == 2 for warm, _, n in seen if warm), seen


def test_a_runs_discount_reaches_its_value_targets():
  # search.discount goes to the search and to the labels self-play writes inside the train step: the positions
  # of a decided game carry z, z * 0.5, z * 0.25, ... by their plies to its end (undiscounted: only 1s).
  state, _ = _trained("tictactoe", "search.discount=0.5")
  replay = jax.device_get(state.replay)
  labels = np.concatenate([replay.value[lane, :replay.labelled[lane]] for lane in range(replay.value.shape[0])])
  decided = np.abs(labels[labels != 0])
  assert decided.size and np.allclose(np.log2(decided), np.round(np.log2(decided)))  # powers of the discount
  assert {1.0, 0.5, 0.25} <= set(decided.tolist())


def test_a_moves_left_run_trains_its_head_on_the_plies_its_games_lasted():
  # network.moves_left and search.moves_left_slope inside the train step: self-play labels each finished game's
  # positions with n, n - 1, ..., 1 plies left, the head's loss is logged, and its search runs with the utility.
  state, metrics = _trained("tictactoe", "network.moves_left=1", "search.moves_left_slope=0.0027")
  assert float(metrics["moves_left_loss"]) > 0 and float(metrics["updates"]) == 1
  replay = jax.device_get(state.replay)
  for lane in range(replay.value.shape[0]):
    plies = replay.plies_left[lane, :replay.labelled[lane]]
    starts = np.flatnonzero(np.diff(plies, prepend=1) > 0)  # each game counts down to 1
    assert plies[-1] == 1 and all(5 <= plies[i] <= 9 for i in starts), plies


def test_an_opponent_policy_run_marks_each_games_last_move_and_trains_the_reply_head():
  # network.opponent_policy inside the train step: self-play marks the position that ended each game (the moves-left
  # labels give the games' bounds: 1 ply left), and the reply head's loss is logged and joins the total.
  state, metrics = _trained("tictactoe", "network.opponent_policy=0.15", "network.moves_left=1")
  assert float(metrics["opponent_policy_loss"]) > 0 and float(metrics["updates"]) == 1
  replay = jax.device_get(state.replay)
  for lane in range(replay.value.shape[0]):
    n = replay.labelled[lane]
    np.testing.assert_array_equal(replay.last[lane, :n], replay.plies_left[lane, :n] == 1)
    assert not replay.last[lane, n:replay.written[lane]].any()  # the game in play has not ended


def test_a_future_position_and_material_change_run_stores_each_positions_board_and_lead_and_trains_the_heads():
  # network.future_position and network.material_change inside the train step (chess): self-play stores each
  # position's board and material lead as its mover's observation shows them, the heads' losses are logged and join
  # the total once every lane has finished a game (here the 16-ply cap of 8-ply chunks).
  state, metrics = _trained("chess", "network.future_position=0.25", "network.material_change=0.5",
                            "selfplay.max_plies=16", "selfplay.chunk_plies=8", steps=2)
  assert float(metrics["future_position_loss"]) > 0 and float(metrics["material_change_loss"]) > 0
  assert float(metrics["updates"]) == 1
  replay = jax.device_get(state.replay)
  program = azjax.build(_smoke("chess"))
  values = np.array(rules.CHESS_PIECE_VALUES[1:])  # the planes' order: pawn, knight, bishop, rook, queen, king
  for lane in range(2):
    for t in range(replay.written[lane]):
      index = None if replay.policy_index is None else replay.policy_index[lane, t]
      obs = np.asarray(program.codec.decode(replay.obs[lane, t], replay.policy[lane, t], index, replay.legal[lane, t])[0])
      pieces = obs.reshape(64, -1).astype(np.int32)
      np.testing.assert_array_equal(replay.board[lane, t], pieces[:, :6].sum(-1) - pieces[:, 6:12].sum(-1))
      assert replay.material[lane, t] == (pieces[:, :6] @ values).sum() - (pieces[:, 6:12] @ values).sum()
  assert (replay.material[:, :16] != 0).any(), replay.material  # some game took a piece
  assert (replay.plies_left[0, :16] == np.arange(16, 0, -1)).all()  # a game's end, which the targets read


def test_window_sampling_reaches_the_train_step():
  """replay.sampling=window weighs each row by its lane's labelled positions: with lanes of unequal counts the same
  run's first update sees the same rows weighted otherwise, so its loss differs (the self-play before it is the same)."""
  (lanes, lanes_metrics), (window, window_metrics) = (_trained("tictactoe", f"replay.sampling={s}")
                                                      for s in ("lanes", "window"))
  counts = np.asarray(jax.device_get(replay_lib.size(lanes.replay)))
  assert counts.min() > 0 and counts.min() < counts.max()
  np.testing.assert_array_equal(jax.device_get(lanes.replay.labelled), jax.device_get(window.replay.labelled))
  assert float(lanes_metrics["updates"]) == float(window_metrics["updates"]) == 1
  assert np.isfinite(float(window_metrics["loss"])) and float(window_metrics["loss"]) != float(lanes_metrics["loss"])


def test_a_q_ratio_run_mixes_its_searches_values_into_its_value_targets():
  # train.q_ratio inside the train step: each labelled position's target is r * q + (1 - r) * z, with q the
  # value its search stored beside it and z its game's outcome (tic-tac-toe: -1, 0 or 1), for every position.
  state, metrics = _trained("tictactoe", "train.q_ratio=0.25")
  assert float(metrics["updates"]) == 1 and np.isfinite(float(metrics["loss"]))
  replay = jax.device_get(state.replay)
  for lane in range(replay.value.shape[0]):
    n = replay.labelled[lane]
    z = (replay.value[lane, :n] - 0.25 * replay.q[lane, :n]) / 0.75
    np.testing.assert_allclose(z, np.round(z), atol=1e-5)
    assert set(np.round(z).tolist()) <= {-1.0, 0.0, 1.0}
  assert np.abs(replay.q[0, :replay.labelled[0]]).max() > 0  # the searches' values, not zeros


def test_a_q_lambda_run_mixes_the_average_of_its_games_later_search_values_into_its_targets():
  # train.q_lambda inside the train step: a position's target is r * ((1 - l) sum_k l^k q_(t+k) + l^(T-t) z) +
  # (1 - r) z over its game's later positions. The moves-left labels give each game's bounds; each game's outcome
  # (-1, 0 or 1 for the last mover) is read off its last position, and every other target is checked against it.
  r, lam = 0.25, 0.5
  state, _ = _trained("tictactoe", f"train.q_ratio={r}", f"train.q_lambda={lam}", "network.moves_left=1")
  replay = jax.device_get(state.replay)
  games = 0
  for lane in range(replay.value.shape[0]):
    n = replay.labelled[lane]
    value, q, mover, left = (np.asarray(x[lane, :n], np.float64) for x in (replay.value, replay.q, replay.mover,
                                                                             replay.plies_left))
    for end in np.flatnonzero(left == 1):
      start = end
      while start > 0 and left[start - 1] == left[start] + 1:
        start -= 1
      z_last = (value[end] - r * (1 - lam) * q[end]) / (r * lam + 1 - r)
      assert abs(z_last - round(z_last)) < 1e-5 and round(z_last) in (-1, 0, 1)
      sign = np.where(mover[start:end + 1] == mover[end], 1.0, -1.0)  # each position's mover's view <-> the last's
      later = 0.0  # sum_k l^k q_(t+k), in the last mover's view
      for t in range(end - start, -1, -1):
        later = sign[t] * q[start + t] + lam * later
        z = sign[t] * round(z_last)
        expected = r * ((1 - lam) * sign[t] * later + lam ** (end - start + 1 - t) * z) + (1 - r) * z
        np.testing.assert_allclose(value[start + t], expected, atol=1e-5)
      games += 1
  assert games >= 8


def test_a_go_runs_search_reads_the_ownership_heads_margin_with_a_score_utility():
  # search.score_utility in a go9 run's self-play search: it reads the ownership head's margin at every node; the
  # searches' values then differ from the same run's without it, which shares its network and its first moves.
  values = {}
  for utility in ("0", "0.3"):
    program = azjax.build(_smoke("go9", "network.ownership=1.5", f"search.score_utility={utility}"))
    mesh = azjax.make_mesh()
    state = azjax.init_state(program, mesh)
    search = jax.jit(lambda variables, keys, states: program.search(variables, keys, states, noise=False))
    out = search((state.params, state.bn_state), jax.random.split(jax.random.PRNGKey(0), 8), state.actors.env)
    values[utility] = (np.asarray(out.prior_value), np.asarray(out.value))
  np.testing.assert_allclose(values["0"][0], values["0.3"][0])  # the same network
  assert np.abs(values["0"][1] - values["0.3"][1]).min() > 1e-4  # every root read a margin


def test_a_run_whose_lanes_are_shorter_than_two_games_says_so_at_start(tmp_path, capsys):
  azjax.train(_smoke("tictactoe", "replay.window=16", "run.eval_games=0", "train.num_steps=1"), tmp_path / "short",
              progress=False)
  warning = "keeps 2 positions per self-play game (selfplay.batch_size=8), under two typical tictactoe games"
  assert warning in capsys.readouterr().err and warning in (tmp_path / "short" / "run.log").read_text()


def test_the_short_lane_note_counts_only_the_plies_a_run_records():
  """Chess's preset at a quarter of its window: 128 positions a lane is under two 160-ply games, and over two
  games' 40 recorded positions each when only the full-search quarter is recorded (selfplay.record_fast=false)."""
  from azjax.loop import short_lanes
  chess = ["replay.window=8192"]
  assert "raise replay.window" in short_lanes(azjax.apply_overrides(azjax.preset("chess", "cpu"), chess))[0]
  assert short_lanes(azjax.apply_overrides(azjax.preset("chess", "cpu"), chess + ["selfplay.record_fast=false"])) == []
  note = short_lanes(azjax.apply_overrides(azjax.preset("chess", "cpu"),
                                           ["replay.window=4096", "selfplay.record_fast=false"]))
  assert "about 40 recorded" in note[0]


def test_eval_games_zero_trains_without_evaluating_and_checkpoints_the_end(tmp_path, capsys):
  # run.eval_games=0: no evaluation at all (it crashed at the run's end before); the last step, 3, is not a
  # multiple of checkpoint_every (2) and is kept all the same. Gating, which plays at evaluations, is refused.
  result = azjax.train(_smoke("tictactoe", "run.eval_games=0", "train.num_steps=3"), tmp_path / "run", progress=False)
  assert result.step == 3 and result.evaluation is None
  assert "raise replay.window" not in capsys.readouterr().err  # 128 positions a lane: no warning
  assert ckpt.manager(os.path.join(tmp_path, "run", "checkpoints")).all_steps() == [2, 3]
  with pytest.raises(azjax.ConfigError, match="run.gate_games"):
    _smoke("tictactoe", "run.eval_games=0", "run.eval_every=2", "run.gate_games=4")


def _restore(run_dir, config):
  program = azjax.build(config)
  abstract = train_lib.abstract_state(program)
  mngr = ckpt.manager(os.path.join(run_dir, "checkpoints"))
  return ckpt.restore_state(mngr, abstract, train_lib.state_shardings(abstract, azjax.make_mesh()))


def test_resume_continues_bit_for_bit(tmp_path):
  config = _smoke("tictactoe", "train.num_steps=6", "run.checkpoint_every=3")
  whole = azjax.train(config, tmp_path / "whole", progress=False)
  assert whole.step == 6
  half = azjax.train(_smoke("tictactoe", "train.num_steps=3", "run.checkpoint_every=3"), tmp_path / "split",
                     progress=False)
  assert half.step == 3
  resumed = azjax.train(config, tmp_path / "split", resume=True, progress=False)
  assert resumed.step == 6
  a, b = _restore(tmp_path / "whole", config), _restore(tmp_path / "split", config)
  jax.tree.map(np.testing.assert_array_equal, a, b)
  rows = (tmp_path / "split" / "metrics.csv").read_text().splitlines()
  assert [r.split(",")[0] for r in rows[1:]] == ["1", "2", "3", "4", "5", "6"]
  assert json.loads((tmp_path / "split" / "config.json").read_text())["train"]["num_steps"] == 6
  for name in ["run.log", "evals.csv"]:
    assert (tmp_path / "split" / name).exists()
  # TensorBoard: two event files (the run, then its resumption); each step's loss as in metrics.csv.
  events = sorted((tmp_path / "split" / "tb").iterdir())
  assert len(events) == 2 and all(f.name.startswith("events.out.tfevents") for f in events)
  losses = {}
  for f in events:
    for event in _events(f):
      for value in event.summary.value:
        if value.tag == "train/loss":
          losses[event.step] = value.simple_value
  csv_losses = {int(r["step"]): float(r["loss"]) for r in csv.DictReader(io.StringIO("\n".join(rows)))}
  assert losses.keys() == csv_losses.keys() and all(
      np.isclose(losses[s], csv_losses[s], rtol=1e-6) for s in losses)


def test_a_run_out_of_time_stops_checkpointed_at_a_logged_step_and_resumes_bit_for_bit(tmp_path):
  config = _smoke("tictactoe", "train.num_steps=6", "run.checkpoint_every=3", "run.log_every=2")
  whole = azjax.train(config, tmp_path / "whole", progress=False)
  assert whole.step == 6 and not whole.out_of_time
  # A budget spent before the first step: the run stops at its first logged step (2), not at the step
  # the clock ran out (1), and not at a checkpoint step (3); it saves a checkpoint there.
  cut = azjax.train(config.replace(run=dataclasses.replace(config.run, max_minutes=1e-9)), tmp_path / "cut",
                    progress=False)
  assert cut.step == 2 and cut.out_of_time
  assert ckpt.latest_step(tmp_path / "cut" / "checkpoints") == 2
  assert "stopped by run.max_minutes" in (tmp_path / "cut" / "run.log").read_text()
  resumed = azjax.train(config, tmp_path / "cut", resume=True, progress=False)
  assert resumed.step == 6 and not resumed.out_of_time
  jax.tree.map(np.testing.assert_array_equal, _restore(tmp_path / "whole", config), _restore(tmp_path / "cut", config))
  with pytest.raises(azjax.ConfigError, match="run.max_minutes"):
    azjax.train(config.replace(run=dataclasses.replace(config.run, max_minutes=5.0)), tmp_path / "sweep",
                seeds=[0, 1], progress=False)


def _events(path):
  """The Event records of a TensorBoard event file (TFRecord framing: length, its CRC, data, its CRC)."""
  from tensorboardX.proto.event_pb2 import Event
  data, at = path.read_bytes(), 0
  while at < len(data):
    (length,) = struct.unpack("<Q", data[at:at + 8])
    yield Event.FromString(data[at + 12:at + 12 + length])
    at += 12 + length + 4


def test_checkpoints_refuse_foreign_games_and_shapes(tmp_path):
  azjax.train(_smoke(), tmp_path / "ttt", progress=False)
  with pytest.raises(azjax.CheckpointError, match="already holds checkpoints"):
    azjax.train(_smoke(), tmp_path / "ttt", progress=False)
  with pytest.raises(azjax.CheckpointError, match="tictactoe"):
    azjax.train(_smoke("connect_four"), tmp_path / "ttt", resume=True, progress=False)
  with pytest.raises(azjax.CheckpointError, match="network"):
    azjax.train(_smoke("tictactoe", "network.channels=16"), tmp_path / "ttt", resume=True, progress=False)
  r = subprocess.run([sys.executable, "-m", "experiments.connect_four", "--resume", str(tmp_path / "ttt")],
                     cwd=ROOT, capture_output=True, text=True, timeout=300)
  assert r.returncode == 2 and "tictactoe" in r.stderr and "Traceback" not in r.stderr
  assert not list((tmp_path / "ttt").rglob("*.pkl")) and not list((tmp_path / "ttt").rglob("*.pickle"))


def test_load_agent_plays_legal_moves(tmp_path):
  azjax.train(_smoke("connect_four"), tmp_path / "c4", progress=False)
  agent = azjax.load_agent(tmp_path / "c4")
  assert agent.config.game == "connect_four" and agent.step == 4
  env = agent.env
  state = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 4))
  step = batched_step(env)
  for i in range(10):
    greedy = agent.act(state, jax.random.PRNGKey(i))
    sampled = agent.act(state, jax.random.PRNGKey(i), num_simulations=3, greedy=False)
    assert greedy.shape == (4,)
    legal = np.asarray(state.legal_action_mask)
    assert legal[np.arange(4), np.asarray(greedy)].all() and legal[np.arange(4), np.asarray(sampled)].all()
    state = step(state, greedy)
  same = azjax.load_agent(tmp_path / "c4" / "checkpoints" / "4")
  jax.tree.map(np.testing.assert_array_equal, same.params, agent.params)
  with pytest.raises(ValueError, match="connect_four"):
    agent.act(batched_init(azjax.games.make_env("tictactoe"))(jax.random.split(jax.random.PRNGKey(0), 2)),
              jax.random.PRNGKey(0))


SHARDING_SCRIPT = """
import jax, numpy as np
import azjax
from jax.sharding import PartitionSpec as P
assert len(jax.devices()) == 4
config = azjax.apply_overrides(azjax.preset("tictactoe", "smoke"), ["train.updates_per_step=2"])
program = azjax.build(config)
results = []
for devices in (jax.devices()[:1], jax.devices()):
  mesh = azjax.make_mesh(devices)
  state = azjax.init_state(program, mesh)
  step = azjax.make_train_step(program, mesh)
  for _ in range(3):
    state, metrics = step(state)
  results.append((state, metrics))
(one, m1), (four, m4) = results
assert four.replay.obs.sharding.spec == P("batch") and len(four.replay.obs.sharding.device_set) == 4
assert len(four.actors.env.observation.addressable_shards) == 4
assert four.replay.obs.addressable_shards[0].data.shape[0] == 2  # 8 games over 4 devices
assert four.params["linear"]["w"].sharding.is_fully_replicated
np.testing.assert_array_equal(one.replay.obs, four.replay.obs)
np.testing.assert_array_equal(one.replay.policy > 0, four.replay.policy > 0)
jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5), one.params, four.params)
jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5), m1, m4)
# A sweep's seeds in one program: the games of every seed still split over the devices.
mesh = azjax.make_mesh()
seeded = azjax.init_state(program, mesh, seeds=[0, 1])
step = azjax.make_train_step(program, mesh, seeds=2)
for _ in range(3):
  seeded, _ = step(seeded)
assert seeded.replay.obs.sharding.spec == P(None, "batch")
assert seeded.replay.obs.addressable_shards[0].data.shape[:2] == (2, 2)  # 2 seeds x 2 of the 8 games
np.testing.assert_array_equal(seeded.replay.obs[0], one.replay.obs)  # seed 0 is the config's own seed
jax.tree.map(lambda a, b: np.testing.assert_allclose(a[0], b, rtol=1e-4, atol=1e-5), seeded.params, one.params)
print("EQUIVALENT")
"""


def test_four_devices_match_one_device():
  env = xla_env("--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu")
  r = subprocess.run([sys.executable, "-c", SHARDING_SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                     timeout=600)
  assert "EQUIVALENT" in r.stdout, r.stderr[-3000:]


def test_divergence_stops_the_run_and_keeps_the_last_good_checkpoint(tmp_path):
  """A learning rate of 1e30 turns the loss to inf, then nan: the run stops at once and checkpoints none of it."""
  run = tmp_path / "run"
  good = _smoke("tictactoe", "train.num_steps=3", "run.checkpoint_every=1")
  azjax.train(good, run, progress=False)
  env = dict(os.environ, JAX_PLATFORMS="cpu")
  r = subprocess.run([sys.executable, "-m", "experiments.tictactoe", "--resume", str(run), "--no-progress",
                      "--set", "train.learning_rate=1e30", "--set", "train.num_steps=30"],
                     cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
  assert r.returncode == 3, r.stderr[-2000:]
  message = r.stderr.strip().splitlines()[-1]
  assert "not finite" in message and "latest good checkpoint" in message, message
  bad_step = int(message.split("step ")[1].split(":")[0])
  assert bad_step <= 5  # stopped within a step or two of the first non-finite update
  mngr = ckpt.manager(run / "checkpoints")
  assert max(mngr.all_steps()) < bad_step
  state = _restore(run, good)
  assert all(np.isfinite(x).all() for x in jax.tree.leaves(jax.device_get(state.params)))
  # Resume from the good checkpoint with a sane learning rate: it trains on.
  fixed = azjax.apply_overrides(good, ["train.num_steps=5"])
  assert azjax.train(fixed, run, resume=True, progress=False).step == 5


def test_a_config_too_big_for_the_machine_is_refused_at_once(tmp_path):
  """Chess at the paper's window (160M positions) needs hundreds of GB: refused before any compile."""
  import time
  config = azjax.preset("chess", "paper")
  started = time.time()
  with pytest.raises(azjax.ConfigError, match=r"replay.window.*does not fit; at most \d+ positions") as e:
    azjax.train(config, tmp_path / "big", progress=False)
  assert time.time() - started < 60
  fits = int(str(e.value).split("at most ")[1].split()[0])
  assert 0 < fits < config.replay.window and fits % config.selfplay.batch_size == 0


def test_memory_estimate_against_the_compiled_step():
  program = azjax.build(_smoke())
  mesh = azjax.make_mesh()
  abstract = train_lib.abstract_state(program)
  compiled = azjax.make_train_step(program, mesh).lower(abstract).compile()
  from azjax import budget
  e = budget.estimate(program.config, abstract, mesh.size, compiled=compiled)
  assert e.state == budget.nbytes(abstract) and 0 < e.replay < e.state and e.temp > 0
  assert "GB of state" in str(e)
  # Over 4 devices the games and replay are split, the network and its optimiser copied whole on each.
  split = budget.nbytes(abstract.actors) + budget.nbytes(abstract.replay)
  four = budget.estimate(program.config, abstract, 4)
  assert four.state == split // 4 + budget.nbytes(abstract) - split and four.replay == budget.nbytes(abstract.replay) // 4
  small = dataclasses.replace(e, available=e.state + e.temp // 2)
  with pytest.raises(azjax.ConfigError, match="replay.window|selfplay.batch_size"):
    budget.check(program.config, small)
