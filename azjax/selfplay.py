"""Self-play: B games in lockstep, one ply per scan step, with auto-reset.

The latest network plays both sides. Moves are sampled in proportion to the
search policy for the first `temperature_plies` plies of a game and chosen
greedily after (AlphaGo Zero Methods "Self-play": tau = 1 for 30 moves, then
tau -> 0). Every position goes to its slot's replay lane; a finished game's
positions are labelled there and the slot starts a new game.

Randomness is drawn per game from `fold_in(key, slot)`, so the games do not
depend on how many devices share them.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import pgx

from azjax import replay as replay_lib
from azjax.config import SelfPlayConfig


@chex.dataclass(frozen=True)
class Actors:
  env: pgx.State  # [B] the games in play
  ply: chex.Array  # [B] int32 plies played in each game
  slot: chex.Array  # [B] int32 global index of each game slot (names its randomness and lane)
  first: chex.Array  # [B] int32 player id that moved first (pgx randomises it)


@chex.dataclass(frozen=True)
class Outcome:
  done: chex.Array  # [B] bool the game ended on this ply (and its slot restarted)
  plies: chex.Array  # [B] int32 its length
  rewards: chex.Array  # [B, 2] its outcome per player id (zeros for a draw or the length cap)
  first: chex.Array  # [B] int32 the player id that moved first


@chex.dataclass(frozen=True)
class PlayStats:
  games: chex.Array  # games finished in the chunk
  plies: chex.Array  # total length of those games
  first_player_score: chex.Array  # sum over finished games of the first mover's outcome

  @classmethod
  def of(cls, outcome: Outcome) -> "PlayStats":
    first = jnp.take_along_axis(outcome.rewards, outcome.first[..., None], axis=-1)[..., 0]
    return cls(games=outcome.done.sum(), plies=jnp.where(outcome.done, outcome.plies, 0).sum(),
               first_player_score=jnp.where(outcome.done, first, 0.0).sum())


def per_game_keys(key: chex.PRNGKey, slot: chex.Array) -> chex.Array:
  """One key per game slot, independent of how the slots are sharded."""
  return jax.vmap(jax.random.fold_in, in_axes=(None, 0))(key, slot)


def init_actors(env: pgx.Env, key: chex.PRNGKey, slot: chex.Array) -> Actors:
  """Fresh games for the given slots; the key is consumed."""
  state = jax.vmap(env.init)(per_game_keys(key, slot))
  return Actors(env=state, ply=jnp.zeros_like(slot), slot=slot, first=state.current_player.astype(jnp.int32))


def select_action(key: chex.PRNGKey, weights: chex.Array, ply: chex.Array, temperature_plies: int) -> chex.Array:
  """_unbatched_: samples from `weights` [A] before `temperature_plies`, else the most visited move."""
  sampled = jax.random.categorical(key, jnp.log(weights))
  return jnp.where(ply < temperature_plies, sampled, jnp.argmax(weights)).astype(jnp.int32)


def play_ply(env: pgx.Env, search, config: SelfPlayConfig, variables, actors: Actors, replay: replay_lib.Replay,
             key: chex.PRNGKey, codec: replay_lib.Codec = replay_lib.Codec()):
  """Plays one move in every game; returns (actors, replay, Outcome). The key is consumed."""
  keys = jax.vmap(lambda k: jax.random.split(k, 3))(per_game_keys(key, actors.slot))
  search_keys, action_keys, reset_keys = keys[:, 0], keys[:, 1], keys[:, 2]
  state = actors.env
  out = search(variables, search_keys, state)
  action = jax.vmap(select_action, in_axes=(0, 0, 0, None))(action_keys, out.weights, actors.ply,
                                                            config.temperature_plies)
  replay = replay_lib.add(replay, state.observation, out.weights, state.legal_action_mask, state.current_player,
                          codec)

  state = jax.vmap(env.step)(state, action)
  ply = actors.ply + 1
  capped = (ply >= config.max_plies) if config.max_plies > 0 else jnp.zeros_like(state.terminated)
  done = state.terminated | state.truncated | capped
  # Only a real end of game scores; truncation and the length cap are draws.
  rewards = jnp.where(state.terminated[:, None], state.rewards, 0.0)
  replay = replay_lib.finish(replay, done, rewards)

  outcome = Outcome(done=done, plies=ply, rewards=rewards, first=actors.first)
  fresh = jax.vmap(env.init)(reset_keys)
  state = where_games(done, fresh, state)
  actors = Actors(env=state, ply=jnp.where(done, 0, ply), slot=actors.slot,
                  first=jnp.where(done, fresh.current_player, actors.first))
  return actors, replay, outcome


def where_games(mask, new, old):
  """Per game (leading axis), `new` where `mask` is set and `old` elsewhere, for every leaf of a pytree."""
  return jax.tree.map(lambda n, o: jnp.where(mask.reshape(mask.shape + (1,) * (o.ndim - 1)), n, o), new, old)


def play_chunk(env: pgx.Env, search, config: SelfPlayConfig, variables, actors: Actors, replay, key,
               codec: replay_lib.Codec = replay_lib.Codec()):
  """Plays `config.chunk_plies` plies in every game; returns (actors, replay, PlayStats). The key is consumed."""

  def body(carry, ply_key):
    actors, replay = carry
    actors, replay, outcome = play_ply(env, search, config, variables, actors, replay, ply_key, codec)
    return (actors, replay), PlayStats.of(outcome)

  (actors, replay), stats = jax.lax.scan(body, (actors, replay), jax.random.split(key, config.chunk_plies))
  return actors, replay, jax.tree.map(jnp.sum, stats)
