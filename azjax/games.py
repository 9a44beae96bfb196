"""The games: pgx environments and the per-game constants the algorithm needs."""

from __future__ import annotations

import dataclasses
import functools

import jax
import pgx


@dataclasses.dataclass(frozen=True)
class GameSpec:
  name: str  # azjax's name (config.game)
  pgx_id: str
  # Root Dirichlet alpha. AlphaZero (arXiv:1712.01815, Methods "Configuration"):
  # 0.3 chess, 0.15 shogi, 0.03 Go, "scaled in inverse proportion to the
  # approximate number of legal moves in a typical position". Chess has ~35
  # legal moves, so alpha ~= 10 / typical_moves; smaller games use that rule.
  dirichlet_alpha: float
  typical_moves: int
  typical_plies: int  # a typical self-play game's length, used to size replay windows
  # The most legal moves any position has, where that is below the action count: 218 in chess and
  # 593 in shogi (both proven maxima, from constructed positions). A policy target has no more
  # entries with mass, so compact replay keeps that many (replay.Codec).
  max_legal_moves: int = 0
  # Observation channels that hold one number over the whole board rather than 0/1. pgx chess:
  # channel 113 is the move count / 512, channel 118 the no-progress count / 100 (found by
  # playouts; tests/test_replay.py checks every game's codec is exact on random games).
  scalar_planes: tuple[int, ...] = ()


SPECS = {
    s.name: s
    for s in (
        GameSpec("tictactoe", "tic_tac_toe", 10 / 5, 5, 9),
        GameSpec("connect_four", "connect_four", 10 / 7, 7, 36),
        GameSpec("othello", "othello", 10 / 10, 10, 60),
        GameSpec("go9", "go_9x9", 10 / 50, 50, 120),
        GameSpec("go", "go_19x19", 0.03, 250, 400),
        GameSpec("chess", "chess", 0.3, 35, 160, max_legal_moves=218, scalar_planes=(113, 118)),
        GameSpec("shogi", "shogi", 0.15, 80, 230, max_legal_moves=593),
    )
}


def spec(name: str) -> GameSpec:
  return SPECS[name]


@functools.cache
def make_env(name: str) -> pgx.Env:
  """The pgx environment of a game (cached: envs hold constant tables).

  Chess and shogi games over 512 plies end as draws (the AlphaZero pseudocode's
  max_moves, and pgx's), and Go is scored Tromp-Taylor ([AZ], "Domain
  Knowledge") with pgx's komi 7.5 (the papers give no komi). Chess is
  pgx's game with a cheaper legal-move generator and observation
  (`chess_moves`), shogi pgx's game with a cheaper legal-move generator
  (`shogi_moves`): the same states, step for step.
  """
  if name == "chess":  # imported here, as shogi's: pgx's chess module takes over a second to import
    from azjax import chess_moves
    return chess_moves.Chess()
  if name == "shogi":  # imported here: pgx's shogi module takes 4 s to import (its tables), and most runs never need it
    from azjax import shogi_moves
    return shogi_moves.Shogi()
  return pgx.make(SPECS[name].pgx_id)


@functools.cache
def batched_step(env: pgx.Env):
  """jit(vmap(env.step)), one per env. The programs that step the game (self-play, each search, the arena) call it
  inside their own jit: XLA inlines it, and pgx's step is traced once per process instead of once per program
  (a chess search then traces in half the time: 0.5-0.7 s against 1.3-1.5 s)."""
  return jax.jit(jax.vmap(env.step))


@functools.cache
def batched_init(env: pgx.Env):
  """jit(vmap(env.init)), one per env, for the same reason as `batched_step` (and called eagerly, pgx's init would
  compile op by op)."""
  return jax.jit(jax.vmap(env.init))
