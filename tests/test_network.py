import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax.config import NetworkConfig
from azjax.games import make_env
from azjax.network import make_network


@pytest.mark.parametrize("game", ["tictactoe", "go9"])
def test_shapes(game):
  env = make_env(game)
  state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 5))
  net = make_network(NetworkConfig(blocks=2, channels=8, value_hidden=16), env.num_actions)
  params, bn_state = net.init(jax.random.PRNGKey(1), state.observation)
  (logits, value), _ = net.apply(params, bn_state, state.observation, False)
  assert logits.shape == (5, env.num_actions) and value.shape == (5,)
  assert np.all(np.abs(value) <= 1.0)
  convs = [k for k in params if "conv" in k]
  assert len(convs) == 1 + 2 * 2 + 2  # stem, two per block, the two heads


def test_batch_norm_train_and_eval_modes():
  env = make_env("connect_four")
  net = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=16), env.num_actions)
  state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 8))
  for a in [3, 2, 4]:
    state = jax.vmap(env.step)(state, jax.random.randint(jax.random.PRNGKey(a), (8,), 0, 7))
  params, bn_state = net.init(jax.random.PRNGKey(1), state.observation)
  # Eval mode: moving averages are read, never written; the output does not depend on the rest of the batch.
  (l_all, v_all), bn_eval = net.apply(params, bn_state, state.observation, False)
  (l_one, v_one), _ = net.apply(params, bn_state, state.observation[:1], False)
  np.testing.assert_allclose(l_all[:1], l_one, atol=1e-5)
  jax.tree.map(np.testing.assert_array_equal, bn_eval, bn_state)
  # Train mode: batch statistics are used and the moving averages move.
  (l_train, _), bn_train = net.apply(params, bn_state, state.observation, True)
  assert not np.allclose(l_train, l_all)
  moved = jax.tree.leaves(jax.tree.map(lambda a, b: bool(jnp.any(a != b)), bn_train, bn_state))
  assert any(moved)


def test_untrained_network_in_eval_mode_is_not_saturated():
  env = make_env("tictactoe")
  net = make_network(NetworkConfig(blocks=2, channels=16, value_hidden=16), env.num_actions)
  state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 4))
  state = jax.vmap(env.step)(state, jnp.array([0, 1, 4, 8]))
  params, bn_state = net.init(jax.random.PRNGKey(1), state.observation)
  (logits, value), _ = net.apply(params, bn_state, state.observation, False)
  assert np.all(np.abs(value) < 0.99)
  assert np.all(jax.nn.softmax(logits).max(-1) < 0.99)
