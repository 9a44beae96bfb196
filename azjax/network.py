"""The AlphaZero residual network (AlphaGo Zero, Nature 2017, Methods "Neural network architecture").

A convolutional stem, `blocks` residual blocks of `channels` filters with batch
norm, a policy head over every pgx action and a tanh value head. `f(s) = (p, v)`
with `v` the expected outcome for the player to move. With `config.ownership` (Go), a 1x1
convolution of the trunk also predicts who owns each point at the end (KataGo's auxiliary target);
with `config.moves_left`, a head like the value head predicts the plies left to the end (Lc0's
moves-left head); with `config.opponent_policy`, the policy head's last layer also predicts the opponent's reply
(KataGo's auxiliary policy target; training reads it, search does not); with `config.global_pooling`, KataGo's global
pooling in every block and in the value, moves-left and material heads; with `config.liberties` (Go), KataGo's
liberty planes join the input; with `config.attacks` (chess), attack planes; with `config.material_change` (chess), a
head like the value head predicts the mover's material change config.MATERIAL_PLIES later; with `config.history`
below 8 (chess, Go), the older positions' planes leave it.
Training reads every head through `apply_heads`; search reads the moves left only.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import haiku as hk
import jax
import jax.numpy as jnp

from azjax import chess_features, rules
from azjax.config import FUTURE_PLIES, MATERIAL_PLIES, PAPER_HISTORY, NetworkConfig


# The moves-left head's unit: it predicts plies / MOVES_LEFT_UNIT (softplus: >= 0), so its output and
# loss stay near 1 in chess and Go, whose games last tens to hundreds of plies.
MOVES_LEFT_UNIT = 100.0


class Heads(NamedTuple):
  """Every output of the network. obs [B, H, W, C] gives logits [B, A]; value [B] in [-1, 1]; ownership [B, H * W],
  the logit that the mover owns each point at the end (None without `config.ownership`); moves_left [B] >= 0,
  the plies left to the game's end (None without `config.moves_left`); opponent_logits [B, A], the opponent's reply
  on the next turn (None without `config.opponent_policy`); future [B, H * W, 2], before its tanh, who holds each
  point config.FUTURE_PLIES later (None without `config.future_position`); material_change [B, len(MATERIAL_PLIES)],
  the mover's material lead's change config.MATERIAL_PLIES later, in minor pieces (None without
  `config.material_change`)."""
  logits: object
  value: object
  ownership: object = None
  moves_left: object = None
  opponent_logits: object = None
  future: object = None
  material_change: object = None


class Network(NamedTuple):
  """`init(key, obs) -> (params, bn_state)`; `apply(params, bn_state, obs, is_training) -> ((logits, value), bn_state)`;
  `apply_heads(...)`, the same with `(Heads, bn_state)`. obs: any dtype, cast to float32."""
  init: callable
  apply: callable
  apply_heads: callable


# The history in pgx's observations, by their channel count: chess holds 8 positions of 14 planes (the current first),
# then 7 constant planes; Go 8 of 2 (the mover's stones, the opponent's), then 1 (the colour).
_HISTORY_LAYOUT = {119: (14, 7), 17: (2, 1)}


def recent_history(obs: jax.Array, positions: int) -> jax.Array:
  """[..., C] -> the planes of the observation's `positions` most recent positions, then its constant planes
  (`NetworkConfig.history`); all of them at 8."""
  if positions == PAPER_HISTORY:
    return obs
  per_position, constant = _HISTORY_LAYOUT[obs.shape[-1]]
  return jnp.concatenate([obs[..., :per_position * positions], obs[..., -constant:]], axis=-1)


def _batch_norm(axis_name):
  # Momentum as in the TF/Keras default the paper's stack used; statistics are
  # averaged over the device axis when training sharded so every device
  # normalises with the global batch's moments.
  return hk.BatchNorm(create_scale=True, create_offset=True, decay_rate=0.99, cross_replica_axis=axis_name)


def _conv(channels, kernel):
  return hk.Conv2D(channels, kernel, with_bias=False)


def global_pool(x):
  """[B, H, W, C] -> [B, 2C]: each channel's mean and max over the board (KataGo's global pooling; the board
  size is fixed per game, so KataGo's size-scaled mean would add nothing)."""
  return jnp.concatenate([x.mean(axis=(1, 2)), x.max(axis=(1, 2))], axis=-1)


def make_network(config: NetworkConfig, num_actions: int, axis_name: str | None = None,
                 dtype: str = "float32") -> Network:
  """Builds the network; `axis_name` names the device axis for batch-norm statistics.

  `dtype` "bfloat16" computes `apply` in bfloat16 (parameters, statistics and activations; the
  outputs come back as float32): for inference in self-play (`network.inference_dtype`).
  Parameters are always created and kept in float32."""

  def forward(obs, is_training):
    obs = obs if jnp.issubdtype(obs.dtype, jnp.floating) else obs.astype(jnp.float32)
    x = recent_history(obs, config.history)
    if config.liberties:  # Go: KataGo's liberty planes beside pgx's
      x = jnp.concatenate([x, rules.go_liberty_planes(obs).astype(x.dtype)], axis=-1)
    if config.attacks:  # chess: Giraffe's attack and defend maps
      x = jnp.concatenate([x, chess_features.attack_planes(obs).astype(x.dtype)], axis=-1)
    x = jax.nn.relu(_batch_norm(axis_name)(_conv(config.channels, 3)(x), is_training))
    for _ in range(config.blocks):
      y = jax.nn.relu(_batch_norm(axis_name)(_conv(config.channels, 3)(x), is_training))
      if config.global_pooling:  # KataGo's global pooling bias: what the whole board holds, at every point
        y = y + hk.Linear(config.channels)(global_pool(y))[:, None, None, :]
      y = _batch_norm(axis_name)(_conv(config.channels, 3)(y), is_training)
      x = jax.nn.relu(x + y)
    # The policy head's logits [B, A], and with `opponent_policy` the opponent's reply's from the same head's last
    # layer, widened (KataGo: a second output channel of the policy head).
    outputs = 2 if config.opponent_policy else 1
    if config.policy_head == "planes":  # AlphaZero's chess policy: 73 planes, each move read at its square
      p = jax.nn.relu(_batch_norm(axis_name)(_conv(config.channels, 3)(x), is_training))
      p = hk.Conv2D(chess_features.POLICY_PLANES * outputs, 1)(p)
      p = p.reshape(*p.shape[:-1], outputs, chess_features.POLICY_PLANES)
      # The mover's moves, then the reply's: each read at its from-square on this board (the reply's in its frame).
      policies = [p[..., k, :].reshape(p.shape[0], -1)[:, chess_features.policy_index(opponent=k == 1)]
                  for k in range(outputs)]
    else:  # AlphaGo Zero's: 2 planes, then every action from every point
      p = jax.nn.relu(_batch_norm(axis_name)(_conv(config.policy_channels, 1)(x), is_training))
      policies = jnp.split(hk.Linear(num_actions * outputs)(p.reshape(p.shape[0], -1)), outputs, axis=-1)

    def scalar_head(x, width=1):  # the value head's shape, for the value, moves left and material: [B, width]
      if config.global_pooling:  # KataGo's value head: pooled channels of a 1x1 convolution
        h = global_pool(jax.nn.relu(_batch_norm(axis_name)(_conv(config.channels, 1)(x), is_training)))
      else:  # AlphaGo Zero's: one plane, every point
        h = jax.nn.relu(_batch_norm(axis_name)(_conv(1, 1)(x), is_training)).reshape(x.shape[0], -1)
      h = jax.nn.relu(hk.Linear(config.value_hidden)(h))
      return hk.Linear(width)(h)

    value = jnp.tanh(scalar_head(x)[:, 0])
    ownership = hk.Conv2D(1, 1)(x).reshape(x.shape[0], -1) if config.ownership else None
    moves_left = MOVES_LEFT_UNIT * jax.nn.softplus(scalar_head(x)[:, 0]) if config.moves_left else None
    future = None
    if config.future_position:  # KataGo's conv_futurepos: a 1x1 convolution of the trunk, one plane a horizon
      future = hk.Conv2D(len(FUTURE_PLIES), 1, with_bias=False)(x).reshape(x.shape[0], -1, len(FUTURE_PLIES))
    material_change = scalar_head(x, len(MATERIAL_PLIES)) if config.material_change else None
    return Heads(policies[0], value, ownership, moves_left, policies[1] if config.opponent_policy else None, future,
                 material_change)

  transformed = hk.without_apply_rng(hk.transform_with_state(forward))

  @jax.jit  # one program: called eagerly, haiku's init compiles op by op (a small shogi network: 3.2 s against 0.8)
  def init(key, obs):
    params, bn_state = transformed.init(key, obs, True)
    # Haiku starts the moving variance at 0, so an untrained network in
    # inference mode divides by sqrt(eps) and saturates every tanh and
    # softmax: search would then see one-hot priors. Start it at 1 instead
    # (the first update replaces it: the averages are zero-debiased).
    bn_state = {name: dict(s, average=jnp.ones_like(s["average"])) if name.endswith("var_ema") else s
                for name, s in bn_state.items()}
    return params, bn_state

  def apply_heads(params, bn_state, obs, is_training):
    if dtype == "float32":
      return transformed.apply(params, bn_state, obs.astype(jnp.float32), is_training)
    low = functools.partial(jax.tree.map, lambda x: x.astype(dtype))
    outputs, new_state = transformed.apply(low(params), low(bn_state), obs.astype(dtype), is_training)
    # Training updates the batch-norm averages: they come back in float32. Inference leaves them as they were.
    new_state = jax.tree.map(lambda new, old: new.astype(old.dtype), new_state, bn_state) if is_training else bn_state
    return jax.tree.map(lambda x: x.astype(jnp.float32), outputs), new_state

  def apply(params, bn_state, obs, is_training):
    heads, new_state = apply_heads(params, bn_state, obs, is_training)
    return (heads.logits, heads.value), new_state

  return Network(init, apply, apply_heads)
