"""Trained for real by the tests (in a process of their own, optimised): tic-tac-toe to perfect play against an
exhaustive minimax player, go9 past uniform random without collapsing."""

import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import azjax
import minimax
from azjax.games import make_env
from azjax.records import read_rows
from conftest import ROOT, batched_init, batched_step, xla_env


def play_minimax(agent, games: int, seed: int):
  """`games` games, the agent moving first in even ones; the minimax side picks among optimal moves at random."""
  env = make_env("tictactoe")
  rng = np.random.default_rng(seed)
  state = batched_init(env)(jax.random.split(jax.random.PRNGKey(seed), games))
  first = np.asarray(state.current_player)
  seat = np.where(np.arange(games) % 2 == 0, first, 1 - first)
  returns = np.zeros((games, 2))
  step = batched_step(env)
  key = jax.random.PRNGKey(seed + 1)
  while not np.all(np.asarray(state.terminated)):
    key, k = jax.random.split(key)
    ours = np.asarray(agent.act(state, k))
    # pgx's board: -1 empty, else the colour (0 = the first mover) of the stone; _x.color is the colour to move.
    board, colour, over = np.asarray(state._x.board), np.asarray(state._x.color), np.asarray(state.terminated)
    theirs = np.array([0 if over[i] else minimax.act(rng, board[i], colour[i]) for i in range(games)])
    action = np.where(np.asarray(state.current_player) == seat, ours, theirs)
    state = step(state, jnp.asarray(action, jnp.int32))
    returns += np.asarray(state.rewards)
  outcome = returns[np.arange(games), seat]
  return outcome, np.arange(games) % 2 == 0


# XLA's back end at -O1 for the runs that train for real: this suite's -O0 (conftest.FAST_COMPILE) runs them at a
# third of the speed, and a user's -O2 compiles tic-tac-toe's programs in 35 s where -O1 takes 25 s and runs them
# as fast (1,793 positions/s against 1,900-2,000 on this project's CPU).
OPTIMISED = "--xla_backend_optimization_level=1"


def train_optimised(game: str, preset: str, overrides: list[str], run_dir) -> float:
  """A run from the game's command line, in a process of its own that XLA optimises (`OPTIMISED`). Returns the
  final evaluation's score against uniform random."""
  sets = [a for o in overrides for a in ("--set", o)]
  r = subprocess.run([sys.executable, "-m", f"experiments.{game}", "--preset", preset, "--run-dir", str(run_dir),
                      "--no-progress", *sets], cwd=ROOT, env=xla_env(OPTIMISED, optimised=True, JAX_PLATFORMS="cpu"),
                     capture_output=True, text=True, timeout=1800)
  assert r.returncode == 0, r.stderr[-3000:]
  return float([row for row in read_rows(run_dir / "evals.csv") if row["opponent"] == "random"][-1]["score"])


def test_minimax_player_is_perfect():
  assert minimax.value(tuple([-1] * 9), 0) == 0  # tic-tac-toe is a draw
  assert minimax.optimal_moves((0, 0, -1, 1, 1, -1, -1, -1, -1), 0) == [2]


# The default on a CPU (the cpu preset: since section 73 the small preset's search and drops, before it the small
# preset itself) with half its steps (its learning-rate drops halved too) and a quarter of its games a step,
# evaluated once at the end (64 games, the small preset's): on this project's 2-core CPU the preset's evaluations
# at step 60 already drew even with step 30 and beat random 59-5-0, and 32 games a step (the same updates on a
# quarter of the positions) played minimax without a loss on seeds 0-3 at -O1 (and 0-2 at -O2), as 64 and 128 games
# did. The run's own evaluation plays random only (the test plays minimax itself): its pure MCTS anchor took 13 of
# the evaluation's 24 s.
TICTACTOE_QUICK = ["selfplay.batch_size=32", "train.num_steps=75", "train.lr_boundaries=300,450", "run.eval_every=0",
                   "run.checkpoint_every=75", "run.eval_mcts_simulations=0", "run.eval_games=64"]


@pytest.mark.slow
def test_tictactoe_learns_perfect_play(tmp_path):
  score = train_optimised("tictactoe", "cpu", TICTACTOE_QUICK, tmp_path / "run")  # the default on a CPU
  agent = azjax.load_agent(tmp_path / "run")
  outcome, agent_first = play_minimax(agent, games=64, seed=7)
  assert np.all(outcome[agent_first] == 0), f"as first player: {outcome[agent_first]}"
  assert np.all(outcome[~agent_first] == 0), f"as second player: {outcome[~agent_first]}"
  assert score > 0.9
  # From the empty board a perfect player never loses. (The loop's evaluation opens each pair of games
  # with random plies, which can leave a seat already lost.)
  vs_random = azjax.match(make_env("tictactoe"), agent.player(), azjax.random_player, jax.random.PRNGKey(3), 64)
  assert vs_random.losses == 0 and vs_random.score > 0.9, vs_random


@pytest.mark.slow
def test_go9_learns_against_random_without_collapsing(tmp_path):
  """The go9 cpu preset, shrunk to a few minutes: it beats uniform random and its self-play games do not collapse
  into early passes (the failure the pass rule and the replay gate fixed)."""
  score = train_optimised("go9", "cpu", GO9_QUICK, tmp_path / "run")
  rows = [r for r in read_rows(tmp_path / "run" / "metrics.csv") if float(r["games"]) > 0]
  late = rows[len(rows) // 2:]
  median = float(np.median([float(r["game_length_p50"]) for r in late]))
  early_pass = sum(float(r["early_pass_end"]) * float(r["games"]) for r in late) / sum(float(r["games"]) for r in late)
  assert median >= 60 and early_pass <= 0.05, (median, early_pass)
  assert float(rows[-1]["value_saturated"]) < 0.9  # the value head is alive
  assert score >= GO9_QUICK_SCORE, score


# Calibrated on this project's 2-core CPU: 30-2 against random at step 50 (224 s beside another job); with the
# preset's playout caps and resignation it passes in about 2.5 minutes on one core. Its evaluation plays random
# only: the preset's 20 games against GNU Go (test_match tests those) took 23 of the run's 117 s.
GO9_QUICK = ["selfplay.batch_size=32", "replay.window=16384", "train.num_steps=50", "run.eval_every=0",
             "run.eval_games=32", "run.checkpoint_every=50", "run.eval_engine_games=0"]
GO9_QUICK_SCORE = 0.75
