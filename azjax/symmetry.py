"""The 8 symmetries of a square Go board (rotations and reflections), for training and search.

AlphaGo Zero, Methods: training data is augmented by the dihedral group (`train.augment`), and
each network evaluation in search sees the position "transformed by a dihedral reflection or
rotation selected uniformly at random" (`search.random_symmetry`); its policy is mapped back.
AlphaZero dropped both (chess and shogi are not symmetric); here they are Go-only switches.

A symmetry is a permutation of the board points: `PERMS[k][i]` is the point whose content lands
on point i. Observations are [H, W, C] with point i at (i // W, i % W), actions are the points
then pass (pgx Go).
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np

NUM = 8


@functools.cache
def perms(size: int) -> np.ndarray:
  """[8, size^2] int32: for each symmetry, the source point of every point."""
  index = np.arange(size * size).reshape(size, size)
  out = []
  for k in range(NUM):
    t = np.rot90(index, k % 4)
    out.append((t.T if k >= 4 else t).reshape(-1))
  return np.stack(out).astype(np.int32)


def inverse(size: int) -> np.ndarray:
  """[8, size^2]: the permutation that undoes each symmetry."""
  return np.argsort(perms(size), axis=-1).astype(np.int32)


def board(x: chex.Array, k: chex.Array, size: int, perm=None) -> chex.Array:
  """_unbatched_ [size^2, ...] (or a longer action vector: extra entries such as pass stay put) under symmetry k."""
  perm = jnp.asarray(perms(size) if perm is None else perm)[k]
  n = size * size
  return jnp.concatenate([x[:n][perm], x[n:]], axis=0)


def observation(obs: chex.Array, k: chex.Array, size: int) -> chex.Array:
  """_unbatched_ [H, W, C] observation under symmetry k."""
  return board(obs.reshape(size * size, -1), k, size).reshape(obs.shape)


def augment(key: chex.PRNGKey, obs, policy, legal, ownership=None, reply=(None, None), future=None, *, size: int):
  """_unbatched_: one position (obs [H, W, C], policy [A], legal [A], its ownership target [H * W] or None, the
  opponent's reply (policy [A], legal [A]) or Nones, and its future boards [H * W, horizons] or None) under a
  uniformly random symmetry."""
  k = jax.random.randint(key, (), 0, NUM)
  ownership, future = (None if x is None else board(x, k, size) for x in (ownership, future))
  reply = tuple(None if x is None else board(x, k, size) for x in reply)
  return observation(obs, k, size), board(policy, k, size), board(legal, k, size), ownership, reply, future


def symmetric_evaluator(evaluate, size: int):
  """`evaluate` seen through a random symmetry per position, its logits mapped back (the key is consumed)."""

  def wrapped(variables, key, state):
    key, draw = jax.random.split(key)
    k = jax.random.randint(draw, (state.observation.shape[0],), 0, NUM)
    obs = jax.vmap(functools.partial(observation, size=size))(state.observation, k)
    logits, value, extras = evaluate(variables, key, state.replace(observation=obs))
    back = jax.vmap(functools.partial(board, size=size, perm=inverse(size)))(logits, k)
    return back, value, extras  # the moves left and an area lead do not depend on the board's orientation

  return wrapped
