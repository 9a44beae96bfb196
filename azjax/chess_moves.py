"""pgx chess with a cheaper legal-move generator: the same game, state and masks, in a third of the time.

Why: at the small sizes researchers run, chess's own game steps are most of self-play (issue 17: 60% of the
chess self-play half at 2x32, in every search simulation as well as every ply), and of pgx's step about three
quarters is its legal-action mask. pgx finds the legal moves by listing up to 200 pseudo-legal moves, playing
each one on a copy of the board and asking whether its own king is then attacked, 35 lines of up to 6 squares a
move. This module asks the position once instead, as move generators do (Stockfish's `pinned`/`checkers`, the
chess programming wiki's "Checks and Pinned Pieces"):
- a piece may move along any line it reaches with nothing in between, onto an empty square or an enemy piece
  (pawns: forward onto an empty square, two from their first rank, diagonally onto an enemy piece);
- the king is in check from the enemy sliders first seen along its eight lines and the knights and pawns that
  reach it; a piece of ours first seen along a line, with an enemy slider of that line's kind behind it, is
  pinned and may move only along that line;
- in a single check every other piece must capture the checker or stand between it and the king; in a double
  check only the king moves; the king goes only to squares no enemy attacks once it has left its own.
En passant (it can uncover a check along the rank that no pin sees) and castling are decided exactly as pgx
decides them, from the board after the move and from pgx's own attack test: two and five squares a position.

Exact: `tests/test_chess_moves.py` checks every mask against pgx's `_legal_action_mask` over random games
(checks, pins, promotions, en passant and castling included) and the standard perft positions. One case differs
by construction: pgx keeps only the first 200 pseudo-legal moves of a position (its comment: "200 is big enough
for normal play"); this generator keeps all, as the rules do. The state is pgx's own (`pgx.chess.State`), so
FEN, records and engines read it unchanged; this uses pgx's private chess module (pinned in pyproject.toml).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pgx.chess
from pgx._src.games import chess as pgx_chess

EMPTY, PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING = range(7)
SLOTS = 64  # AlphaZero's move planes after the 9 underpromotions: 56 queen moves then 8 knight moves
OFF = 64  # the square past the board: always empty, never a destination
NO_PIN = 4  # an axis index: the 4 line axes (two directions each) are 0-3


@functools.cache
def _tables() -> dict[str, np.ndarray]:
  """The constant tables, derived from pgx's own move encoding (`FROM_PLANE`: (square, plane) -> square, with
  square = file * 8 + rank in the mover's frame, so the mover's pawns go up the ranks)."""
  from_plane = np.asarray(pgx_chess.FROM_PLANE)
  to_plane = np.asarray(pgx_chess.TO_PLANE)
  delta = np.zeros((SLOTS, 2), np.int32)  # (file, rank) step of each slot
  for m in range(SLOTS):
    f = next(f for f in range(64) if from_plane[f, 9 + m] >= 0)
    t = from_plane[f, 9 + m]
    delta[m] = (t // 8 - f // 8, t % 8 - f % 8)
  directions = [tuple(np.sign(d)) for d in delta[:56]]
  lines = sorted(set(directions))  # the 8 directions
  direction = np.array([lines.index(d) for d in directions] + [-1] * 8)  # per slot, -1: knight
  distance = np.abs(delta).max(-1)
  pairs = [min(d, (-d[0], -d[1])) for d in lines]
  axis = np.array([sorted(set(pairs)).index(p) for p in pairs])  # 0-3, one per pair of opposite directions
  diagonal = np.array([abs(a) + abs(b) == 2 for a, b in lines])

  def square(f, df, dr):
    file, rank = f // 8 + df, f % 8 + dr
    return file * 8 + rank if 0 <= file < 8 and 0 <= rank < 8 else OFF

  dest = np.array([[square(f, *delta[m]) for m in range(SLOTS)] for f in range(64)], np.int32)
  ray = np.array([[[square(f, k * a, k * b) for k in range(1, 8)] for a, b in lines] for f in range(64)], np.int32)
  king_slots = [next(m for m in range(56) if direction[m] == d and distance[m] == 1) for d in range(8)]
  geometry = np.zeros((7, 64, SLOTS), bool)  # piece kind on a square may use a slot, on an empty board
  for f in range(64):
    for m in range(SLOTS):
      if dest[f, m] == OFF:
        continue
      df, dr = delta[m]
      queen_like = m < 56
      straight = queen_like and not diagonal[direction[m]]
      geometry[PAWN, f, m] = (dr == 1 and abs(df) <= 1) or (dr == 2 and df == 0 and f % 8 == 1)
      geometry[KNIGHT, f, m] = not queen_like
      geometry[BISHOP, f, m] = queen_like and not straight
      geometry[ROOK, f, m] = straight
      geometry[QUEEN, f, m] = queen_like
      geometry[KING, f, m] = queen_like and distance[m] == 1
  knight = np.array([[dest[f, m] for m in range(56, 64)] for f in range(64)], np.int32)
  pawn_checks = np.array([[square(f, df, 1) for df in (-1, 1)] for f in range(64)], np.int32)  # enemy pawns there
  under_slot = np.zeros((64, 9), np.int32)  # the queen-promotion slot of each underpromotion (same destination)
  for f in range(64):
    for p in range(9):
      t = from_plane[f, p]
      under_slot[f, p] = to_plane[f, t] - 9 if t >= 0 else 0
  return {
      "rot90": np.rot90(np.arange(64).reshape(8, 8), k=1).reshape(-1),  # pgx's observation turns each board so
      "geometry": geometry.transpose(0, 2, 1),  # [piece kind, slot, square]
      "dest": dest, "ray": ray, "delta": [tuple(int(v) for v in d) for d in delta],
      "lines": np.array([[m for k in range(1, 8) for m in range(56) if direction[m] == d and distance[m] == k]
                         for d in range(8)]),
      "direction": direction, "slot_axis": np.where(direction >= 0, axis[direction], NO_PIN + 1),
      "dir_axis": axis, "diagonal": diagonal, "knight": knight, "pawn_checks": pawn_checks,
      "king_slots": np.array(king_slots), "under_slot": under_slot, "under_ok": from_plane[:, :9] >= 0,
      "straight_slot": np.array([m < 56 and delta[m][0] == 0 for m in range(SLOTS)]),
  }


def _enemy_slider(piece: jax.Array, diagonal: jax.Array) -> jax.Array:
  """Whether `piece` is an enemy bishop, rook or queen that moves along a line of this kind."""
  return (piece == -QUEEN) | (piece == jnp.where(diagonal, -BISHOP, -ROOK))


def legal_action_mask(x: pgx_chess.GameState) -> jax.Array:
  """_unbatched_ [4672] bool: the legal moves of the side to move in pgx's game state (module docstring)."""
  tables = _tables()
  t = {k: jnp.asarray(v) for k, v in tables.items()}
  board = x.board.astype(jnp.int8)  # the mover's pieces positive; bytes, as the arrays below are 64x64 a position
  ours = jnp.maximum(board, EMPTY)
  padded = jnp.append(board, jnp.int8(EMPTY))
  # Pseudo-legal moves, [slot, from square] (slot-major: the lines below are rows; 1.5x as fast as square-major).
  dest = t["dest"].T
  target = padded[dest]
  empty = target == EMPTY
  clear = [jnp.ones(64, bool)] * SLOTS  # per slot: nothing stands between the square and the slot's destination
  for line in tables["lines"]:  # the 7 slots of one direction, nearest first
    for near, far in zip(line[:-1], line[1:]):
      clear[far] = clear[near] & empty[near]
  geometry = (ours == jnp.arange(1, 7, dtype=jnp.int8)[:, None, None]) & t["geometry"][1:]  # [kind, slot, square]
  pawn_ok = jnp.where(t["straight_slot"][:, None], empty, target < 0)
  pseudo = geometry.any(0) & jnp.stack(clear) & (target <= EMPTY) & ((ours != PAWN) | pawn_ok)

  # Checks and pins, seen from the king along its eight lines.
  king = jnp.argmax(board == KING)
  line = target[:, king][tables["lines"]]  # [8 directions, 7 distances]
  seen = line != EMPTY
  first = jnp.argmax(seen, axis=1)
  beyond = seen & (jnp.arange(7) > first[:, None])
  second = jnp.argmax(beyond, axis=1)
  first_piece, second_piece = line[jnp.arange(8), first], line[jnp.arange(8), second]
  diagonal = t["diagonal"]
  line_check = seen.any(1) & _enemy_slider(first_piece, diagonal)
  pinned = seen.any(1) & (first_piece > 0) & beyond.any(1) & _enemy_slider(second_piece, diagonal)
  knight_check = padded[t["knight"][king]] == -KNIGHT
  pawn_check = padded[t["pawn_checks"][king]] == -PAWN
  checks = line_check.sum() + knight_check.sum() + pawn_check.sum()
  # The squares that end a single check: the checker's, and between it and the king.
  on_line = line_check[:, None] & (jnp.arange(7) <= first[:, None])
  stops = jnp.concatenate([jnp.where(on_line, t["ray"][king], OFF).reshape(-1),
                           jnp.where(knight_check, t["knight"][king], OFF),
                           jnp.where(pawn_check, t["pawn_checks"][king], OFF)])
  stops = jnp.zeros(65, bool).at[stops].set(True).at[OFF].set(False)
  evades = (checks == 0) | ((checks == 1) & stops[dest])
  pinned_square = jnp.where(pinned, t["ray"][king, jnp.arange(8), first], OFF)
  pin_axis = jnp.full(65, NO_PIN).at[pinned_square].set(t["dir_axis"])[:64]
  keeps_pin = (pin_axis == NO_PIN) | (pin_axis == t["slot_axis"][:, None])
  legal = pseudo & evades & keeps_pin

  # The king: to a square no enemy attacks once the king has left its own.
  without_king = x._replace(board=x.board.at[king].set(EMPTY))
  king_dest = t["dest"][king, t["king_slots"]]
  attacked = jax.vmap(pgx_chess._is_attacked, in_axes=(None, 0))(without_king, jnp.minimum(king_dest, 63))
  king_moves = jnp.zeros(SLOTS, bool).at[t["king_slots"]].set(pseudo[t["king_slots"], king] & ~attacked)
  legal = legal.at[:, king].set(king_moves).T  # [square, slot], as pgx's actions are square * 73 + plane

  # Underpromotions: wherever the pawn's queen promotion to the same square is legal.
  under = t["under_ok"] & (ours[:, None] == PAWN) & jnp.take_along_axis(legal, t["under_slot"], axis=1)
  mask = jnp.concatenate([under, legal], axis=1).reshape(-1)
  return _castling(x, _en_passant(x, jnp.append(mask, False)))[:-1]


def _en_passant(x: pgx_chess.GameState, mask: jax.Array) -> jax.Array:
  """`mask` [4673] with the legal en passant captures: the pawn beside the target square, and the king not in
  check once both pawns have gone (pgx's test: play the move, look at the king)."""
  to = x.en_passant
  froms = jnp.int32([to - 9, to + 7])  # the squares beside the pawn that just advanced two

  def label(from_):
    ok = (from_ >= 0) & (from_ < 64) & (to >= 0) & (x.board[from_] == PAWN) & (x.board[to - 1] == -PAWN)
    move = pgx_chess.Action(from_=from_, to=to)
    ok &= ~pgx_chess._is_checked(pgx_chess._apply_move(x, move))
    return jnp.where(ok, move._to_label(), 64 * 73)

  return mask.at[jax.vmap(label)(froms)].set(True).at[-1].set(False)


def _castling(x: pgx_chess.GameState, mask: jax.Array) -> jax.Array:
  """`mask` [4673] with castling: the right kept, the rook and king at home, the squares between empty, and the
  king's square, the square it crosses and the one it lands on not attacked (pgx's squares, as pgx tests them)."""
  b = x.board
  queen_side = x.castling_rights[0, 0] & (b[0] == ROOK) & (b[8] == EMPTY) & (b[16] == EMPTY) & (b[24] == EMPTY)
  king_side = x.castling_rights[0, 1] & (b[40] == EMPTY) & (b[48] == EMPTY) & (b[56] == ROOK)
  safe = ~jax.vmap(pgx_chess._is_attacked, in_axes=(None, 0))(x, jnp.int32([16, 24, 32, 40, 48]))
  at_home = b[32] == KING
  mask = mask.at[2364].set(mask[2364] | (queen_side & at_home & safe[:3].all()))
  return mask.at[2367].set(mask[2367] | (king_side & at_home & safe[2:].all()))


def observe(x: pgx_chess.GameState, color: jax.Array) -> jax.Array:
  """_unbatched_ [8, 8, 119] pgx's chess observation (`pgx_chess.Game.observe`, AlphaZero's input planes), the
  same numbers computed as one comparison of the eight boards of the history against the twelve pieces instead
  of 8 x 14 separate planes, rotated and stacked: about a quarter of pgx's step went there."""
  rotated = x.board_history[:, jnp.asarray(_tables()["rot90"])]  # [8, 64], each board as pgx's rot90 lays it
  pieces = jnp.asarray(np.r_[1:7, -6:0][np.r_[0:6, 11:5:-1]], jnp.int32)  # the mover's P..K, then the other's P..K
  planes = rotated[..., None] == pieces  # [8, 64, 12]
  # How often each of the eight positions occurred before (pgx: a hash of zeros is no position).
  same = (x.hash_history[None, :, :] == x.hash_history[:8, None, :]).all(-1).sum(-1) - 1  # [8]
  rep = jnp.where((x.hash_history[:8] == 0).all(-1), 0, same)
  rep_planes = jnp.broadcast_to(jnp.stack([rep == 0, rep >= 1], -1)[:, None, :], (8, 64, 2))
  history = jnp.concatenate([planes, rep_planes], -1).astype(jnp.float32)  # [8, 64, 14]
  scalars = jnp.concatenate([color[None], (x.step_count / pgx_chess.MAX_TERMINATION_STEPS)[None],
                             x.castling_rights.reshape(-1), (x.halfmove_count / 100.0)[None]]).astype(jnp.float32)
  return jnp.concatenate([history.transpose(1, 0, 2).reshape(64, 112), jnp.broadcast_to(scalars, (64, 7))],
                         -1).reshape(8, 8, 119)


class _Game(pgx_chess.Game):
  """pgx's chess game with `legal_action_mask` as its step's mask and `observe` as its observation; every
  other rule is pgx's."""

  def observe(self, state: pgx_chess.GameState, color=None) -> jax.Array:
    return observe(state, state.color if color is None else color)

  def step(self, state: pgx_chess.GameState, action: jax.Array) -> pgx_chess.GameState:
    state = pgx_chess._apply_move(state, pgx_chess.Action._from_label(action))
    state = pgx_chess._update_history(pgx_chess._flip(state))
    return state._replace(legal_action_mask=legal_action_mask(state), step_count=state.step_count + 1)


class Chess(pgx.chess.Chess):
  """pgx's chess environment (`pgx.make("chess")`) stepped by `_Game`: the same states, rewards and observations,
  but for the initial position's hash (`_init`)."""

  def __init__(self):
    super().__init__()
    self.game = _Game()

  def _init(self, key: jax.Array) -> pgx.chess.State:
    """pgx's initial state with its position hashed as every later position is. pgx writes a fixed
    `INIT_ZOBRIST_HASH` there, which its own hash of that position (tables drawn with jax.random at import) no
    longer equals under this jax: a return to the initial position then went uncounted, and Nf3 Nf6 Ng1 Ng8
    twice over was no threefold repetition."""
    state = super()._init(key)
    x = state._x  # noqa: SLF001
    return state.replace(_x=x._replace(hash_history=x.hash_history.at[0].set(pgx_chess._zobrist_hash(x))))
