"""Monte-Carlo tree search with mctx over pgx states.

The embedding of a node is the pgx State itself, so the tree is exact: the
recurrent function steps the real game. The tree keeps every node's embedding,
so it keeps them lean: without the observation (two thirds of a chess State),
which pgx computes anew each time it steps into a node, where the network reads
it. Illegal moves are masked at every node (mctx masks only the root).
Two-player zero-sum: the reward is the mover's, discount -1 flips the value to
the other player, and 0 at terminal states.

Search is written for one game and vmapped over games, so each game draws its
own Dirichlet and Gumbel noise from its own key: the result does not depend on
how the games are split over devices.
"""

from __future__ import annotations

import functools
from typing import Any

import chex
import jax
import jax.numpy as jnp
import mctx
import pgx

from azjax.config import SearchConfig
from azjax.games import spec
from azjax.network import Network

Variables = tuple[Any, Any]  # (params, bn_state)


@chex.dataclass(frozen=True)
class SearchOutput:
  weights: chex.Array  # [B, A] visit distribution (PUCT) or improved policy (Gumbel): the policy target
  value: chex.Array  # [B] root value after search, for the player to move
  tree: Any  # mctx.Tree with a leading [B, 1] batch (for inspection)


def dirichlet_alpha(config: SearchConfig, game: str) -> float:
  """The root noise alpha: the config's if set, else the game's (AlphaZero Methods)."""
  return config.dirichlet_alpha if config.dirichlet_alpha > 0 else spec(game).dirichlet_alpha


def qtransform_with_unvisited(tree: mctx.Tree, node_index, *, unvisited_value: float) -> chex.Array:
  """_unbatched_ Q-values mapped from [-1, 1] to [0, 1], an unvisited child counting as `unvisited_value`.

  AlphaGo Zero (Methods, "Expand and evaluate") initialises Q(s, a) = 0: a draw
  on the [-1, 1] scale. The AlphaZero pseudocode scores unvisited children as
  losses (-1). `search.unvisited_value` picks either.
  """
  q = jnp.where(tree.children_visits[node_index] > 0, tree.qvalues(node_index), unvisited_value)
  return (q + 1.0) / 2.0


def masked_logits(logits: chex.Array, legal: chex.Array) -> chex.Array:
  return jnp.where(legal, logits, jnp.finfo(logits.dtype).min)


def _evaluate(network: Network, variables: Variables, state: pgx.State):
  params, bn_state = variables
  (logits, value), _ = network.apply(params, bn_state, state.observation, False)
  return masked_logits(logits, state.legal_action_mask), value


def lean(state: pgx.State) -> pgx.State:
  """The state without its observation (an empty [B, 0] array): what the tree stores per node."""
  return state.replace(observation=jnp.zeros((state.observation.shape[0], 0), state.observation.dtype))


def make_recurrent_fn(env: pgx.Env, network: Network) -> mctx.RecurrentFn:
  """Steps the game, evaluates the child with the network, masks its illegal moves."""

  def recurrent_fn(variables, rng_key, action, state):
    del rng_key  # the games are deterministic
    mover = state.current_player
    state = jax.vmap(env.step)(state, action)
    logits, value = _evaluate(network, variables, state)
    reward = state.rewards[jnp.arange(action.shape[0]), mover]
    value = jnp.where(state.terminated, 0.0, value)
    discount = jnp.where(state.terminated, 0.0, -1.0)
    return mctx.RecurrentFnOutput(reward=reward, discount=discount, prior_logits=logits, value=value), lean(state)

  return recurrent_fn


def make_search(env: pgx.Env, network: Network, config: SearchConfig, game: str, num_simulations: int | None = None):
  """Returns `search(variables, keys [B], states [B]) -> SearchOutput`; `noise=False` disables root noise."""
  recurrent_fn = make_recurrent_fn(env, network)
  sims = num_simulations or config.num_simulations
  alpha = dirichlet_alpha(config, game)

  def one(variables, key, state, noise):
    state = jax.tree.map(lambda x: x[None], state)  # mctx wants a batch; this one has a single game
    logits, value = _evaluate(network, variables, state)
    root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=lean(state))
    invalid = ~state.legal_action_mask
    if config.algorithm == "puct":
      out = mctx.muzero_policy(
          variables, key, root, recurrent_fn, sims, invalid_actions=invalid,
          qtransform=functools.partial(qtransform_with_unvisited, unvisited_value=config.unvisited_value),
          dirichlet_fraction=config.dirichlet_fraction if noise else 0.0, dirichlet_alpha=alpha,
          pb_c_init=config.c_init, pb_c_base=config.c_base)
    else:
      out = mctx.gumbel_muzero_policy(
          variables, key, root, recurrent_fn, sims, invalid_actions=invalid,
          max_num_considered_actions=config.max_considered_actions,
          gumbel_scale=config.gumbel_scale if noise else 0.0)
    value = out.search_tree.summary().value
    return SearchOutput(weights=out.action_weights[0], value=value[0], tree=out.search_tree)

  def search(variables: Variables, keys: chex.Array, states: pgx.State, noise: bool = True) -> SearchOutput:
    return jax.vmap(functools.partial(one, noise=noise), in_axes=(None, 0, 0))(variables, keys, states)

  return search
