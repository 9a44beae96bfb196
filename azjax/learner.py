"""The learner: loss of eq. 1 (AlphaGo Zero, Nature 2017) and the optimiser.

    l = (z - v)^2 - pi^T log p + c ||theta||^2

`train.value_weight` scales the first term (1, the default, is the papers').

`p` is the network's policy renormalised over the legal moves (AlphaZero
Methods: "Illegal moves are masked out by setting their probabilities to zero,
and re-normalising"). Each auxiliary head the config builds adds its loss, weighed by the `network.<name>`
field of its name in `AUX_LOSSES` (KataGo's ownership, opponent-reply and future-position targets, Lc0's moves
left, and this project's material change). Gradients are averaged over every position of the global minibatch:
each device sums its share, and the sums meet in one `psum`.
"""

from __future__ import annotations

from typing import Callable, Mapping, NamedTuple

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
  aux: dict[str, chex.Array]  # each trained auxiliary head's unweighted loss, by its name in AUX_LOSSES; {} if none


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


# The material-change head's unit: a minor piece (3 points), so its squared error is near 1 for a piece won or lost.
MATERIAL_UNIT = 3.0


def material_loss_sum(material_change, batch: Batch):
  """Weighted sum over the batch of the material-change head's squared error, in MATERIAL_UNIT, averaged over the
  horizons (network.material_change)."""
  error = jnp.square(material_change - batch.material_change / MATERIAL_UNIT).mean(-1)
  return jnp.sum(batch.weight * error)


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


class AuxLoss(NamedTuple):
  loss_sum: Callable  # (heads, batch) -> the weighted sum of the head's loss over the batch
  positions: Callable  # batch -> [N], the weights of the positions its mean runs over


# The auxiliary heads, each by the name of the `network` field that weighs it.
AUX_LOSSES = {
    "ownership": AuxLoss(lambda heads, batch: ownership_loss_sum(heads.ownership, batch),
                         lambda batch: batch.weight * batch.owned),  # a resigned game's positions have no owners
    "moves_left": AuxLoss(lambda heads, batch: moves_left_loss_sum(heads.moves_left, batch),
                          lambda batch: batch.weight),
    "opponent_policy": AuxLoss(lambda heads, batch: opponent_loss_sum(heads.opponent_logits, batch), opponent_mask),
    "future_position": AuxLoss(lambda heads, batch: future_loss_sum(heads.future, batch), lambda batch: batch.weight),
    "material_change": AuxLoss(lambda heads, batch: material_loss_sum(heads.material_change, batch),
                               lambda batch: batch.weight),
}


def aux_weights_of(network_config) -> dict[str, float]:
  """{name: weight} of the auxiliary heads a `NetworkConfig` trains (its AUX_LOSSES fields that are not 0)."""
  return {name: getattr(network_config, name) for name in AUX_LOSSES if getattr(network_config, name)}


def make_update(network: Network, optimizer: optax.GradientTransformation, config: TrainConfig,
                axis_name: str | None = None, aux_weights: Mapping[str, float] | None = None):
  """Returns `update(params, bn_state, opt_state, batch) -> (params, bn_state, opt_state, Losses)`.

  With `axis_name`, `batch` is this device's share and the result is the same on every device. `aux_weights`
  ({name in AUX_LOSSES: weight}, as `aux_weights_of(network_config)` gives it) names the auxiliary heads to train;
  the batch then carries their targets, and `Losses.aux` their losses.
  """
  unknown = set(aux_weights or {}) - set(AUX_LOSSES)
  if unknown:
    raise ValueError(f"aux_weights: unknown heads {sorted(unknown)}; allowed: {sorted(AUX_LOSSES)}")
  weights = {name: w for name, w in (aux_weights or {}).items() if w}

  def psum(x):
    return jax.lax.psum(x, axis_name) if axis_name else x

  def weighted(value, policy, aux):
    """Eq. 1's data terms (and the auxiliary heads'), each mean loss times its weight."""
    return sum((weights[name] * aux[name] for name in weights), config.value_weight * value + policy)

  def update(params, bn_state, opt_state, batch: Batch):
    count = jnp.maximum(psum(batch.weight.sum()), 1.0)
    # A position with an all-zero policy has no policy target (a fast search's, playout-cap
    # randomisation): the policy term averages over the positions that have one.
    policy_count = jnp.maximum(psum(jnp.sum(batch.weight * has_policy(batch.policy))), 1.0)
    aux_counts = {name: jnp.maximum(psum(jnp.sum(AUX_LOSSES[name].positions(batch))), 1.0) for name in weights}

    def data_loss(params):
      heads, new_bn_state = network.apply_heads(params, bn_state, batch.obs, True)
      value_sum, policy_sum = data_loss_sums(heads.logits, heads.value, batch)
      aux_sums = {name: AUX_LOSSES[name].loss_sum(heads, batch) for name in weights}
      loss = weighted(value_sum / count, policy_sum / policy_count,
                      {name: aux_sums[name] / aux_counts[name] for name in weights})
      return loss, (value_sum, policy_sum, aux_sums, new_bn_state)

    grads, (value_sum, policy_sum, aux_sums, new_bn_state) = jax.grad(data_loss, has_aux=True)(params)
    l2, l2_grads = jax.value_and_grad(l2_penalty)(params, config.l2)
    grads = jax.tree.map(lambda g, r: psum(g) + r, grads, l2_grads)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    value_loss, policy_loss = psum(value_sum) / count, psum(policy_sum) / policy_count
    aux = {name: psum(aux_sums[name]) / aux_counts[name] for name in weights}
    total = weighted(value_loss, policy_loss, aux) + l2
    return params, new_bn_state, opt_state, Losses(total, value_loss, policy_loss, l2, aux)

  return update
