"""Matches in one program: colours alternate, openings pair up, baselines are what they claim."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import arena
from azjax.games import make_env
from conftest import batched_init, untrained_agent


def _first_legal(variables, key, state):
  del variables, key
  return jnp.argmax(state.legal_action_mask, axis=-1).astype(jnp.int32)


FIRST_LEGAL = arena.Player("first-legal", _first_legal)


def test_a_pair_shares_its_opening_with_colours_swapped():
  # One deterministic policy on both sides: a pair plays the same opening and so the same game twice,
  # with `first` in the other seat the second time, so its two outcomes are exact opposites.
  env = make_env("connect_four")
  twin = arena.Player("twin", _first_legal)
  outcome = arena.match_outcomes(env, FIRST_LEGAL, twin, jax.random.PRNGKey(0), 32, opening_plies=4)
  assert np.all(outcome[0::2] == -outcome[1::2]), outcome
  assert len(set(outcome[0::2])) > 1, "different pairs should get different openings"
  same = arena.match_outcomes(env, FIRST_LEGAL, twin, jax.random.PRNGKey(0), 8)
  assert len(set(same[0::2])) == 1  # without an opening every pair replays one game


def test_pure_mcts_beats_random_and_random_is_even():
  env = make_env("tictactoe")
  strong = arena.match(env, arena.mcts_player("tictactoe", 64), arena.random_player, jax.random.PRNGKey(1), 64)
  assert strong.score > 0.8 and strong.losses <= 6, strong
  even = arena.match(env, arena.random_player, arena.random_player, jax.random.PRNGKey(2), 400, opening_plies=1)
  lo, hi = even.interval()
  assert lo < 0.5 < hi, even


def test_pure_mcts_takes_a_win_in_one():
  env = make_env("tictactoe")
  state = env.init(jax.random.PRNGKey(0))
  for a in (0, 3, 1, 4):  # X on 0 and 1, O on 3 and 4: X wins at 2 (and must, or O wins at 5)
    state = env.step(state, a)
  batch = jax.tree.map(lambda x: jnp.stack([x] * 8), state)
  actions = arena.mcts_player("tictactoe", 64).act(batch, jax.random.PRNGKey(3))
  assert (np.asarray(actions) == 2).sum() >= 7, actions  # random rollouts are noisy, but not that noisy


def test_agents_of_one_config_share_a_compiled_match():
  env = make_env("tictactoe")
  a, b = untrained_agent("tictactoe"), untrained_agent("tictactoe")
  before = arena._program.cache_info()
  arena.match(env, a.player("a"), arena.random_player, jax.random.PRNGKey(0), 4)
  arena.match(env, b.player("b"), arena.random_player, jax.random.PRNGKey(1), 4)
  after = arena._program.cache_info()
  assert after.misses - before.misses == 1 and after.hits - before.hits == 1


def test_a_match_reports_how_its_games_went():
  # Random tic-tac-toe: 5-9 plies, wins or draws only, and the first mover's edge shows by seat.
  env = make_env("tictactoe")
  r = arena.match(env, arena.random_player, arena.random_player, jax.random.PRNGKey(3), 400)
  f = r.figures
  assert 5 <= f["game_length_p50"] <= 9 and 5 < f["mean_game_length"] < 9
  assert f["end_win"] + f["end_draw"] == 1.0 and f["end_cap"] == f["end_double_pass"] == 0.0
  assert f["end_draw"] == r.draws / r.games
  assert f["score_moving_first"] > 0.6 > 0.4 > f["score_moving_second"]  # random's known first-move edge
  assert (f["score_moving_first"] + f["score_moving_second"]) / 2 == pytest.approx(r.score)  # colours alternate: equal halves
  # A random opening of 9 plies ends every game itself: their endings and lengths are still the games' own.
  opened = arena.match(env, arena.random_player, arena.random_player, jax.random.PRNGKey(5), 64, opening_plies=9)
  assert opened.wins + opened.losses > 0
  assert opened.figures["end_win"] == pytest.approx((opened.wins + opened.losses) / opened.games)
  assert opened.figures["end_draw"] == pytest.approx(opened.draws / opened.games)
  assert 5 <= opened.figures["game_length_p50"] <= 9 and opened.figures["mean_game_length"] < 9
  # Go: the ending codes are the self-play ones (two passes in a row, or the length cap).
  go = arena.match(make_env("go9"), arena.random_player, arena.random_player, jax.random.PRNGKey(4), 8)
  assert go.figures["end_double_pass"] + go.figures["end_cap"] == 1.0
  assert go.figures["mean_game_length"] > 60


def _root_visits(agent, state, **kw):
  """Each game's root visits, summed over its moves: the simulations its search ran."""
  return np.asarray(agent.analyse(state, jax.random.PRNGKey(1), **kw)["visits"]).sum(-1).tolist()


def test_an_agent_searches_its_play_simulations_at_play_and_self_play_keeps_its_own():
  # search.play_simulations sets the search of evaluations, matches and engines; 0 falls back to self-play's.
  from azjax.engines.base import Thinker
  agent = untrained_agent("tictactoe", simulations=4)
  state = batched_init(agent.env)(jax.random.split(jax.random.PRNGKey(0), 2))
  assert _root_visits(agent, state) == [4, 4]
  longer = agent.with_search(["search.play_simulations=12"])
  assert longer.config.search.num_simulations == 4 and longer.config.search.simulations_at_play == 12
  assert _root_visits(longer, state) == [12, 12]
  assert _root_visits(longer, state, num_simulations=3) == [3, 3]  # an explicit count still wins
  assert Thinker(longer).simulations == 12 and Thinker(longer, 5).simulations == 5
