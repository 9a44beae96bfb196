"""The learner: loss of eq. 1 (AlphaGo Zero, Nature 2017) and the optimiser.

    l = (z - v)^2 - pi^T log p + c ||theta||^2

`train.value_weight` scales the first term (1, the default, is the papers').

`p` is the network's policy renormalised over the legal moves (AlphaZero
Methods: "Illegal moves are masked out by setting their probabilities to zero,
and re-normalising"). With `network.ownership` (Go), the ownership head's loss,
weighted, joins the sum (KataGo's auxiliary target; `ownership_loss_sum`), and with `network.moves_left`
the moves-left head's (Lc0; `moves_left_loss_sum`), and with `network.opponent_policy` the opponent-reply
head's (KataGo; `opponent_loss_sum`), and with `network.future_position` the future-position head's (KataGo;
`future_loss_sum`). Gradients are averaged over every position of the global
minibatch: each device sums its share, and the sums meet in one `psum`.
"""

from __future__ import annotations

from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp
import optax

from azjax.config import FUTURE_WEIGHTS, TrainConfig
from azjax.network import MOVES_LEFT_UNIT, Network
from azjax.replay import Batch


class Losses(NamedTuple):
  total: chex.Array
  value: chex.Array
  policy: chex.Array
  l2: chex.Array
  ownership: chex.Array  # the ownership head's unweighted loss; 0 without one
  moves_left: chex.Array  # the moves-left head's unweighted loss; 0 without one
  opponent: chex.Array  # the opponent-reply head's unweighted loss; 0 without one
  future: chex.Array  # the future-position head's unweighted loss; 0 without one


def learning_rate_schedule(config: TrainConfig) -> optax.Schedule:
  """The learning rate, dropped by `lr_decay` at each boundary (counted in updates)."""
  return optax.piecewise_constant_schedule(config.learning_rate, {b: config.lr_decay for b in config.lr_boundaries})


def make_optimizer(config: TrainConfig) -> optax.GradientTransformation:
  """SGD with momentum (the paper) or Adam; the state carries the learning rate it last used
  (`current_learning_rate`), so the logs report the optimiser's own number."""
  schedule = learning_rate_schedule(config)
  if config.optimizer == "sgd":
    return optax.inject_hyperparams(optax.sgd)(learning_rate=schedule, momentum=config.momentum)
  return optax.inject_hyperparams(optax.adam)(learning_rate=schedule)


def with_momentum(opt_state, config: TrainConfig):
  """`opt_state` with the config's momentum. inject_hyperparams keeps a plain number in the optimiser's state
  and reads it back from there, so a resumed run's --set train.momentum would not reach it otherwise (the
  learning rate is a schedule, recomputed from the config)."""
  hyperparams = getattr(opt_state, "hyperparams", {})
  if "momentum" not in hyperparams:
    return opt_state
  old = hyperparams["momentum"]
  new = jax.jit(lambda x: jnp.full_like(x, config.momentum), out_shardings=old.sharding)(old)
  return opt_state._replace(hyperparams={**hyperparams, "momentum": new})


def current_learning_rate(opt_state) -> chex.Array:
  """The learning rate of the optimiser's latest update (the first one's before any update)."""
  return opt_state.hyperparams["learning_rate"]


def l2_penalty(params, c: float) -> chex.Array:
  return c * sum(jnp.sum(jnp.square(p)) for p in jax.tree.leaves(params))


def policy_cross_entropy(logits, policy, legal):
  """[N]: -pi^T log p, with p the logits' softmax over the legal moves."""
  log_p = jax.nn.log_softmax(jnp.where(legal, logits, jnp.finfo(logits.dtype).min))
  return -jnp.sum(jnp.where(legal, policy * log_p, 0.0), axis=-1)


def has_policy(policy):
  """[N] float32: 1.0 where a position has a policy target (a fast search's is all zero: playout-cap
  randomisation)."""
  return (policy.sum(-1) > 0).astype(jnp.float32)


def data_loss_sums(logits, value, batch: Batch):
  """Weighted sums over the batch of the value and policy terms of eq. 1: ([], [])."""
  cross_entropy = policy_cross_entropy(logits, batch.policy, batch.legal)
  return jnp.sum(batch.weight * jnp.square(batch.value - value)), jnp.sum(batch.weight * cross_entropy)


def opponent_mask(batch: Batch):
  """[N]: the positions whose opponent's reply is a policy target (of the same game, from a full search)."""
  return batch.weight * batch.replied * has_policy(batch.reply_policy)


def opponent_loss_sum(opponent_logits, batch: Batch):
  """Sum over the batch's positions that have one of the cross-entropy between the opponent-reply head, over
  the next position's legal moves, and that position's search policy (KataGo's auxiliary policy target)."""
  cross_entropy = policy_cross_entropy(opponent_logits, batch.reply_policy, batch.reply_legal)
  return jnp.sum(opponent_mask(batch) * cross_entropy)


def ownership_loss_sum(ownership_logits, batch: Batch):
  """Weighted sum over the batch's positions that have an ownership target of the mean per-point binary
  cross-entropy between the head and the final owner: probability (1 + o) / 2 that the mover owns the
  point, so a point owned by neither side is a target of one half (KataGo)."""
  cross_entropy = optax.sigmoid_binary_cross_entropy(ownership_logits, (1.0 + batch.ownership) / 2).mean(-1)
  return jnp.sum(batch.weight * batch.owned * cross_entropy)


def future_loss_sum(future, batch: Batch):
  """Weighted sum over the batch of KataGo's future-position loss: per horizon, the squared error of the head's
  tanh against who holds each point then, summed over the points, over the square root of their count (KataGo:
  "let's compromise and scale by sqrt(boardarea)"), weighed FUTURE_WEIGHTS."""
  error = jnp.square(jnp.tanh(future) - batch.future).sum(1) / jnp.sqrt(future.shape[1])  # [N, horizons]
  return jnp.sum(batch.weight * (error * jnp.asarray(FUTURE_WEIGHTS)).sum(-1))


# The moves-left loss's Huber threshold, in the head's unit (network.MOVES_LEFT_UNIT plies): 10 plies. Squared
# error inside it, absolute outside, so a game cut short by a blunder moves the head no more than any other.
MOVES_LEFT_HUBER_DELTA = 0.1


def moves_left_loss_sum(moves_left, batch: Batch):
  """Weighted sum over the batch of the Huber loss between the head's plies left and the game's, in the head's
  unit (Lc0's moves-left head trains with a Huber loss)."""
  error = optax.huber_loss(moves_left / MOVES_LEFT_UNIT, batch.plies_left / MOVES_LEFT_UNIT,
                           delta=MOVES_LEFT_HUBER_DELTA)
  return jnp.sum(batch.weight * error)


def update_loop_form(form: str) -> str:
  """`train.update_loop` resolved for this backend: "auto" is "unrolled" on CPU and "scan" elsewhere."""
  if form != "auto":
    return form
  return "unrolled" if jax.default_backend() == "cpu" else "scan"


def scan_updates(body, carry, xs, form: str = "auto"):
  """`jax.lax.scan(body, carry, xs)` for the loop of updates, as a loop ("scan") or written out ("unrolled").

  The same computation either way (tests/test_learner.py checks they agree). XLA:CPU runs gradient
  convolutions inside a loop about 60x slower than outside one (measured on this project's 2-core
  machine, jax 0.10.2: one update of a 6x128 network on 9x9 boards, batch 128, 1.8 s alone and
  122 s as a one-step scan, even with unroll=True, which leaves a one-step loop); forward
  convolutions are not affected. Accelerators keep the loop, which compiles faster. `form` is
  `train.update_loop`; "auto" picks by backend (`update_loop_form`)."""
  n = jax.tree.leaves(xs)[0].shape[0]
  if update_loop_form(form) == "scan" or n == 0:
    return jax.lax.scan(body, carry, xs)
  outs = []
  for i in range(n):
    carry, out = body(carry, jax.tree.map(lambda x: x[i], xs))
    outs.append(out)
  return carry, jax.tree.map(lambda *x: jnp.stack(x), *outs)


def make_update(network: Network, optimizer: optax.GradientTransformation, config: TrainConfig,
                axis_name: str | None = None, ownership_weight: float = 0.0, moves_left_weight: float = 0.0,
                opponent_weight: float = 0.0, future_weight: float = 0.0):
  """Returns `update(params, bn_state, opt_state, batch) -> (params, bn_state, opt_state, Losses)`.

  With `axis_name`, `batch` is this device's share and the result is the same on every device.
  `ownership_weight` (`network.ownership`), `moves_left_weight` (`network.moves_left`), `opponent_weight`
  (`network.opponent_policy`) and `future_weight` (`network.future_position`) weigh those heads' losses; the batch
  then carries their targets.
  """

  def psum(x):
    return jax.lax.psum(x, axis_name) if axis_name else x

  def weighted(value, policy, ownership, moves_left, opponent, future):
    """Eq. 1's data terms (and the auxiliary heads'), each mean loss times its weight."""
    return (config.value_weight * value + policy + ownership_weight * ownership + moves_left_weight * moves_left
            + opponent_weight * opponent + future_weight * future)

  def update(params, bn_state, opt_state, batch: Batch):
    count = jnp.maximum(psum(batch.weight.sum()), 1.0)
    # A position with an all-zero policy has no policy target (a fast search's, playout-cap
    # randomisation): the policy term averages over the positions that have one.
    policy_count = jnp.maximum(psum(jnp.sum(batch.weight * has_policy(batch.policy))), 1.0)
    reply_count = jnp.maximum(psum(jnp.sum(opponent_mask(batch))), 1.0) if opponent_weight else 1.0

    owned_count = jnp.maximum(psum(jnp.sum(batch.weight * batch.owned)), 1.0) if ownership_weight else 1.0

    def data_loss(params):
      heads, new_bn_state = network.apply_heads(params, bn_state, batch.obs, True)
      value_sum, policy_sum = data_loss_sums(heads.logits, heads.value, batch)
      ownership_sum = ownership_loss_sum(heads.ownership, batch) if ownership_weight else jnp.zeros(())
      moves_left_sum = moves_left_loss_sum(heads.moves_left, batch) if moves_left_weight else jnp.zeros(())
      opponent_sum = opponent_loss_sum(heads.opponent_logits, batch) if opponent_weight else jnp.zeros(())
      future_sum = future_loss_sum(heads.future, batch) if future_weight else jnp.zeros(())
      loss = weighted(value_sum / count, policy_sum / policy_count, ownership_sum / owned_count,
                      moves_left_sum / count, opponent_sum / reply_count, future_sum / count)
      return loss, (value_sum, policy_sum, ownership_sum, moves_left_sum, opponent_sum, future_sum, new_bn_state)

    grads, (value_sum, policy_sum, ownership_sum, moves_left_sum, opponent_sum, future_sum, new_bn_state) = jax.grad(
        data_loss, has_aux=True)(params)
    l2, l2_grads = jax.value_and_grad(l2_penalty)(params, config.l2)
    grads = jax.tree.map(lambda g, r: psum(g) + r, grads, l2_grads)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    value_loss, policy_loss = psum(value_sum) / count, psum(policy_sum) / policy_count
    ownership_loss, moves_left_loss = psum(ownership_sum) / owned_count, psum(moves_left_sum) / count
    opponent_loss, future_loss = psum(opponent_sum) / reply_count, psum(future_sum) / count
    total = weighted(value_loss, policy_loss, ownership_loss, moves_left_loss, opponent_loss, future_loss) + l2
    return params, new_bn_state, opt_state, Losses(total, value_loss, policy_loss, l2, ownership_loss,
                                                   moves_left_loss, opponent_loss, future_loss)

  return update
