import jax
import jax.numpy as jnp
import numpy as np
import pytest

import azjax
from azjax import selfplay, symmetry
from azjax.games import make_env
from azjax.search import Extras
from conftest import batched_init, batched_step


def _moves_under(moves, k, size=9):
  perm = symmetry.perms(size)[k]
  where = np.argsort(perm)  # point p's content lands on where[p]
  return [int(where[a]) if a < size * size else a for a in moves]


def _play(env, games):
  """Each of `games` (lists of moves of one length) played from the same initial state, in one jitted batch."""
  state = batched_init(env)(jnp.stack([jax.random.PRNGKey(0)] * len(games)))
  for ply in zip(*games):
    state = batched_step(env)(state, jnp.asarray(ply, jnp.int32))
  return [jax.tree.map(lambda x, i=i: x[i], state) for i in range(len(games))]


@pytest.mark.parametrize("k", range(8))
def test_a_symmetry_of_the_observation_is_the_observation_of_the_symmetric_game(k):
  env = make_env("go9")
  moves = [0, 1, 10, 30, 81, 44, 79]
  a, b = _play(env, [moves, _moves_under(moves, k)])
  np.testing.assert_array_equal(symmetry.observation(a.observation, k, 9), b.observation)
  np.testing.assert_array_equal(symmetry.board(a.legal_action_mask, k, 9), b.legal_action_mask)
  x = jnp.arange(82.0)
  np.testing.assert_array_equal(symmetry.board(symmetry.board(x, k, 9), k, 9, symmetry.inverse(9)), x)


def test_the_eight_symmetries_differ():
  assert len({tuple(p) for p in symmetry.perms(9)}) == 8


def test_random_symmetry_in_search_maps_the_policy_back():
  """An evaluator seen through random symmetries gives the same policy as the plain one where the network is
  itself symmetric (here: logits that depend only on the point's content, not its place)."""
  env = make_env("go9")
  state = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 4))
  state = batched_step(env)(state, jnp.array([0, 4, 40, 80]))

  def evaluate(variables, key, s):  # logits: the first observation plane, read at each point; pass 0
    planes = s.observation[..., 1].reshape(s.observation.shape[0], -1)
    return jnp.concatenate([planes, jnp.zeros((planes.shape[0], 1))], -1), jnp.zeros(planes.shape[0]), Extras()

  plain = evaluate(None, None, state)[0]
  seen = symmetry.symmetric_evaluator(evaluate, 9)(None, jax.random.PRNGKey(3), state)[0]
  np.testing.assert_array_equal(plain, seen)
  passed = []  # the key that drew the symmetries is consumed: the evaluator inside gets another
  symmetry.symmetric_evaluator(lambda v, key, s: passed.append(key) or evaluate(v, key, s), 9)(
      None, jax.random.PRNGKey(3), state)
  assert not np.array_equal(passed[0], jax.random.PRNGKey(3))


def test_augmentation_keys_follow_the_game_slots_not_the_devices():
  """Each minibatch row's symmetry comes from its game slot's key: four devices holding two slots each draw
  what one device holding all eight draws (a key split by row count repeated itself on every device)."""
  key, slots = jax.random.PRNGKey(5), jnp.arange(8, dtype=jnp.int32)
  whole = selfplay.per_row_keys(key, slots, 3)
  parts = [selfplay.per_row_keys(key, slots[i:i + 2], 3) for i in range(0, 8, 2)]
  assert whole.shape[0] == 24
  np.testing.assert_array_equal(whole, np.concatenate(parts))
  assert len({tuple(np.asarray(k)) for k in whole}) == 24


def test_symmetry_switches_are_go_only_and_train():
  with pytest.raises(azjax.ConfigError, match="train.augment"):
    azjax.apply_overrides(azjax.preset("chess", "smoke"), ["train.augment=true"])
  config = azjax.apply_overrides(azjax.preset("go9", "smoke"), ["train.augment=true", "search.random_symmetry=true",
                                                               "network.opponent_policy=0.15",  # replies turn too
                                                               "network.future_position=0.25"])  # and the boards
  program, mesh = azjax.build(config), azjax.make_mesh()
  state = azjax.init_state(program, mesh)
  step = azjax.make_train_step(program, mesh)
  for _ in range(2):
    state, metrics = step(state)
  assert np.isfinite(float(metrics["loss"]))


def test_augment_turns_the_ownership_target_and_the_reply_with_the_board():
  env = make_env("go9")
  state, = _play(env, [[3, 40, 12, 70]])
  mine = state.observation[..., 0].reshape(-1).astype(jnp.float32)  # the mover's stones as a board-shaped target
  stones = jnp.concatenate([mine, jnp.ones(1)])  # and as a policy over the points and pass
  for seed in range(4):
    obs, _, legal, own, (reply, reply_legal), future = symmetry.augment(
        jax.random.PRNGKey(seed), state.observation, state.legal_action_mask * 1.0, state.legal_action_mask, mine,
        (stones, state.legal_action_mask), jnp.stack([mine, -mine], -1), size=9)
    np.testing.assert_array_equal(own, obs[..., 0].reshape(-1))
    np.testing.assert_array_equal(future, np.stack([own, -own], -1))  # the future boards turn with it
    np.testing.assert_array_equal(reply[:81], obs[..., 0].reshape(-1))  # the same symmetry; pass stays put
    assert reply[81] == 1.0
    np.testing.assert_array_equal(reply_legal, legal)
  assert symmetry.augment(jax.random.PRNGKey(0), state.observation, state.legal_action_mask * 1.0,
                          state.legal_action_mask, size=9)[3] is None
