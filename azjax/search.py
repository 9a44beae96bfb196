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
from typing import Any, Callable

import chex
import jax
import jax.numpy as jnp
import mctx
import pgx

from azjax import rules, symmetry
from azjax.config import SearchConfig
from azjax.games import spec
from azjax.network import Network

Variables = tuple[Any, Any]  # (params, bn_state)
# evaluate(variables, key, states [B]) -> (logits [B, A], value [B]): the network, or pure MCTS's rollouts.
Evaluate = Callable[[Any, chex.PRNGKey, pgx.State], tuple[chex.Array, chex.Array]]
LegalMoves = Callable[[pgx.State], chex.Array]  # states [B] -> [B, A] bool (rules.make_legal_moves)
masked_logits = rules.masked_logits


@chex.dataclass(frozen=True)
class SearchOutput:
  weights: chex.Array  # [B, A] visit distribution (PUCT) or improved policy (Gumbel): the policy target
  value: chex.Array  # [B] root value after search, for the player to move
  prior_value: chex.Array  # [B] the evaluator's value of the root before search
  prior_logits: chex.Array  # [B, A] the evaluator's logits at the root, before noise and masking
  legal: chex.Array  # [B, A] bool the moves the search considered (rules.make_legal_moves)
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


def choose_move(key: chex.PRNGKey, weights: chex.Array, sample: chex.Array) -> chex.Array:
  """_unbatched_: a move drawn in proportion to the search policy `weights` [A] where `sample`, else the
  most visited (greedy) move. The one move choice of self-play (by ply), agents and engines."""
  sampled = jax.random.categorical(key, jnp.log(weights))
  return jnp.where(sample, sampled, jnp.argmax(weights)).astype(jnp.int32)


def network_evaluator(network: Network):
  """`evaluate(variables, key, states) -> (logits [B, A], value [B])` of the network (the key is unused)."""

  def evaluate(variables, key, state):
    del key
    params, bn_state = variables
    (logits, value), _ = network.apply(params, bn_state, state.observation, False)
    return logits, value

  return evaluate


def lean(state: pgx.State) -> pgx.State:
  """The state without its observation (an empty [B, 0] array): what the tree stores per node."""
  return state.replace(observation=jnp.zeros((state.observation.shape[0], 0), state.observation.dtype))


def make_recurrent_fn(env: pgx.Env, evaluate: Evaluate, legal_moves: LegalMoves) -> mctx.RecurrentFn:
  """The one adapter from pgx to mctx: steps the game, evaluates the child, masks its illegal moves.

  A branch ends where a game ends, `terminated | truncated`, as in self-play: pgx zeroes the rewards
  of a truncated game, so the search scores it a draw, as self-play's value target does."""

  def recurrent_fn(variables, key, action, state):
    mover = state.current_player
    state = jax.vmap(env.step)(state, action)
    logits, value = evaluate(variables, key, state)
    reward = state.rewards[jnp.arange(action.shape[0]), mover]
    done = state.terminated | state.truncated
    return mctx.RecurrentFnOutput(reward=reward, discount=jnp.where(done, 0.0, -1.0),
                                  prior_logits=masked_logits(logits, legal_moves(state)),
                                  value=jnp.where(done, 0.0, value)), lean(state)

  return recurrent_fn


def make_search(env: pgx.Env, network: Network, config: SearchConfig, game: str, num_simulations: int | None = None):
  """The network's search (self-play, agents, engines), `search.go_pass` narrowing the legal moves."""
  evaluate = network_evaluator(network)
  if config.random_symmetry:
    evaluate = symmetry.symmetric_evaluator(evaluate, rules.GO_SIZES[game])
  return make_search_with(env, evaluate, config, rules.make_legal_moves(game, config.go_pass),
                          num_simulations or config.num_simulations, game)


def make_search_with(env: pgx.Env, evaluate: Evaluate, config: SearchConfig, legal_moves: LegalMoves,
                     num_simulations: int, game: str):
  """Returns `search(variables, keys [B], states [B], noise=True) -> SearchOutput` for any evaluator.

  `noise=False` disables the root noise (Dirichlet for PUCT, Gumbel for Gumbel)."""
  recurrent_fn = make_recurrent_fn(env, evaluate, legal_moves)
  alpha = dirichlet_alpha(config, game)  # > 0 even without noise: mctx draws the noise before weighting it
  qtransform = functools.partial(qtransform_with_unvisited, unvisited_value=config.unvisited_value)

  def one(variables, key, state, noise):
    state = jax.tree.map(lambda x: x[None], state)  # mctx wants a batch; this one has a single game
    root_key, key = jax.random.split(key)
    logits, value = evaluate(variables, root_key, state)
    legal = legal_moves(state)
    root = mctx.RootFnOutput(prior_logits=masked_logits(logits, legal), value=value, embedding=lean(state))
    if config.algorithm == "puct":
      out = mctx.muzero_policy(
          variables, key, root, recurrent_fn, num_simulations, invalid_actions=~legal, qtransform=qtransform,
          dirichlet_fraction=config.dirichlet_fraction if noise else 0.0, dirichlet_alpha=alpha,
          pb_c_init=config.c_init, pb_c_base=config.c_base)
    else:
      out = mctx.gumbel_muzero_policy(
          variables, key, root, recurrent_fn, num_simulations, invalid_actions=~legal,
          max_num_considered_actions=config.max_considered_actions,
          gumbel_scale=config.gumbel_scale if noise else 0.0)
    tree = out.search_tree
    return SearchOutput(weights=out.action_weights[0], value=tree.summary().value[0],
                        prior_value=value[0], prior_logits=logits[0], legal=legal[0], tree=tree)

  def search(variables, keys: chex.Array, states: pgx.State, noise: bool = True) -> SearchOutput:
    chex.assert_rank(keys, 2)
    chex.assert_equal_shape_prefix([keys, states.legal_action_mask], 1)
    return jax.vmap(functools.partial(one, noise=noise), in_axes=(None, 0, 0))(variables, keys, states)

  return search
