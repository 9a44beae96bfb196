"""Matches between players, all games in lockstep in one jitted program.

A `Player` is a name, a pure `policy(variables, key, state) -> actions [B]`
over a batch of pgx states, and the variables it reads (network weights, or
None). Programs are compiled once per (game, policies, games, openings) and
reused: two checkpoints of one config share a policy and so a program.

Games come in pairs that share an opening (`opening_plies` uniformly random
first plies, seeded per pair) with the colours swapped: player one takes the
opening mover's seat in even games and the other seat in odd ones.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Callable

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pgx

from azjax.config import SearchConfig
from azjax import rules
from azjax.games import SPECS, batched_init, batched_step, make_env
from azjax.rules import masked_logits
from azjax.search import Extras, choose_move, compiler_options, make_search_with

Policy = Callable[[Any, chex.PRNGKey, pgx.State], chex.Array]


@dataclasses.dataclass(frozen=True, eq=False)
class Player:
  name: str
  policy: Policy  # pure and jittable; its identity keys the compiled match program
  variables: Any = None

  def act(self, state: pgx.State, key: chex.PRNGKey) -> chex.Array:
    return jitted(self.policy)(self.variables, key, state)


@functools.cache
def jitted(policy: Policy):
  """The jitted policy, compiled once per policy (a search's compiler options: policies search)."""
  return jax.jit(policy, compiler_options=compiler_options())


@dataclasses.dataclass(frozen=True)
class MatchResult:
  wins: int
  draws: int
  losses: int
  # How the games went (issue 16: the self-play diagnostics, for evaluation games): mean and median
  # length in plies, the fraction that ended each way (rules.ENDINGS), and the first player's score
  # in the seat that moves first and in the other. Not part of equality.
  figures: dict = dataclasses.field(default_factory=dict, compare=False)

  @property
  def games(self) -> int:
    return self.wins + self.draws + self.losses

  @property
  def score(self) -> float:
    """Points per game for the first player (win 1, draw 0.5)."""
    return (self.wins + 0.5 * self.draws) / max(self.games, 1)

  def interval(self, z: float = 1.96) -> tuple[float, float]:
    """A 95% Wilson interval of the score, draws as half points (their smaller variance used).

    Unlike the normal approximation it stays honest at a 0% or 100% score: 0 of 20 gives 0-0.161, not 0-0.
    Without draws it is exactly Wilson's score interval."""
    n, p = max(self.games, 1), self.score
    var = (self.wins * (1 - p) ** 2 + self.draws * (0.5 - p) ** 2 + self.losses * p ** 2) / n
    shrink = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / shrink
    half = z * math.sqrt(var / n + z * z / (4 * n * n)) / shrink
    return max(0.0, centre - half), min(1.0, centre + half)

  def elo(self) -> tuple[float, float, float]:
    """The Elo difference the score implies, with the ends of its 95% interval (+-inf at 0 or 1)."""
    return tuple(elo_difference(s) for s in (self.score, *self.interval()))

  def __str__(self) -> str:
    lo, hi = self.interval()
    d, dlo, dhi = self.elo()
    return (f"{self.wins} wins, {self.draws} draws, {self.losses} losses in {self.games} games; "
            f"score {self.score:.3f} (95% CI {lo:.3f}-{hi:.3f}), Elo {d:+.0f} ({dlo:+.0f} to {dhi:+.0f})")


def elo_difference(score: float) -> float:
  """The Elo difference at which the logistic model expects `score` points per game."""
  if score <= 0.0:
    return -math.inf
  if score >= 1.0:
    return math.inf
  return -400.0 * math.log10(1.0 / score - 1.0)


# ---------------------------------------------------------------------------------------------- players


def random_moves(key: chex.PRNGKey, state: pgx.State) -> chex.Array:
  """[B] int32 a uniformly random legal move in each game (the key is consumed)."""
  logits = masked_logits(jnp.zeros(state.legal_action_mask.shape), state.legal_action_mask)
  return jax.random.categorical(key, logits).astype(jnp.int32)


def _random_policy(variables, key, state):
  del variables
  return random_moves(key, state)


random_player = Player("random", _random_policy)  # uniformly random legal moves


def _rollout_value(env: pgx.Env, key: chex.PRNGKey, state: pgx.State) -> chex.Array:
  """The return of uniformly random play from `state` for its player to move (one game)."""
  player = state.current_player

  def body(carry):
    state, key, total = carry
    key, k = jax.random.split(key)
    state = env.step(state, _random_policy(None, k, state))
    return state, key, total + state.rewards[player]

  done = lambda s: s.terminated | s.truncated
  _, _, total = jax.lax.while_loop(lambda c: ~done(c[0]), body, (state, key, jnp.zeros((), jnp.float32)))
  return total


@functools.cache
def mcts_policy(game: str, num_simulations: int) -> Policy:
  """Pure MCTS: uniform priors, random-rollout values, the paper's PUCT, the most visited move."""
  env = make_env(game)

  def evaluate(variables, key, state):  # batched over mctx's batch
    del variables
    keys = jax.random.split(key, state.current_player.shape[0])
    return (jnp.zeros(state.legal_action_mask.shape), jax.vmap(functools.partial(_rollout_value, env))(keys, state),
            Extras())

  search = make_search_with(env, evaluate, SearchConfig(), lambda state: state.legal_action_mask, num_simulations, game)

  def policy(variables, key, states):
    games = states.current_player.shape[0]
    out = search(None, jax.random.split(key, games), states, noise=False)
    move_keys = jax.random.split(jax.random.fold_in(key, 1), games)
    return jax.vmap(choose_move, in_axes=(0, 0, None, 0))(move_keys, out.move_weights, 0.0, out.move_rank)

  return policy


def mcts_player(game: str, num_simulations: int) -> Player:
  return Player(f"mcts{num_simulations}", mcts_policy(game, num_simulations))


# ---------------------------------------------------------------------------------------------- matches


@functools.cache
def _program(env: pgx.Env, first: Policy, second: Policy, num_games: int, opening_plies: int):
  game = _game(env)

  @functools.partial(jax.jit, compiler_options=compiler_options())  # the players search
  def play(first_vars, second_vars, key):
    pair_keys = jax.random.split(jax.random.fold_in(key, 0), (num_games + 1) // 2)
    game_keys = jnp.repeat(pair_keys, 2, axis=0)[:num_games]  # both games of a pair: one opening
    state = batched_init(env)(game_keys)
    returns = jnp.zeros_like(state.rewards)
    done = lambda s: s.terminated | s.truncated
    plies, ended = jnp.zeros((num_games,), jnp.int32), jnp.zeros((num_games,), jnp.int32)
    for ply in range(opening_plies):  # an opening may already end a game; its rewards, length and ending count
      action = jax.vmap(lambda k, s: _random_policy(None, jax.random.fold_in(k, ply), s))(game_keys, state)
      playing = ~done(state)
      state = batched_step(env)(state, action)
      returns, plies = returns + state.rewards, plies + playing
      ended = jnp.where(playing & done(state), rules.ending(game, state, plies), ended)
    seat = jnp.where(jnp.arange(num_games) % 2 == 0, state.current_player, 1 - state.current_player)
    moves_first = seat == state.current_player  # player one has the move after the opening

    def body(carry):
      state, returns, plies, ended, key = carry
      key, k1, k2 = jax.random.split(key, 3)
      action = jnp.where(state.current_player == seat, first(first_vars, k1, state),
                         second(second_vars, k2, state))
      playing = ~done(state)
      state = batched_step(env)(state, action)
      plies = plies + playing
      # A game's ending is read on the ply it ends (pgx keeps a finished state as it was).
      ended = jnp.where(playing & done(state), rules.ending(game, state, plies), ended)
      return state, returns + state.rewards, plies, ended, key  # pgx zeroes finished games' later rewards

    state, returns, plies, ended, _ = jax.lax.while_loop(lambda c: ~jnp.all(done(c[0])), body,
                                                         (state, returns, plies, ended, jax.random.fold_in(key, 1)))
    return jnp.take_along_axis(returns, seat[:, None], axis=1)[:, 0], plies, ended, moves_first

  return play


def _game(env: pgx.Env) -> str:
  """The azjax name of a pgx env (its ending codes depend on the game)."""
  return next((name for name, spec in SPECS.items() if spec.pgx_id == env.id), "")


FIGURES = ("mean_game_length", "game_length_p50", *(f"end_{name}" for name in rules.ENDINGS), "score_moving_first",
           "score_moving_second")


def figures(plies, ended, moves_first, outcome) -> dict:
  """How a match's games went: lengths, endings (fractions) and player one's score by seat."""
  score = lambda mask: float(((outcome[mask].astype(np.float64) + 1) / 2).mean()) if mask.any() else float("nan")
  return {"mean_game_length": float(plies.mean()), "game_length_p50": float(np.median(plies)),
          **{f"end_{name}": float((ended == i).mean()) for i, name in enumerate(rules.ENDINGS)},
          "score_moving_first": score(moves_first), "score_moving_second": score(~moves_first)}


def match_outcomes(env: pgx.Env, first: Player, second: Player, key: chex.PRNGKey, num_games: int, *,
                   opening_plies: int = 0):
  """Per-game returns of `first` (+1 win, 0 draw, -1 loss) over `num_games` games; the key is consumed."""
  return _played(env, first, second, key, num_games, opening_plies)[0]


def _played(env, first: Player, second: Player, key, num_games: int, opening_plies: int):
  """(returns, plies, endings, player one moved first) per game, as numpy arrays."""
  if num_games < 1:
    raise ValueError(f"num_games must be >= 1, got {num_games}")
  play = _program(env, first.policy, second.policy, num_games, opening_plies)
  return jax.device_get(play(first.variables, second.variables, key))


def match(env: pgx.Env, first: Player, second: Player, key: chex.PRNGKey, num_games: int, *,
          opening_plies: int = 0) -> MatchResult:
  """Plays `num_games` games of `first` against `second`, colours alternating; the key is consumed."""
  outcome, plies, ended, moves_first = _played(env, first, second, key, num_games, opening_plies)
  return MatchResult(wins=int((outcome > 0).sum()), draws=int((outcome == 0).sum()), losses=int((outcome < 0).sum()),
                     figures=figures(plies, ended, moves_first, outcome))
