"""Matches between players, all games in lockstep in one jitted program.

A player is `act(key, state) -> actions [B]` over a batch of pgx states. The
first player of `match` moves first in even-numbered games and second in odd
ones, so colours alternate.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import chex
import jax
import jax.numpy as jnp
import pgx

Player = Callable[[chex.PRNGKey, pgx.State], chex.Array]


@dataclasses.dataclass(frozen=True)
class MatchResult:
  wins: int
  draws: int
  losses: int

  @property
  def games(self) -> int:
    return self.wins + self.draws + self.losses

  @property
  def score(self) -> float:
    """Points per game for the first player (win 1, draw 0.5)."""
    return (self.wins + 0.5 * self.draws) / max(self.games, 1)

  def interval(self, z: float = 1.96) -> tuple[float, float]:
    """A 95% normal-approximation interval of the score (draws count as half points)."""
    n = max(self.games, 1)
    points = [1.0] * self.wins + [0.5] * self.draws + [0.0] * self.losses
    var = sum((p - self.score) ** 2 for p in points) / n
    half = z * math.sqrt(var / n)
    return max(0.0, self.score - half), min(1.0, self.score + half)

  def __str__(self) -> str:
    lo, hi = self.interval()
    return (f"{self.wins} wins, {self.draws} draws, {self.losses} losses in {self.games} games; "
            f"score {self.score:.3f} (95% CI {lo:.3f}-{hi:.3f})")


def random_player(key: chex.PRNGKey, state: pgx.State) -> chex.Array:
  """Uniformly random legal moves."""
  logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
  return jax.random.categorical(key, logits).astype(jnp.int32)


def match(env: pgx.Env, first: Player, second: Player, key: chex.PRNGKey, num_games: int) -> MatchResult:
  """Plays `num_games` games of `first` against `second`; the key is consumed."""

  @jax.jit
  def play(key):
    key, init_key = jax.random.split(key)
    state = jax.vmap(env.init)(jax.random.split(init_key, num_games))
    # `first` takes the opening mover's seat in even games, the other seat in odd ones.
    seat = jnp.where(jnp.arange(num_games) % 2 == 0, state.current_player, 1 - state.current_player)

    def body(carry):
      state, returns, key = carry
      key, k1, k2 = jax.random.split(key, 3)
      action = jnp.where(state.current_player == seat, first(k1, state), second(k2, state))
      state = jax.vmap(env.step)(state, action)
      return state, returns + state.rewards, key  # pgx zeroes the rewards of finished games on later steps

    state, returns, _ = jax.lax.while_loop(lambda c: ~jnp.all(c[0].terminated | c[0].truncated), body,
                                           (state, jnp.zeros_like(state.rewards), key))
    return jnp.take_along_axis(returns, seat[:, None], axis=1)[:, 0]

  outcome = jax.device_get(play(key))
  return MatchResult(wins=int((outcome > 0).sum()), draws=int((outcome == 0).sum()), losses=int((outcome < 0).sum()))
