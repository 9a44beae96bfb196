import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax.config import NetworkConfig, TrainConfig
from azjax.learner import (AUX_LOSSES, aux_weights_of, current_learning_rate, data_loss_sums, future_loss_sum,
                           l2_penalty, learning_rate_schedule, make_optimizer, make_update, material_loss_sum,
                           scan_updates)
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


def test_the_policy_term_averages_over_positions_with_a_policy_target(strict_rank_promotion):
  """A fast search's position (all-zero policy: playout-cap randomisation) trains the value only: the batch
  [x with pi, x without] gives the same losses and the same update as [x with pi] alone."""
  net = make_network(NetworkConfig(blocks=1, channels=4, value_hidden=8), 9)
  x = jax.random.bernoulli(jax.random.PRNGKey(0), 0.3, (1, 3, 3, 2))
  pi = jax.nn.one_hot(jnp.array([4]), 9)
  one = Batch(obs=x, policy=pi, legal=jnp.ones((1, 9), bool), value=jnp.array([1.0]), weight=jnp.ones(1))
  two = Batch(obs=jnp.concatenate([x, x]), policy=jnp.concatenate([pi, jnp.zeros_like(pi)]),
              legal=jnp.ones((2, 9), bool), value=jnp.array([1.0, 1.0]), weight=jnp.ones(2))
  config = TrainConfig(learning_rate=0.05)
  params, bn_state = net.init(jax.random.PRNGKey(1), x)
  opt = make_optimizer(config)
  update = jax.jit(make_update(net, opt, config))
  a, b = update(params, bn_state, opt.init(params), one), update(params, bn_state, opt.init(params), two)
  assert float(a[3].policy) > 0.1
  jax.tree.map(lambda u, v: np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6), a, b)


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
  for _ in range(60):
    params, bn_state, opt_state, losses = update(params, bn_state, opt_state, batch)
  # It fits the batch: the moves of the targets and the signs of the values, not merely a lower loss.
  (logits, value), _ = net.apply(params, bn_state, obs, True)
  assert np.mean(np.argmax(logits, -1) == np.arange(32) % 9) >= 0.9
  assert np.mean(np.sign(value) == np.asarray(batch.value)) >= 0.9 and float(losses.value) < 0.2


def _tiny_updates(form, config):
  net = make_network(NetworkConfig(blocks=1, channels=4, value_hidden=8), 9)
  obs = jax.random.bernoulli(jax.random.PRNGKey(0), 0.3, (4, 16, 3, 3, 2))  # 4 minibatches of 16
  batches = Batch(obs=obs, policy=jnp.full((4, 16, 9), 1 / 9), legal=jnp.ones((4, 16, 9), bool),
                  value=jnp.where(jnp.arange(64).reshape(4, 16) % 2 == 0, 1.0, -1.0), weight=jnp.ones((4, 16)))
  params, bn_state = net.init(jax.random.PRNGKey(1), obs[0])
  opt = make_optimizer(config)
  update = make_update(net, opt, config)

  def body(carry, batch):
    *carry, losses = update(*carry, batch)
    return tuple(carry), (losses.total, current_learning_rate(carry[2]))

  return jax.jit(lambda c: scan_updates(body, c, batches, form))((params, bn_state, opt.init(params)))


def test_update_loop_forms_agree():
  """train.update_loop: the loop accelerators run (scan) and the CPU's written-out form are one computation."""
  config = TrainConfig(learning_rate=0.05)
  (scan_carry, (scan_loss, _)), (flat_carry, (flat_loss, _)) = (_tiny_updates(f, config) for f in ("scan", "unrolled"))
  np.testing.assert_allclose(scan_loss, flat_loss, rtol=1e-5)
  jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6), scan_carry, flat_carry)
  assert not np.allclose(scan_loss[0], scan_loss[-1])  # the updates did change something


def test_logged_learning_rate_is_the_one_the_optimiser_used():
  config = TrainConfig(learning_rate=0.2, lr_boundaries=(1, 3), lr_decay=0.1)
  _, (_, lrs) = _tiny_updates("scan", config)
  np.testing.assert_allclose(lrs, [0.2, 0.02, 0.02, 0.002], rtol=1e-5)  # update k used schedule(k)


def _fit_head(config: NetworkConfig, batch: Batch, steps: int):
  """(network, params, bn_state, first losses, last losses) after `steps` updates on `batch` at rate 0.05,
  training the auxiliary heads `config` builds at its weights."""
  net = make_network(config, batch.policy.shape[-1])
  train = TrainConfig(learning_rate=0.05)
  params, bn_state = net.init(jax.random.PRNGKey(1), batch.obs)
  opt = make_optimizer(train)
  opt_state = opt.init(params)
  update = jax.jit(make_update(net, opt, train, aux_weights=aux_weights_of(config)))
  first = None
  for _ in range(steps):
    params, bn_state, opt_state, losses = update(params, bn_state, opt_state, batch)
    first = losses if first is None else first
  return net, params, bn_state, first, losses


def test_aux_weights_name_the_network_fields_that_train_a_head_and_a_wrong_name_is_refused():
  """Every auxiliary loss is weighed by the `network` field of its name; a field at 0 trains no head; a name that is
  no head is refused, naming the allowed ones."""
  assert set(AUX_LOSSES) <= set(NetworkConfig.__dataclass_fields__)
  assert aux_weights_of(NetworkConfig()) == {}
  trained = aux_weights_of(NetworkConfig(moves_left=1.0, future_position=0.25))
  assert trained == {"moves_left": 1.0, "future_position": 0.25}
  net = make_network(NetworkConfig(blocks=1, channels=4, value_hidden=8), 10)
  with pytest.raises(ValueError, match="ownrship.*allowed.*ownership"):
    make_update(net, make_optimizer(TrainConfig()), TrainConfig(), aux_weights={"ownrship": 0.0})  # even at 0


def test_ownership_head_learns_its_target_only_where_there_is_one():
  """`network.ownership`: the head fits the final owners of the positions that have them; positions without
  (a resigned game's) do not pull it; without the switch there is no head at all."""
  config = NetworkConfig(blocks=1, channels=8, value_hidden=8, ownership=1.5)
  obs = jax.random.bernoulli(jax.random.PRNGKey(0), 0.5, (64, 3, 3, 2))
  target = 2.0 * obs[..., 0].reshape(64, 9) - 1.0  # the owner: a function of the position
  owned = (jnp.arange(64) < 48).astype(jnp.float32)
  target = jnp.where(owned[:, None] > 0, target, -target)  # the rest would teach the opposite
  batch = Batch(obs=obs, policy=jnp.full((64, 10), 0.1), legal=jnp.ones((64, 10), bool), value=jnp.zeros(64),
                weight=jnp.ones(64), ownership=target, owned=owned)
  net, params, bn_state, first, losses = _fit_head(config, batch, 100)
  own = net.apply_heads(params, bn_state, obs, True)[0].ownership
  assert float(first.aux["ownership"]) > 0.6 and float(losses.aux["ownership"]) < 0.2
  assert np.mean(np.sign(own[:48]) == np.asarray(target[:48])) >= 0.95
  plain = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=8), 10)
  plain_params, plain_bn = plain.init(jax.random.PRNGKey(1), obs)
  assert len(jax.tree.leaves(plain_params)) == len(jax.tree.leaves(params)) - 2  # the head's kernel and bias
  assert plain.apply_heads(plain_params, plain_bn, obs, False)[0].ownership is None


def test_moves_left_head_learns_the_plies_left():
  """`network.moves_left`: the head fits each position's plies left (here 20 or 180, by the first plane's
  first point), and its loss joins the total; without the switch there is no head."""
  config = NetworkConfig(blocks=1, channels=8, value_hidden=8, moves_left=1.0)
  obs = jax.random.bernoulli(jax.random.PRNGKey(0), 0.5, (64, 3, 3, 2))
  plies = jnp.where(obs[:, 0, 0, 0], 20.0, 180.0)
  batch = Batch(obs=obs, policy=jnp.full((64, 10), 0.1), legal=jnp.ones((64, 10), bool), value=jnp.zeros(64),
                weight=jnp.ones(64), plies_left=plies)
  net, params, bn_state, _, losses = _fit_head(config, batch, 300)
  predicted = np.asarray(net.apply_heads(params, bn_state, obs, False)[0].moves_left)
  assert np.mean(np.abs(predicted - np.asarray(plies))) < 20, predicted
  assert float(losses.aux["moves_left"]) > 0 and float(losses.total) >= float(losses.value + losses.policy)
  plain = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=8), 10)
  assert plain.apply_heads(*plain.init(jax.random.PRNGKey(1), obs), obs, False)[0].moves_left is None


def test_future_position_head_learns_the_later_boards_and_joins_the_loss_as_katago_weighs_it():
  """`network.future_position`: the head fits who holds each point at two horizons (here the first plane, and its
  negation); its loss is KataGo's (squared error of the tanh, summed over the points over their count's square root,
  the horizons weighed 1 and 0.25) and joins the total at its weight; without the switch there is no head."""
  config = NetworkConfig(blocks=1, channels=8, value_hidden=8, future_position=0.25)
  obs = jax.random.bernoulli(jax.random.PRNGKey(0), 0.5, (64, 3, 3, 2))
  first_plane = 2.0 * obs[..., 0].reshape(64, 9) - 1.0
  future = jnp.stack([first_plane, -first_plane], -1)
  batch = Batch(obs=obs, policy=jnp.full((64, 10), 0.1), legal=jnp.ones((64, 10), bool), value=jnp.zeros(64),
                weight=jnp.ones(64), future=future)
  net, params, bn_state, first, losses = _fit_head(config, batch, 200)
  heads = net.apply_heads(params, bn_state, obs, False)[0]
  assert heads.future.shape == (64, 9, 2)
  np.testing.assert_array_equal(np.sign(heads.future), future)
  by_hand = ((np.tanh(np.asarray(heads.future)) - np.asarray(future)) ** 2).sum(1) / 3.0 @ np.array([1.0, 0.25])
  np.testing.assert_allclose(float(future_loss_sum(heads.future, batch)), by_hand.sum(), rtol=1e-4)
  start, end = first.aux["future_position"], losses.aux["future_position"]
  assert float(start) > 1.0 and float(end) < 0.2, (start, end)
  np.testing.assert_allclose(float(losses.total), float(losses.value + losses.policy + losses.l2
                                                        + 0.25 * losses.aux["future_position"]), rtol=1e-5)
  plain = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=8), 10)
  plain_params, plain_bn = plain.init(jax.random.PRNGKey(1), obs)
  assert len(jax.tree.leaves(plain_params)) == len(jax.tree.leaves(params)) - 1  # the head's kernel, no bias
  assert plain.apply_heads(plain_params, plain_bn, obs, False)[0].future is None


def test_material_change_head_learns_the_movers_material_swing_and_joins_the_loss_at_its_weight():
  """`network.material_change`: the head fits each position's material change at both horizons (here a piece won
  and a queen lost, or nothing and a rook won, by the first plane's first point), in minor pieces; its mean squared
  error joins the total at its weight; without the switch there is no head."""
  config = NetworkConfig(blocks=1, channels=8, value_hidden=8, material_change=0.5)
  obs = jax.random.bernoulli(jax.random.PRNGKey(0), 0.5, (64, 3, 3, 2))
  change = jnp.where(obs[:, 0, 0, 0, None], jnp.array([3.0, -9.0]), jnp.array([0.0, 5.0]))
  batch = Batch(obs=obs, policy=jnp.full((64, 10), 0.1), legal=jnp.ones((64, 10), bool), value=jnp.zeros(64),
                weight=jnp.ones(64), material_change=change)
  by_hand = (np.asarray(change) / 3.0) ** 2  # a head at 0: the squared change in minor pieces, the horizons' mean
  np.testing.assert_allclose(float(material_loss_sum(jnp.zeros((64, 2)), batch)), by_hand.mean(-1).sum(), rtol=1e-5)
  net, params, bn_state, first, losses = _fit_head(config, batch, 300)
  predicted = np.asarray(net.apply_heads(params, bn_state, obs, False)[0].material_change)
  assert predicted.shape == (64, 2)
  assert np.abs(3.0 * predicted - np.asarray(change)).max() < 1.0, predicted  # within a pawn
  start, end = first.aux["material_change"], losses.aux["material_change"]
  assert float(start) > 2.0 and float(end) < 0.05, (start, end)  # about 3.2 at the start, the head near 0
  np.testing.assert_allclose(float(losses.total), float(losses.value + losses.policy + losses.l2 + 0.5 * end),
                             rtol=1e-5)
  plain = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=8), 10)
  assert plain.apply_heads(*plain.init(jax.random.PRNGKey(1), obs), obs, False)[0].material_change is None


def test_opponent_reply_head_learns_the_reply_where_there_is_one():
  """`network.opponent_policy`: the head fits the next position's policy (here the move the first plane's first
  point names) over that position's legal moves, leaves out positions without a reply (a game's last move, a
  fast search's empty policy); it is the policy head's last layer, twice as wide; without the switch there is none."""
  config = NetworkConfig(blocks=1, channels=8, value_hidden=8, opponent_policy=0.15)
  obs = jax.random.bernoulli(jax.random.PRNGKey(0), 0.5, (64, 3, 3, 2))
  reply = jax.nn.one_hot(jnp.where(obs[:, 0, 0, 0], 3, 7), 10)
  replied = (jnp.arange(64) < 40).astype(jnp.float32)
  fast = (jnp.arange(64) >= 56)[:, None]  # replied, but by a fast search: no target
  wrong = jax.nn.one_hot(jnp.where(obs[:, 0, 0, 0], 7, 3), 10)  # what the left-out rows would teach
  reply = jnp.where(replied[:, None] > 0, reply, jnp.where(fast, 0.0, wrong))
  replied = jnp.where(fast[:, 0], 1.0, replied)
  reply_legal = jnp.ones((64, 10), bool).at[:, 9].set(False)
  batch = Batch(obs=obs, policy=jnp.full((64, 10), 0.1), legal=jnp.ones((64, 10), bool), value=jnp.zeros(64),
                weight=jnp.ones(64), reply_policy=reply, reply_legal=reply_legal, replied=replied)
  net, params, bn_state, first, losses = _fit_head(config, batch, 200)
  logits = net.apply_heads(params, bn_state, obs, False)[0].opponent_logits
  start, end = first.aux["opponent_policy"], losses.aux["opponent_policy"]
  assert float(start) > 2.0 and float(end) < 0.3, (start, end)
  np.testing.assert_array_equal(np.argmax(logits[:40], -1), np.argmax(reply[:40], -1))
  np.testing.assert_allclose(float(losses.total), float(losses.value + losses.policy + losses.l2
                                                        + 0.15 * losses.aux["opponent_policy"]), rtol=1e-5)
  plain = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=8), 10)
  plain_params, plain_bn = plain.init(jax.random.PRNGKey(1), obs)
  widened = [name for name in params
             if any(a.shape != b.shape for a, b in zip(jax.tree.leaves(params[name]), jax.tree.leaves(plain_params[name])))]
  assert set(plain_params) == set(params) and len(widened) == 1  # one layer, the policy's last, is twice as wide
  assert plain.apply_heads(plain_params, plain_bn, obs, False)[0].opponent_logits is None


def test_value_weight_scales_the_value_terms_gradient_only(strict_rank_promotion):
  """train.value_weight: one update from the same start moves the value head's output layer `w` times as far as
  the papers' weight 1 does, the policy head's output layer exactly as far, and the shared trunk differently."""
  net = make_network(NetworkConfig(blocks=1, channels=4, value_hidden=8), 9)
  obs = jax.random.bernoulli(jax.random.PRNGKey(0), 0.3, (8, 3, 3, 2))
  batch = Batch(obs=obs, policy=jax.nn.one_hot(jnp.arange(8) % 9, 9), legal=jnp.ones((8, 9), bool),
                value=jnp.where(jnp.arange(8) % 2 == 0, 1.0, -1.0), weight=jnp.ones(8))
  params, bn_state = net.init(jax.random.PRNGKey(1), obs)

  def moved(value_weight):
    config = TrainConfig(learning_rate=0.05, l2=0.0, value_weight=value_weight)
    opt = make_optimizer(config)
    new, *_ = jax.jit(make_update(net, opt, config))(params, bn_state, opt.init(params), batch)
    return jax.tree.map(lambda a, b: a - b, new, params)

  one, three = moved(1.0), moved(3.0)
  np.testing.assert_allclose(three["linear_2"]["w"], 3.0 * one["linear_2"]["w"], rtol=1e-4, atol=1e-8)
  np.testing.assert_allclose(three["linear"]["w"], one["linear"]["w"], rtol=1e-5, atol=1e-8)
  assert np.abs(one["linear_2"]["w"]).max() > 1e-4
  assert not np.allclose(three["conv2_d"]["w"], one["conv2_d"]["w"])
