"""The replay window: one ring buffer ("lane") per self-play game slot, on device.

Every ply, each game slot appends its position to its own lane, with the
search's policy and the player to move. When the game ends, every position of
that game still in the lane is labelled with the outcome from its mover's view
(draw = 0). A game may span any number of train_steps: its positions wait in
the lane, unlabelled and never sampled, until it ends. Nothing is copied at
chunk edges and no finished position is dropped; positions leave only when the
window (lane) is full and newer ones overwrite them.

Lanes live with their games on the same device, so adding, labelling and
sampling never cross devices. A minibatch takes the same number of positions
from every lane, uniformly among its labelled positions (stratified uniform
sampling; lanes fill at the same rate). All functions here are _unbatched_
(one lane) and vmapped over lanes by the callers via `add`, `finish`, `sample`.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp


@chex.dataclass(frozen=True)
class Replay:
  obs: chex.Array  # [lanes, L, *obs_shape] observation dtype of the game
  policy: chex.Array  # [lanes, L, A] float32 search policy (the target pi)
  legal: chex.Array  # [lanes, L, A] bool legal moves (the policy is masked to them)
  mover: chex.Array  # [lanes, L] int32 player to move
  value: chex.Array  # [lanes, L] float32 outcome z for the mover (valid once labelled)
  written: chex.Array  # [lanes] int32 positions ever written to the lane
  labelled: chex.Array  # [lanes] int32 positions ever labelled (= first position of the game in play)


@chex.dataclass(frozen=True)
class Batch:
  obs: chex.Array  # [N, *obs_shape]
  policy: chex.Array  # [N, A]
  legal: chex.Array  # [N, A]
  value: chex.Array  # [N]
  weight: chex.Array  # [N] 1.0, or 0.0 where the lane had nothing labelled yet


def init(lanes: int, lane_size: int, obs: jax.ShapeDtypeStruct, num_actions: int) -> Replay:
  return Replay(
      obs=jnp.zeros((lanes, lane_size, *obs.shape), obs.dtype),
      policy=jnp.zeros((lanes, lane_size, num_actions), jnp.float32),
      legal=jnp.zeros((lanes, lane_size, num_actions), bool),
      mover=jnp.zeros((lanes, lane_size), jnp.int32),
      value=jnp.zeros((lanes, lane_size), jnp.float32),
      written=jnp.zeros((lanes,), jnp.int32),
      labelled=jnp.zeros((lanes,), jnp.int32),
  )


def _add(lane: Replay, obs, policy, legal, mover) -> Replay:
  i = lane.written % lane.mover.shape[0]
  return lane.replace(
      obs=lane.obs.at[i].set(obs), policy=lane.policy.at[i].set(policy), legal=lane.legal.at[i].set(legal),
      mover=lane.mover.at[i].set(mover), written=lane.written + 1)


def _finish(lane: Replay, done, rewards) -> Replay:
  size = lane.mover.shape[0]
  slots = jnp.arange(size)
  # The absolute index of the position now held by each ring slot.
  absolute = lane.written - 1 - (lane.written - 1 - slots) % size
  this_game = done & (absolute >= lane.labelled)
  return lane.replace(
      value=jnp.where(this_game, rewards[lane.mover], lane.value),
      labelled=jnp.where(done, lane.written, lane.labelled))


def _labelled_range(lane: Replay):
  """[lo, hi) absolute indices of the labelled positions still in the lane."""
  lo = jnp.maximum(lane.written - lane.mover.shape[0], 0)
  return lo, jnp.maximum(lane.labelled, lo)


def _sample(lane: Replay, key, n: int) -> Batch:
  lo, hi = _labelled_range(lane)
  count = hi - lo
  i = (lo + jax.random.randint(key, (n,), 0, jnp.maximum(count, 1))) % lane.mover.shape[0]
  return Batch(obs=lane.obs[i], policy=lane.policy[i], legal=lane.legal[i], value=lane.value[i],
               weight=jnp.broadcast_to((count > 0).astype(jnp.float32), (n,)))


def add(replay: Replay, obs, policy, legal, mover) -> Replay:
  """Appends one position per lane: obs [lanes, ...], policy/legal [lanes, A], mover [lanes]."""
  return jax.vmap(_add)(replay, obs, policy, legal, mover)


def finish(replay: Replay, done, rewards) -> Replay:
  """Labels the positions of each lane's game where `done` [lanes] with `rewards` [lanes, 2] (draw: zeros)."""
  return jax.vmap(_finish)(replay, done, rewards)


def sample(replay: Replay, keys, per_lane: int) -> Batch:
  """Draws `per_lane` positions uniformly from each lane's labelled positions; keys [lanes]. Returns [lanes*per_lane]."""
  batch = jax.vmap(_sample, in_axes=(0, 0, None))(replay, keys, per_lane)
  return jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), batch)


def size(replay: Replay) -> chex.Array:
  """Labelled positions available for sampling, per lane [lanes]."""
  lo, hi = jax.vmap(_labelled_range)(replay)
  return hi - lo
