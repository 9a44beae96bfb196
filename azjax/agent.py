"""A trained agent: the network of a checkpoint and its search, ready to play."""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any

import chex
import jax
import numpy as np
import pgx

from azjax import checkpoint as ckpt
from azjax.arena import Player, jitted
from azjax.config import Config, apply_overrides, search_overrides
from azjax.games import batched_init, make_env
from azjax.network import make_network
from azjax.search import choose_move, make_search, root_summary


@dataclasses.dataclass(frozen=True, eq=False)
class Agent:
  """Chooses moves by search with a trained network.

  `act(state, key, *, num_simulations=None, greedy=True)` takes a batched pgx
  State of the agent's game and returns one action per game: the search's best
  move when `greedy` (the most visited under PUCT; under Gumbel search, the
  improved policy's best among the moves `search.play_unvisited` allows), else a
  move sampled from those. `analyse` reports the greedy move beside the policy. No root noise
  is added, so under `search.gumbel_act=halving` both are Sequential Halving's
  noise-free winner. `num_simulations=None` uses the checkpoint's own setting at play
  (`search.simulations_at_play`).
  """
  config: Config
  params: Any
  bn_state: Any
  step: int = 0

  @functools.cached_property
  def env(self) -> pgx.Env:
    return make_env(self.config.game)

  @functools.cached_property
  def num_actions(self) -> int:
    return self.env.num_actions  # pgx builds a whole initial state to answer this: ask once

  def with_search(self, overrides) -> "Agent":
    """This agent with other search settings (`search.field=value` strings; config.search_overrides)."""
    return dataclasses.replace(self, config=search_overrides(self.config, overrides))

  def simulations(self, num_simulations: int | None = None) -> int:
    """The simulations a search plays at: `num_simulations` when given, else the checkpoint's at play."""
    return num_simulations or self.config.search.simulations_at_play

  def player(self, name: str | None = None, *, num_simulations: int | None = None, greedy: bool = True) -> Player:
    """This agent as an arena Player (its own search settings unless `num_simulations` overrides them)."""
    policy = search_policy(self.config, self.simulations(num_simulations), greedy)
    return Player(name or f"{self.config.game}@{self.step}", policy, (self.params, self.bn_state))

  def search(self, state: pgx.State, key: chex.PRNGKey, *, num_simulations: int | None = None):
    """Returns (policy [B, A], value [B]) of a search from each game's position; the key is consumed."""
    out = jitted(searcher(self.config, self.simulations(num_simulations)))(
        (self.params, self.bn_state), key, state)
    return out.weights, out.value

  def analyse(self, state: pgx.State, key: chex.PRNGKey, *, num_simulations: int | None = None) -> dict:
    """A search from each game's position, move by move, as numpy arrays.

    Returns move [B] (the move `act` plays greedily with the same key; under Gumbel search it
    need not be the policy's argmax: a visited move under search.play_unvisited=false, Sequential
    Halving's winner under search.gumbel_act=halving), policy [B, A] (the search's move
    probabilities), value [B] (the root's value for the player to move), visits [B, A] and q [B, A]:
    each move's searched value for the player to move, NaN where the search did not visit it."""
    out = jitted(_analyser(self.config, self.simulations(num_simulations)))(
        (self.params, self.bn_state), key, state)
    out = jax.device_get(out)
    out["q"] = np.where(out["visits"] > 0, out["q"], np.nan)
    return out

  def act(self, state: pgx.State, key: chex.PRNGKey, *, num_simulations: int | None = None,
          greedy: bool = True) -> chex.Array:
    if state.current_player.ndim != 1:
      raise ValueError("Agent.act takes a batched pgx State (leading batch dimension); use jax.vmap(env.init)")
    if state.legal_action_mask.shape[-1] != self.num_actions:
      raise ValueError(f"this agent plays {self.config.game} ({self.num_actions} actions), "
                       f"not a game with {state.legal_action_mask.shape[-1]} actions")
    return self.player(num_simulations=num_simulations, greedy=greedy).act(state, key)


def _structure(config: Config):
  """The parts of a config that decide an agent's program (not its seed, schedule or run settings)."""
  return config.game, config.network, config.search


@functools.cache
def _searcher_for(game: str, network_config, search_config, num_simulations: int, env: pgx.Env | None = None):
  """The agent's search without root noise; `env` steps the game where it is not training's (the engines' Go)."""
  env = env or make_env(game)
  network = make_network(network_config, env.num_actions, dtype=network_config.inference_dtype)
  search = make_search(env, network, search_config, game, num_simulations)

  def run(variables, key, state):
    return search(variables, jax.random.split(key, state.current_player.shape[0]), state, noise=False)

  return run


def searcher(config: Config, num_simulations: int, env: pgx.Env | None = None):
  """`run(variables, key, states) -> SearchOutput` of an agent with this config (cached; its search is jitted)."""
  return _searcher_for(*_structure(config), num_simulations, env)


def _moves(key, out, temperature):
  """One move per game from the search `out`'s move weights and greedy ranks [B, A] (search.choose_move)."""
  keys = jax.random.split(key, out.move_weights.shape[0])
  return jax.vmap(choose_move, in_axes=(0, 0, None, 0))(keys, out.move_weights, temperature, out.move_rank)


@functools.cache
def _analyser_for(game: str, network_config, search_config, num_simulations: int):
  run = _searcher_for(game, network_config, search_config, num_simulations)

  def analyse(variables, key, state):
    search_key, move_key = jax.random.split(key)  # as the search policy splits it, so `move` is act's move
    out = run(variables, search_key, state)
    visits, q = root_summary(out)  # [B, A] whichever tree searched (compact trees index their children)
    return {"move": _moves(move_key, out, 0.0), "policy": out.weights, "value": out.value,
            "visits": visits, "q": q}

  return analyse


def _analyser(config: Config, num_simulations: int):
  return _analyser_for(*_structure(config), num_simulations)


@functools.cache
def _search_policy_for(game: str, network_config, search_config, num_simulations: int, greedy: bool):
  run = _searcher_for(game, network_config, search_config, num_simulations)

  def policy(variables, key, state):
    search_key, move_key = jax.random.split(key)
    return _moves(move_key, run(variables, search_key, state), 0.0 if greedy else 1.0)

  return policy


def search_policy(config: Config, num_simulations: int, greedy: bool = True):
  """A pure policy(variables, key, state) -> actions: search without root noise, then the search's best
  move (`greedy`: the most visited under PUCT) or one sampled from the search policy (under gumbel_act=halving
  its winner either way). Cached, so equal settings share compiled programs."""
  return _search_policy_for(*_structure(config), num_simulations, greedy)


def load_agent(path: str | os.PathLike, step: int | None = None, seed: int | None = None) -> Agent:
  """Loads the agent of a run directory or checkpoint: the latest intact step (a damaged newer one is named
  on stderr and passed over) unless `step` or the path names one (CheckpointError if that one is damaged).
  A sweep's checkpoint holds one network per seed: `seed` picks one (CheckpointError naming them if not)."""
  directory, _ = ckpt.checkpoint_dir(path)
  meta = ckpt.meta_of(path, step, warn=ckpt.warning)
  config, seeds = ckpt.config_from_meta(meta), meta.get("seeds")
  if seeds is not None and seed not in seeds:
    raise ckpt.CheckpointError(f"{directory} holds the networks of a sweep's seeds {seeds}: name one (seed=)")
  if seeds is None and seed not in (None, config.seed):
    raise ckpt.CheckpointError(f"{directory} holds one network, of seed {config.seed}, not {seed}")
  env = make_env(config.game)
  network = make_network(config.network, env.num_actions)
  obs = jax.eval_shape(lambda: batched_init(env)(jax.random.split(jax.random.PRNGKey(0), 1)).observation)
  abstract = jax.eval_shape(network.init, jax.random.PRNGKey(0), obs)
  if seeds is not None:  # stacked on a leading seed axis (sweep.py)
    abstract = jax.tree.map(lambda x: jax.ShapeDtypeStruct((len(seeds), *x.shape), x.dtype), abstract)
  params, bn_state = ckpt.load_model(ckpt.manager(directory), abstract, meta["step"])
  if seeds is not None:
    params, bn_state = jax.tree.map(lambda x: x[seeds.index(seed)], (params, bn_state))
    config = apply_overrides(config, [f"seed={seed}"])
  return Agent(config=config, params=params, bn_state=bn_state, step=meta["step"])
