"""A trained agent: the network of a checkpoint and its search, ready to play."""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any

import chex
import jax
import jax.numpy as jnp
import pgx

from azjax import checkpoint as ckpt
from azjax.config import Config
from azjax.games import make_env
from azjax.network import make_network
from azjax.search import make_search


@dataclasses.dataclass(frozen=True, eq=False)
class Agent:
  """Chooses moves by search with a trained network.

  `act(state, key, *, num_simulations=None, greedy=True)` takes a batched pgx
  State of the agent's game and returns one action per game: the most visited
  move when `greedy`, else a move sampled from the search policy. No root noise
  is added. `num_simulations=None` uses the checkpoint's own setting.
  """
  config: Config
  params: Any
  bn_state: Any
  step: int = 0

  @functools.cached_property
  def env(self) -> pgx.Env:
    return make_env(self.config.game)

  @functools.cached_property
  def network(self):
    return make_network(self.config.network, self.env.num_actions)

  @functools.cache
  def _policy(self, num_simulations: int):
    search = make_search(self.env, self.network, self.config.search, self.config.game, num_simulations)

    @jax.jit
    def policy(variables, state, key):
      keys = jax.random.split(key, state.current_player.shape[0] * 2).reshape(2, -1, *key.shape)
      out = search(variables, keys[0], state, noise=False)
      sampled = jax.vmap(lambda k, w: jax.random.categorical(k, jnp.log(w)))(keys[1], out.weights)
      return out.weights, out.value, sampled.astype(jnp.int32), jnp.argmax(out.weights, -1).astype(jnp.int32)

    return policy

  def search(self, state: pgx.State, key: chex.PRNGKey, *, num_simulations: int | None = None):
    """Returns (policy [B, A], value [B]) of a search from each game's position; the key is consumed."""
    weights, value, _, _ = self._policy(num_simulations or self.config.search.num_simulations)(
        (self.params, self.bn_state), state, key)
    return weights, value

  def act(self, state: pgx.State, key: chex.PRNGKey, *, num_simulations: int | None = None,
          greedy: bool = True) -> chex.Array:
    if state.current_player.ndim != 1:
      raise ValueError("Agent.act takes a batched pgx State (leading batch dimension); use jax.vmap(env.init)")
    if state.legal_action_mask.shape[-1] != self.env.num_actions:
      raise ValueError(f"this agent plays {self.config.game} ({self.env.num_actions} actions), "
                       f"not a game with {state.legal_action_mask.shape[-1]} actions")
    _, _, sampled, best = self._policy(num_simulations or self.config.search.num_simulations)(
        (self.params, self.bn_state), state, key)
    return best if greedy else sampled


def load_agent(path: str | os.PathLike, step: int | None = None) -> Agent:
  """Loads the agent of a run directory or checkpoint (the latest step unless `step` or the path names one)."""
  directory, path_step = ckpt.checkpoint_dir(path)
  mngr = ckpt.manager(directory)
  step = step if step is not None else path_step
  meta = ckpt.read_meta(mngr, step)
  config = ckpt.config_from_meta(meta)
  env = make_env(config.game)
  network = make_network(config.network, env.num_actions)
  obs = jax.eval_shape(lambda: jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 1)).observation)
  abstract = jax.eval_shape(network.init, jax.random.PRNGKey(0), obs)
  params, bn_state = ckpt.restore_model(mngr, abstract, meta["step"])
  return Agent(config=config, params=params, bn_state=bn_state, step=meta["step"])
