"""pgx shogi with a cheaper legal-move generator and observation: the same game, states and masks, in a fifth of the
time a step.

Why: at the small sizes researchers run, shogi's own game steps are two thirds of shogi self-play (issue 17: 4.35
of 6.67 s at 2x32), and four fifths of pgx's step is its legal-action mask (34 of 43 ms for 64 games on this
project's CPU). pgx decides each of its 2,187 actions on its own: it finds the moving piece, plays the move on a
copy of the board and asks whether its king is then attacked. This module asks the position once instead, as
move generators do (the chess programming wiki's "Checks and Pinned Pieces"; `chess_moves` does the same for
chess), with every square pair of the board at once:
- a piece reaches a square its kind moves to (pgx's own `CAN_MOVE` table) with nothing in between, and not one
  of its own side's; the squares between two squares are one [81 x 81, 81] table, so what blocks each pair is
  one matrix product with the occupied squares;
- the king is in check from the enemy pieces that reach it; an enemy lance, bishop, rook, horse or dragon with
  exactly one piece between it and the king, ours, pins that piece to their line;
- in a single check every other piece must capture the checker or stand between it and the king, and a drop
  must stand between; in a double check only the king moves; the king goes only to squares no enemy piece
  reaches once it has left its own.
An action (direction, square) moves the nearest piece of ours along the direction's ray, as pgx reads it
(`Action._from_dlshogi_action`); no farther piece can reach past it. Promotion, the squares a piece may not stay
on, the second pawn on a file and the pawn drop that mates are pgx's rules, decided by pgx's own functions.

Exact: `tests/test_shogi_moves.py` steps whole states (masks and observations included) beside `pgx.make("shogi")`
along random games that hold checks, checkmates and pawn-drop-mate squares. The state is pgx's own
(`pgx.shogi.State`), so records and engines read it unchanged; this uses pgx's private shogi module (pinned in
pyproject.toml).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pgx.shogi
from pgx._src.games import shogi as pgx_shogi

PAWN, LANCE, KNIGHT, SILVER, BISHOP, ROOK, GOLD, KING = range(8)  # pgx's piece kinds; promotable below GOLD
KINDS = 14  # a side's piece kinds; the opponent's are these plus 14
MOVE_DIRECTIONS = 10  # pgx's (dlshogi's) 8 directions and 2 knight jumps; then 10 promoting, then 7 drops


@functools.cache
def _tables() -> dict[str, np.ndarray]:
  """The constant tables of pgx's. Square s is file s // 9 and rank s % 9 in the mover's frame (the mover advances
  to rank 0); pgx turns the board (s -> 80 - s) and swaps the colours after every move."""
  can_move = np.asarray(pgx_shogi.CAN_MOVE)  # [kind, from, to]: the mover's piece, ignoring other pieces
  return {
      "can_move": can_move,
      "enemy_move": can_move[:, ::-1, ::-1],  # the opponent's pieces move as the mover's would on the turned board
      "legal_from": np.asarray(pgx_shogi.LEGAL_FROM_IDX),  # [direction, to, k]: the k-th square back along the ray
  }


def _between() -> jax.Array:
  """[a, b, s] bool: s strictly between squares a and b on one file, rank or diagonal. Computed, not a constant:
  under vmap a `lax.cond` (pgx's step wraps ours in one) batches its constants, and this 531,441-entry table
  batched made the step 15 times slower (a matrix product with 64 copies of it)."""
  s = jnp.arange(81)
  file, rank = s // 9, s % 9
  fa, ra, fb, rb, fs, rs = file[:, None, None], rank[:, None, None], file[None, :, None], rank[None, :, None], \
      file[None, None, :], rank[None, None, :]
  df, dr = fb - fa, rb - ra
  aligned = (df == 0) | (dr == 0) | (jnp.abs(df) == jnp.abs(dr))
  collinear = (fs - fa) * dr == (rs - ra) * df
  inside = ((jnp.minimum(fa, fb) <= fs) & (fs <= jnp.maximum(fa, fb)) & (jnp.minimum(ra, rb) <= rs)
            & (rs <= jnp.maximum(ra, rb)))
  ends = ((fs == fa) & (rs == ra)) | ((fs == fb) & (rs == rb))
  return aligned & collinear & inside & ~ends


def _blocked(between: jax.Array, occupied: jax.Array) -> jax.Array:
  """[from, to, n] bool: whether a piece stands between each pair of squares, for each of the n occupancies
  `occupied` [81, n]: one matrix product, where pgx looks along each pair's squares on its own."""
  return (between.reshape(81 * 81, 81).astype(jnp.float32) @ occupied.astype(jnp.float32)).reshape(81, 81, -1) > 0


def legal_action_mask(x: pgx_shogi.GameState) -> jax.Array:
  """_unbatched_ [2187] bool: the legal actions of the side to move in pgx's game state (module docstring)."""
  t = {k: jnp.asarray(v) for k, v in _tables().items()}
  board = x.board
  occupied = board >= 0
  ours = occupied & (board < KINDS)
  theirs = board >= KINDS
  kind = jnp.where(occupied, board % KINDS, 0)
  king = jnp.argmax(board == KING)
  square = jnp.arange(81)

  # What stands between each pair of squares: with the king on the board, and without it (its escapes).
  between = _between()
  blocked = _blocked(between, jnp.stack([occupied, occupied & (square != king)], -1))
  reach = t["can_move"][kind, square] & ~blocked[..., 0] & ours[:, None] & ~ours[None, :]  # [from, to]
  enemy = t["enemy_move"][kind, square] & theirs[:, None]  # [from, to], ignoring other pieces

  # Checks and pins.
  checkers = enemy[:, king] & ~blocked[:, king, 0]
  checks = checkers.sum()
  line = between[:, king, :]  # [enemy square, s]: the squares between it and the king
  stops = checkers | (checkers[:, None] & line).any(0)  # where a single check ends: the checker, or in between
  pinner = enemy[:, king] & ((line & occupied).sum(1) == 1) & (line & ours).any(1)
  pinned_by = jnp.argmax(pinner[:, None] & line, axis=0)  # [s]: the pinner of the piece on s, where pinned
  pinned = (pinner[:, None] & line).any(0)
  keeps_pin = ~pinned[:, None] | line[pinned_by] | (square[None, :] == pinned_by[:, None])  # [from, to]
  evades = (checks == 0) | ((checks == 1) & stops)
  legal = reach & keeps_pin & evades[None, :]
  attacked = (enemy & ~blocked[..., 1]).any(0)  # the squares an enemy piece reaches once our king has left
  legal = legal.at[king].set(reach[king] & ~attacked)

  # Moves: the nearest of our pieces back along each action's ray, with pgx's promotion rules.
  rank = square % 9
  must_promote = (((kind == PAWN) | (kind == LANCE))[:, None] & (rank == 0)[None, :]) | (
      (kind == KNIGHT)[:, None] & (rank < 2)[None, :])
  may_promote = (kind < GOLD)[:, None] & ((rank < 3)[:, None] | (rank < 3)[None, :])
  source = t["legal_from"]  # [10, 81, 8]
  ray = jnp.where(source >= 0, source, 0)
  along = (source >= 0) & ours[ray]
  nearest = jnp.take_along_axis(ray, jnp.argmax(along, axis=-1)[..., None], axis=-1)[..., 0]  # [10, 81]
  found = along.any(-1)
  to = jnp.broadcast_to(square, (MOVE_DIRECTIONS, 81))
  moves = found & legal[nearest, to]
  plain = moves & ~must_promote[nearest, to]
  promoting = moves & may_promote[nearest, to]

  # Drops: pgx's rules for the piece and the square, and no check left (a drop can only stand between).
  drop_ok = jax.vmap(jax.vmap(pgx_shogi._is_legal_drop_wo_ignoring_check, (None, 0, None)), (0, None, None))(
      jnp.arange(7), square, x)
  drops = drop_ok & evades[None, :]
  mask = jnp.concatenate([plain.reshape(-1), promoting.reshape(-1), drops.reshape(-1)])

  # The pawn drop that mates is illegal (pgx's test, as pgx applies it).
  mate, target = pgx_shogi._is_drop_pawn_mate(x)
  at = 2 * MOVE_DIRECTIONS * 81 + target
  return mask.at[at].set(mask[at] & ~mate)


def _effects(x: pgx_shogi.GameState, blocked: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
  """pgx's observation planes of the mover's pieces in `x`, given what blocks each square pair there ([81, 81]):
  where each kind stands [14, 81], where each kind reaches [14, 81] (its moves with nothing in between, onto any
  square) and how many pieces reach each square (1, 2, 3 or more) [3, 81]; pgx's `effect_all` asks each of the
  6,561 square pairs on its own."""
  board = x.board
  ours = (board >= 0) & (board < KINDS)
  kind = jnp.where(ours, board, 0)
  reach = jnp.asarray(_tables()["can_move"])[kind, jnp.arange(81)] & ~blocked & ours[:, None]
  where = board[None, :] == jnp.arange(KINDS)[:, None]  # [kind, square]
  by_kind = (where.astype(jnp.float32) @ reach.astype(jnp.float32)) > 0
  count = reach.sum(0)
  return where, by_kind, count[None, :] >= jnp.arange(1, 4)[:, None]


def observe(x: pgx_shogi.GameState, flip: jax.Array) -> jax.Array:
  """_unbatched_ [9, 9, 119] pgx's shogi observation (`pgx_shogi._observe`): the same planes, the pieces' reach
  from `_effects` (the planes were two thirds of the step once the mask was cheap)."""
  # One board's blockers serve both sides: the turned board (s -> 80 - s) holds the same squares, and the squares
  # between two squares are the turned squares between the turned pair.
  blocked = _blocked(_between(), (x.board >= 0)[:, None])[..., 0]
  unturned, turned = (x, blocked), (pgx_shogi._flip(x), blocked[::-1, ::-1])
  (state, state_blocked), (other, other_blocked) = jax.lax.cond(
      flip, lambda: (unturned, turned), lambda: (turned, unturned))
  mine, theirs = _effects(state, state_blocked), _effects(other, other_blocked)
  theirs = [plane[:, ::-1] for plane in theirs]  # the other side's, turned back to this side's frame
  counts = [8, 4, 4, 4, 4, 2, 2]  # hand planes: pawns, lances, knights, silvers, golds, bishops, rooks
  piece = np.repeat([PAWN, LANCE, KNIGHT, SILVER, GOLD, BISHOP, ROOK], counts)
  at_least = np.concatenate([np.arange(1, c + 1) for c in counts])

  def hand(h):
    return jnp.broadcast_to((h[piece] >= at_least)[:, None], (len(piece), 81))

  checked = jnp.broadcast_to(pgx_shogi._is_checked(pgx_shogi._set_cache(state)), (1, 81))
  planes = jnp.concatenate([*mine, *theirs, hand(state.hand[0]), hand(state.hand[1]), checked])  # [119, 81]
  return jnp.rot90(planes.reshape(-1, 9, 9).transpose(1, 2, 0), k=3)


def _step(state: pgx_shogi.GameState, action: jax.Array) -> pgx_shogi.GameState:
  """pgx's `_step` with `legal_action_mask` as its mask."""
  a = pgx_shogi.Action._from_dlshogi_action(state, action)
  state = jax.lax.cond(a.is_drop, pgx_shogi._step_drop, pgx_shogi._step_move, *(state, a))
  state = pgx_shogi._flip(state)
  state = state._replace(color=(state.color + 1) % 2, step_count=state.step_count + 1)
  return state._replace(legal_action_mask=legal_action_mask(state))


class _Game(pgx_shogi.Game):
  """pgx's shogi game stepped with `legal_action_mask`; every other rule is pgx's."""

  def step(self, state: pgx_shogi.GameState, action: jax.Array) -> pgx_shogi.GameState:
    return _step(state, action)

  def legal_action_mask(self, state: pgx_shogi.GameState) -> jax.Array:
    return legal_action_mask(state)


class Shogi(pgx.shogi.Shogi):
  """pgx's shogi environment (`pgx.make("shogi")`) stepped by `_Game` and observed by `observe`: the same states,
  rewards and observations."""

  def __init__(self):
    super().__init__()
    self._game = _Game()

  def _observe(self, state: pgx.shogi.State, player_id: jax.Array) -> jax.Array:
    return observe(state._x, state.current_player == player_id)
