import jax
import jax.numpy as jnp
import numpy as np

from azjax.config import NetworkConfig, TrainConfig
from azjax.learner import data_loss_sums, l2_penalty, learning_rate_schedule, make_optimizer, make_update
from azjax.network import make_network
from azjax.replay import Batch


def test_loss_on_a_hand_computed_example(strict_rank_promotion):
  logits = jnp.array([[0.0, jnp.log(3.0), 5.0]])  # the third move is illegal
  legal = jnp.array([[True, True, False]])
  # p over legal moves = (1/4, 3/4); pi = (1/2, 1/2); z = 1, v = 0.5
  batch = Batch(obs=jnp.zeros((1, 1)), policy=jnp.array([[0.5, 0.5, 0.0]]), legal=legal, value=jnp.array([1.0]),
                weight=jnp.array([1.0]))
  value_sum, policy_sum = data_loss_sums(logits, jnp.array([0.5]), batch)
  np.testing.assert_allclose(value_sum, 0.25, rtol=1e-6)
  np.testing.assert_allclose(policy_sum, -(0.5 * np.log(0.25) + 0.5 * np.log(0.75)), rtol=1e-6)
  np.testing.assert_allclose(l2_penalty({"w": jnp.array([1.0, 2.0]), "b": jnp.array([3.0])}, 1e-4), 14e-4)


def test_zero_weight_positions_do_not_count():
  batch = Batch(obs=jnp.zeros((2, 1)), policy=jnp.array([[1.0, 0.0]] * 2), legal=jnp.ones((2, 2), bool),
                value=jnp.array([1.0, -1.0]), weight=jnp.array([1.0, 0.0]))
  value_sum, _ = data_loss_sums(jnp.zeros((2, 2)), jnp.zeros(2), batch)
  np.testing.assert_allclose(value_sum, 1.0)


def test_learning_rate_schedule():
  schedule = learning_rate_schedule(TrainConfig(learning_rate=0.2, lr_boundaries=(100, 300, 500)))
  for step, lr in [(0, 0.2), (99, 0.2), (100, 0.02), (299, 0.02), (300, 0.002), (500, 0.0002), (10**6, 0.0002)]:
    np.testing.assert_allclose(schedule(step), lr, rtol=1e-5)


def test_update_lowers_the_loss(strict_rank_promotion):
  net = make_network(NetworkConfig(blocks=1, channels=4, value_hidden=8), 9)
  obs = jax.random.bernoulli(jax.random.PRNGKey(0), 0.3, (32, 3, 3, 2))
  batch = Batch(obs=obs, policy=jax.nn.one_hot(jnp.arange(32) % 9, 9), legal=jnp.ones((32, 9), bool),
                value=jnp.where(jnp.arange(32) % 2 == 0, 1.0, -1.0), weight=jnp.ones(32))
  config = TrainConfig(learning_rate=0.05)
  params, bn_state = net.init(jax.random.PRNGKey(1), obs)
  opt = make_optimizer(config)
  opt_state = opt.init(params)
  update = jax.jit(make_update(net, opt, config))
  first = None
  for _ in range(30):
    params, bn_state, opt_state, losses = update(params, bn_state, opt_state, batch)
    first = first if first is not None else float(losses.total)
  assert float(losses.total) < first
