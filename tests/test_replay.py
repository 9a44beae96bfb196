import jax
import jax.numpy as jnp
import numpy as np

from azjax import replay as replay_lib


def _replay(lanes=2, size=6):
  return replay_lib.init(lanes, size, jax.ShapeDtypeStruct((1,), jnp.int32), 3)


def _add(r, values, movers):
  """Adds one position per lane whose observation is `values` (to identify it later)."""
  values = jnp.asarray(values, jnp.int32)
  return replay_lib.add(r, values[:, None], jnp.ones((len(values), 3)) / 3, jnp.ones((len(values), 3), bool),
                        jnp.asarray(movers, jnp.int32))


def test_positions_are_labelled_from_the_movers_view_when_the_game_ends(strict_rank_promotion):
  r = _replay()
  for t in range(3):
    r = _add(r, [t, 10 + t], [t % 2, (t + 1) % 2])
  assert list(replay_lib.size(r)) == [0, 0]  # nothing labelled before the games end
  # Lane 0: player 0 wins. Lane 1: the game goes on.
  r = replay_lib.finish(r, jnp.array([True, False]), jnp.array([[1.0, -1.0], [0.0, 0.0]]))
  assert list(replay_lib.size(r)) == [3, 0]
  np.testing.assert_array_equal(r.value[0, :3], [1.0, -1.0, 1.0])  # movers 0, 1, 0
  # Lane 1 continues over later chunks, then ends in a draw: all its positions score 0.
  for t in range(3, 5):
    r = _add(r, [100 + t, 10 + t], [0, (t + 1) % 2])
  r = replay_lib.finish(r, jnp.array([False, True]), jnp.zeros((2, 2)))
  assert list(replay_lib.size(r)) == [3, 5]
  np.testing.assert_array_equal(r.value[1, :5], np.zeros(5))
  # Lane 0's new game (2 positions so far) is not labelled, and its old labels are untouched.
  np.testing.assert_array_equal(r.value[0, :3], [1.0, -1.0, 1.0])


def test_second_player_win_and_spanning_many_chunks():
  r = _replay(lanes=1, size=8)
  for t in range(7):  # one game of 7 positions added one ply at a time
    r = _add(r, [t], [t % 2])
    if t < 6:
      r = replay_lib.finish(r, jnp.array([False]), jnp.zeros((1, 2)))
  r = replay_lib.finish(r, jnp.array([True]), jnp.array([[-1.0, 1.0]]))
  np.testing.assert_array_equal(r.value[0, :7], [-1, 1, -1, 1, -1, 1, -1])


def test_window_keeps_the_newest_positions_and_samples_only_labelled_ones(strict_rank_promotion):
  r = _replay(lanes=1, size=4)
  for t in range(6):  # game A: positions 0..5, finished; the lane keeps 2..5
    r = _add(r, [t], [0])
  r = replay_lib.finish(r, jnp.array([True]), jnp.array([[1.0, -1.0]]))
  for t in range(6, 8):  # game B: positions 6, 7, unfinished; they overwrite 2 and 3
    r = _add(r, [t], [0])
  assert int(replay_lib.size(r)[0]) == 2
  batch = replay_lib.sample(r, jax.random.split(jax.random.PRNGKey(0), 1), 2000)
  seen = np.asarray(batch.obs[:, 0])
  assert set(seen) == {4, 5}  # only finished positions still in the window
  assert abs((seen == 4).mean() - 0.5) < 0.05  # uniformly
  assert np.all(np.asarray(batch.weight) == 1.0)


def test_sampling_an_empty_lane_gives_zero_weight():
  r = _add(_replay(lanes=2), [1, 2], [0, 0])
  r = replay_lib.finish(r, jnp.array([True, False]), jnp.zeros((2, 2)))
  batch = replay_lib.sample(r, jax.random.split(jax.random.PRNGKey(0), 2), 3)
  np.testing.assert_array_equal(batch.weight, [1, 1, 1, 0, 0, 0])
