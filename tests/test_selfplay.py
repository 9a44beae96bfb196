import collections

import jax
import jax.numpy as jnp
import numpy as np

from azjax import replay as replay_lib, selfplay
from azjax.config import NetworkConfig, SearchConfig, SelfPlayConfig
from azjax.games import make_env
from azjax.network import make_network
from azjax.search import make_search


def test_temperature_schedule():
  weights = jnp.array([0.1, 0.6, 0.3])
  keys = jax.random.split(jax.random.PRNGKey(0), 3000)
  early = jax.vmap(selfplay.select_action, in_axes=(0, None, None, None))(keys, weights, 29, 30)
  np.testing.assert_allclose(np.bincount(early, minlength=3) / 3000, weights, atol=0.03)
  late = jax.vmap(selfplay.select_action, in_axes=(0, None, None, None))(keys, weights, 30, 30)
  assert np.all(late == 1)
  never = jax.vmap(selfplay.select_action, in_axes=(0, None, None, None))(keys, jnp.array([0.5, 0.0, 0.5]), 0, 30)
  assert not np.any(never == 1)


def _setup(max_plies=0, games=6, lane=64):
  env = make_env("tictactoe")
  net = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=16), env.num_actions)
  search = make_search(env, net, SearchConfig(num_simulations=4), "tictactoe")
  actors = selfplay.init_actors(env, jax.random.PRNGKey(0), jnp.arange(games, dtype=jnp.int32))
  variables = net.init(jax.random.PRNGKey(1), actors.env.observation)
  replay = replay_lib.init(games, lane, jax.ShapeDtypeStruct((3, 3, 2), bool), env.num_actions)
  return env, search, variables, actors, replay


def test_value_targets_match_each_games_outcome_across_chunks(strict_rank_promotion):
  """Chunks of 3 plies (games last 5-9): every labelled position holds its own game's outcome for its mover."""
  env, search, variables, actors, replay = _setup()
  config = SelfPlayConfig(chunk_plies=3, temperature_plies=30)
  chunk = jax.jit(lambda a, r, k: selfplay.play_chunk(env, search, config, variables, a, r, k))
  ply = jax.jit(lambda a, r, k: selfplay.play_ply(env, search, config, variables, a, r, k))
  ref_actors, ref_replay = actors, replay
  expected = collections.defaultdict(list)  # lane -> expected z of each position written, in order
  current = collections.defaultdict(list)  # lane -> movers of the game in play
  games = 0
  for c in range(8):
    key = jax.random.PRNGKey(100 + c)
    actors, replay, stats = chunk(actors, replay, key)
    for ply_key in jax.random.split(key, config.chunk_plies):  # the same plies, one at a time, observed on the host
      movers = np.asarray(ref_actors.env.current_player)
      ref_actors, ref_replay, outcome = ply(ref_actors, ref_replay, ply_key)
      done, rewards = np.asarray(outcome.done), np.asarray(outcome.rewards)  # pgx's own scores
      for lane in range(6):
        current[lane].append(movers[lane])
        if done[lane]:
          expected[lane] += [rewards[lane, m] for m in current[lane]]
          current[lane] = []
    games += int(stats.games)
  assert games > 6  # several games per lane, many spanning chunk edges
  jax.tree.map(np.testing.assert_array_equal, replay, ref_replay)
  values, sizes = np.asarray(replay.value), np.asarray(replay_lib.size(replay))
  outcomes = set()
  for lane in range(6):
    assert sizes[lane] == len(expected[lane])
    np.testing.assert_array_equal(values[lane, :sizes[lane]], expected[lane])
    assert int(replay.written[lane]) == sizes[lane] + len(current[lane])  # the unfinished game waits, unlabelled
    outcomes |= set(expected[lane])
  assert {-1.0, 1.0} <= outcomes  # wins seen from both sides (and any draws score 0)


def test_truncation_at_the_length_cap_is_a_draw():
  env, search, variables, actors, replay = _setup()
  config = SelfPlayConfig(chunk_plies=12, temperature_plies=30, max_plies=4)  # no tic-tac-toe game ends in 4 plies
  actors, replay, stats = selfplay.play_chunk(env, search, config, variables, actors, replay, jax.random.PRNGKey(5))
  assert int(stats.games) == 3 * 6 and int(stats.plies) == 4 * 3 * 6
  assert np.all(np.asarray(replay_lib.size(replay)) == 12)
  np.testing.assert_array_equal(replay.value[:, :12], 0.0)
