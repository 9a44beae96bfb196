"""One game on the host, as a stack of pgx states, spoken in a protocol's move notation.

A `Position` is what an engine or a match referee holds: the pgx state after
every move (so `undo` is a pop), legality from pgx's own legal-action mask, and
the conversion between pgx actions and the notation of UCI (chess), USI
(shogi) or GTP (Go). A move that is malformed or illegal raises `IllegalMove`
and leaves the position untouched.

pgx encodes moves from the mover's side of the board. Chess squares are
file * 8 + rank (a1 = 0, a2 = 1) with ranks mirrored when black moves; the
action is from * 73 + plane. Shogi squares are (file - 1) * 9 + rank
(1a = 0) rotated by 180 degrees when white (gote) moves; the action is
direction * 81 + to. Go points are row * size + column, row 0 at the top, and
size * size is a pass.
"""

from __future__ import annotations

import functools
import re
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
import pgx

from azjax.engines import pgx_private
from azjax.games import make_env


class IllegalMove(ValueError):
  """A move that does not parse or is not legal in the position."""


@functools.cache
def _step(env: pgx.Env):
  return jax.jit(env.step)


@functools.cache
def _init(env: pgx.Env):
  return jax.jit(env.init)


@functools.cache
def _normalise(env: pgx.Env):
  """A state from pgx's FEN/SFEN readers, made exactly like the env's own (else search would recompile).

  pgx 2.6's from_sfen also lays its observation out as [119, 9, 9]; it is recomputed here.
  """
  reference = jax.eval_shape(env.init, jax.random.PRNGKey(0))

  @jax.jit
  def normalise(state):
    state = state.replace(observation=env.observe(state))
    return jax.tree.map(lambda r, x: jnp.asarray(x, r.dtype), reference, state)

  return normalise


class Position:
  game: str

  def __init__(self, initial: pgx.State | None = None, env: pgx.Env | None = None):
    self.env = env or make_env(self.game)
    initial = _normalise(self.env)(initial) if initial is not None else None
    self.states = [initial if initial is not None else _init(self.env)(jax.random.PRNGKey(0))]
    self.hosts = [pgx_private.host(self.states[0])]  # numpy copies of what notation reads: one read-back a move
    self.num_actions = len(self.hosts[0]["mask"])  # (pgx's env.num_actions builds a whole state each call)
    self.moves: list[str] = []

  @property
  def state(self) -> pgx.State:
    return self.states[-1]

  @property
  def host(self) -> dict:
    return self.hosts[-1]

  @property
  def over(self) -> bool:
    return self.host["over"]

  @property
  def at_cap(self) -> bool:
    """The game ended at pgx's length cap (2 x points plies in Go, 162 on 9x9; 512 in chess and shogi), which pgx
    flags as an ordinary end: Go's board is then scored unfinished, chess and shogi are drawn."""
    return self.over and self.host["steps"] >= self.pgx_cap

  pgx_cap: int = 512  # chess and shogi: pgx's MAX_TERMINATION_STEPS; Go's is its env's (GoPosition)

  @property
  def color(self) -> int:
    """The colour to move: 0 for the first mover (white, sente, black in Go), 1 for the other."""
    return int(self.host["color"])

  def legal(self, action: int) -> bool:
    return 0 <= action < self.num_actions and bool(self.host["mask"][action])

  def legal_actions(self) -> np.ndarray:
    return np.flatnonzero(self.host["mask"])

  def legal_moves(self) -> list[str]:
    return [self.move_of(int(a)) for a in self.legal_actions()]

  def play(self, move: str) -> int:
    """Plays a move given in notation; returns its action."""
    if self.over:
      raise IllegalMove(f"{move}: the game is over")
    action = self.action_of(move.strip())
    if self.move_of(action).lower() != move.strip().lower():  # e.g. a slide through a piece in shogi
      raise IllegalMove(f"{move} is not legal here")
    self.push(action)
    return action

  def push(self, action: int) -> None:
    if not self.legal(action):
      raise IllegalMove(f"action {action} is not legal here")
    move = self.move_of(action)
    self.states.append(_step(self.env)(self.state, np.int32(action)))
    self.hosts.append(pgx_private.host(self.states[-1]))
    self.moves.append(move)

  always_legal: int | None = None  # a move no referee refuses where pgx calls it legal (Go's pass), or None

  def push_best(self, weights: np.ndarray) -> int:
    """Plays the legal move of highest `weights` (a search's move ranks [A], SearchOutput.move_rank) that the
    referee accepts; returns it.
    The search sees pgx's legal moves, where a Go move that repeats an earlier board (superko) is legal and
    loses; a referee refuses it, and the next best move plays instead (pass, in Go, always can)."""
    legal = self.legal_actions()
    ranked = legal[np.argsort(-weights[legal], kind="stable")]
    if self.always_legal is not None:  # Go's pass before any other move the search gave no weight
      later = (weights[ranked] <= 0) & (ranked != self.always_legal)
      ranked = np.concatenate([ranked[~later], ranked[later]])
    for action in ranked:
      try:
        self.push(int(action))
        return int(action)
      except IllegalMove:
        continue
    raise IllegalMove("no legal move is left")

  def undo(self) -> None:
    if len(self.states) == 1:
      raise IllegalMove("no move to undo")
    self.states.pop()
    self.hosts.pop()
    self.moves.pop()

  def returns(self) -> np.ndarray:
    """The final rewards by colour (first mover, second mover); zeros while the game goes on."""
    total = sum(h["rewards"] for h in self.hosts)
    order = self.host["order"]
    return total[order]  # pgx indexes rewards by player id; `order` maps colour -> player id

  def action_of(self, move: str) -> int:
    raise NotImplementedError

  def move_of(self, action: int) -> str:
    raise NotImplementedError


class SetupPosition(Position):
  """A game that may start from a setup string (FEN, SFEN) read by pgx; a bad one is an IllegalMove."""
  notation: str
  reader: Callable[[str], pgx.State]

  def __init__(self, setup: str | None = None):
    self.setup = setup
    initial = None
    if setup is not None:
      try:
        initial = self.reader(setup)
      except Exception as e:  # noqa: BLE001  (pgx's readers fail on bad text in many ways)
        raise IllegalMove(f"bad {self.notation} {setup!r}: {type(e).__name__}: {e}") from None
    super().__init__(initial)


# ---------------------------------------------------------------------------------------------- chess

_FILES = "abcdefgh"
_UCI = re.compile(r"^([a-h])([1-8])([a-h])([1-8])([qrbn]?)$")


def _chess_tables():
  """pgx's own encoding tables: the definition of its actions."""
  return pgx_private.table("chess_from_plane"), pgx_private.table("chess_to_plane")


class ChessPosition(SetupPosition):
  """The initial position, or one given in FEN."""
  game = "chess"
  notation = "FEN"
  reader = staticmethod(pgx_private.from_fen)

  def _square(self, file: int, rank: int) -> int:
    return file * 8 + (rank if self.color == 0 else 7 - rank)

  def action_of(self, move: str) -> int:
    m = _UCI.match(move)
    if not m:
      raise IllegalMove(f"{move!r} is not a UCI move (like e2e4 or e7e8q)")
    from_plane, to_plane = _chess_tables()
    f0, r0, f1, r1, promo = _FILES.index(m[1]), int(m[2]) - 1, _FILES.index(m[3]), int(m[4]) - 1, m[5]
    src, dst = self._square(f0, r0), self._square(f1, r1)
    if promo in ("r", "b", "n"):  # underpromotions have planes of their own; a queen's is the plain move
      if f1 - f0 not in (0, 1, -1):
        raise IllegalMove(f"{move} is not legal here")
      plane = "rbn".index(promo) * 3 + {0: 0, 1: 1, -1: 2}[f1 - f0]
    else:
      plane = int(to_plane[src, dst])
    action = src * 73 + plane
    if plane < 0 or not self.legal(action) or (promo == "q") != self._promotes(action):
      raise IllegalMove(f"{move} is not legal here")
    return action

  def _promotes(self, action: int) -> bool:
    """A pawn reaching the last rank with a plain (queen-line) move promotes to a queen."""
    from_plane, _ = _chess_tables()
    src, plane = divmod(action, 73)
    return plane >= 9 and int(self.host['board'][src]) == 1 and int(from_plane[src, plane]) % 8 == 7

  def move_of(self, action: int) -> str:
    from_plane, _ = _chess_tables()
    src, plane = divmod(int(action), 73)
    dst = int(from_plane[src, plane])
    flip = (lambda sq: sq) if self.color == 0 else (lambda sq: sq // 8 * 8 + 7 - sq % 8)
    src, dst = flip(src), flip(dst)
    promo = "rbn"[plane // 3] if plane < 9 else ("q" if self._promotes(int(action)) else "")
    return f"{_FILES[src // 8]}{src % 8 + 1}{_FILES[dst // 8]}{dst % 8 + 1}{promo}"


class PlayOnChessPosition(ChessPosition):
  """A UCI engine's game, which goes on wherever pgx ends one that the rules of chess have not.

  pgx ends chess at a threefold repetition, at the fifty-move count and at its 512-ply cap. FIDE's Laws end a game
  at the first two only when a player claims the draw (9.2, 9.3), and a GUI may play on. The rules' own ends are
  python-chess's `is_game_over()` without claims: mate, stalemate, a dead position, fivefold repetition and
  seventy-five moves (9.6). Where pgx has ended a game they have not, its state is read again from the position's
  FEN. That forgets the earlier positions (the network's history planes and pgx's repetition count start afresh),
  and a fifty-move count past 99 is read as 99, so that the search still scores every quiet move as a draw (either
  player may claim it then). The match referee keeps `ChessPosition`, whose games end where pgx's do."""

  def __init__(self, setup: str | None = None):
    import chess  # noqa: PLC0415  (python-chess: only engines need the rules' ends)
    super().__init__(setup)
    try:
      self.board = chess.Board(setup) if setup is not None else chess.Board()
    except ValueError as e:
      raise IllegalMove(f"bad FEN {setup!r}: {e}") from None
    self._play_on()

  def push(self, action: int) -> None:
    super().push(action)
    self.board.push_uci(self.moves[-1])
    self._play_on()

  def undo(self) -> None:
    super().undo()
    self.board.pop()

  def _play_on(self) -> None:
    over = self.board.is_game_over()
    if self.host["over"] and not over:
      fields = self.board.fen().split()
      fields[4] = str(min(int(fields[4]), 99))
      state = _normalise(self.env)(self.reader(" ".join(fields)))
      self.states[-1], self.hosts[-1] = state, pgx_private.host(state)
    self.hosts[-1]["over"] = over


# ---------------------------------------------------------------------------------------------- shogi

_USI_MOVE = re.compile(r"^([1-9])([a-i])([1-9])([a-i])(\+?)$")
_USI_DROP = re.compile(r"^([PLNSBRG])\*([1-9])([a-i])$")
_DROPS = "PLNSBRG"  # pgx's drop directions 20..26


def _shogi_from_idx():
  """pgx's table of where a move in each direction comes from."""
  return pgx_private.table("shogi_from_idx")


class ShogiPosition(SetupPosition):
  """The initial position, or one given in SFEN."""
  game = "shogi"
  notation = "SFEN"
  reader = staticmethod(pgx_private.from_sfen)

  def _square(self, file: str, rank: str) -> int:
    sq = (int(file) - 1) * 9 + "abcdefghi".index(rank)
    return sq if self.color == 0 else 80 - sq

  def _name(self, sq: int) -> str:
    sq = sq if self.color == 0 else 80 - sq
    return f"{sq // 9 + 1}{'abcdefghi'[sq % 9]}"

  def action_of(self, move: str) -> int:
    if m := _USI_DROP.match(move):
      action = (20 + _DROPS.index(m[1])) * 81 + self._square(m[2], m[3])
    elif m := _USI_MOVE.match(move):
      src, dst = self._square(m[1], m[2]), self._square(m[3], m[4])
      directions = [d for d in range(10) if src in _shogi_from_idx()[d, dst]]
      if not directions:
        raise IllegalMove(f"{move} is not legal here")
      action = (directions[0] + (10 if m[5] else 0)) * 81 + dst
    else:
      raise IllegalMove(f"{move!r} is not a USI move (like 7g7f, 8h2b+ or P*5e)")
    if not self.legal(action):
      raise IllegalMove(f"{move} is not legal here")
    return action

  def move_of(self, action: int) -> str:
    direction, dst = divmod(int(action), 81)
    if direction >= 20:
      return f"{_DROPS[direction - 20]}*{self._name(dst)}"
    board = self.host["board"]
    # The mover's nearest piece in that direction makes the move (pgx's own decoding rule).
    src = next(int(s) for s in _shogi_from_idx()[direction % 10, dst] if s >= 0 and board[s] != -1)
    return f"{self._name(src)}{self._name(dst)}{'+' if direction >= 10 else ''}"


# ---------------------------------------------------------------------------------------------- go

GTP_COLUMNS = "ABCDEFGHJKLMNOPQRST"  # GTP skips I


class GoPosition(Position):

  def __init__(self, game: str = "go9", env: pgx.Env | None = None):
    """`env`: pgx's own by default; engines pass `pgx_private.engine_env(game)`, whose games run longer."""
    self.game = game
    super().__init__(env=env)
    self.size = int(round((self.num_actions - 1) ** 0.5))
    self.always_legal = self.size * self.size  # pass
    self.pgx_cap = pgx_private.go_length_cap(self.state)

  def action_of(self, move: str) -> int:
    move = move.upper()
    if move == "PASS":
      action = self.size * self.size
    else:
      m = re.match(r"^([A-HJ-T])(\d{1,2})$", move)
      col = GTP_COLUMNS.index(m[1]) if m else -1
      row = int(m[2]) if m else -1
      if not (0 <= col < self.size and 1 <= row <= self.size):
        raise IllegalMove(f"{move!r} is not a vertex of a {self.size}x{self.size} board")
      action = (self.size - row) * self.size + col
    if not self.legal(action):
      raise IllegalMove(f"{move} is not legal here")
    return action

  def move_of(self, action: int) -> str:
    if action == self.size * self.size:
      return "pass"
    row, col = divmod(int(action), self.size)
    return f"{GTP_COLUMNS[col]}{self.size - row}"

  def push(self, action: int) -> None:
    super().push(action)
    if bool(self.host["psk"]):  # pgx scores a repetition as a loss; a referee calls it illegal
      self.undo()
      raise IllegalMove(f"{self.move_of(action)} repeats an earlier position (superko)")

  def board(self) -> np.ndarray:
    """[size, size] with +1 black, -1 white, 0 empty; row 0 is the top (GTP row `size`)."""
    return np.sign(self.host["board"]).reshape(self.size, self.size)

  def area_score(self, komi: float) -> float:
    """Black's area (stones + empty regions that reach only black) minus white's, minus komi."""
    board, seen, score = self.board(), np.zeros((self.size, self.size), bool), 0.0
    score += (board == 1).sum() - (board == -1).sum()
    for r0 in range(self.size):
      for c0 in range(self.size):
        if board[r0, c0] != 0 or seen[r0, c0]:
          continue
        region, borders, stack = 0, set(), [(r0, c0)]
        seen[r0, c0] = True
        while stack:
          r, c = stack.pop()
          region += 1
          for rr, cc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if 0 <= rr < self.size and 0 <= cc < self.size:
              if board[rr, cc] == 0 and not seen[rr, cc]:
                seen[rr, cc] = True
                stack.append((rr, cc))
              elif board[rr, cc] != 0:
                borders.add(int(board[rr, cc]))
        if len(borders) == 1:
          score += region * borders.pop()
    return float(score - komi)

  def showboard(self) -> str:
    board = self.board()
    cols = "   " + " ".join(GTP_COLUMNS[:self.size])
    rows = [f"{self.size - r:2d} " + " ".join(".XO"[int(v)] for v in board[r]) + f" {self.size - r}"
            for r in range(self.size)]
    return "\n".join([cols, *rows, cols])


def position_for(game: str) -> Position:
  if game == "chess":
    return ChessPosition()
  if game == "shogi":
    return ShogiPosition()
  if game in ("go9", "go"):
    return GoPosition(game)
  raise ValueError(f"no protocol notation for {game}; engines play chess, shogi, go9 and go")
