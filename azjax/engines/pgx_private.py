"""Every use of pgx beyond its public API in azjax's engines, in this one module.

Why the engines need it: protocol notation (UCI, USI, GTP) has to decode pgx's
action encoding, which pgx defines only in private tables (`pgx._src`); what
notation reads of a position (board, colour to move, the player order, Go's
superko flag) lives in the private `state._x` and `state._player_order`; the
FEN and SFEN readers are in `pgx.experimental`; and the Go env's length cap is
an argument of `pgx.go.Go` that `pgx.make` does not expose. pgx promises none
of this, so pyproject.toml pins pgx to the versions it was tested on, and
`missing()` (run by tests/test_positions.py) names whatever a new pgx moved or
removed.
"""

from __future__ import annotations

import functools
import importlib
import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pgx
import pgx.chess

from azjax.games import make_env

# name here -> "module:attribute" in pgx, with the shape expected of a table.
SYMBOLS = {
    "chess_from_plane": ("pgx._src.games.chess:FROM_PLANE", (64, 73)),  # (from square, plane) -> to square
    "chess_to_plane": ("pgx._src.games.chess:TO_PLANE", (64, 64)),  # (from, to) -> plane, queen-like moves
    "shogi_from_idx": ("pgx._src.games.shogi:LEGAL_FROM_IDX", (10, 81, 8)),  # (direction, to) -> from squares
    "from_fen": ("pgx.experimental.chess:from_fen", None),
    "chess_game": ("pgx._src.games.chess:Game", None),  # what pgx's FEN reader builds its state with
    "chess_game_state": ("pgx._src.games.chess:GameState", None),
    "chess_legal_action_mask": ("pgx._src.games.chess:_legal_action_mask", None),
    "chess_update_history": ("pgx._src.games.chess:_update_history", None),
    "chess_flip_pos": ("pgx._src.games.chess:_flip_pos", None),
    "from_sfen": ("pgx.experimental.shogi:from_sfen", None),
    "go_env_class": ("pgx.go:Go", None),
}
# Private state fields read per game, and the Go env's keyword for its length cap.
STATE_FIELDS = {"chess": ("_x.board", "_x.color", "_player_order"),
                "shogi": ("_x.board", "_x.color", "_player_order"),
                "go9": ("_x.board", "_x.color", "_x.is_psk", "_player_order")}
GO_CAP_KEYWORD = "max_terminal_steps"
# Plies before the engines' Go game ends by pgx's cap: 8 x the points (pgx's own is 2 x, 162 on 9x9).
ENGINE_GO_CAP_PER_POINT = 8


def symbol(name: str):
  path, _ = SYMBOLS[name]
  module, attribute = path.split(":")
  return getattr(importlib.import_module(module), attribute)


@functools.cache
def table(name: str) -> np.ndarray:
  return np.asarray(symbol(name))


def from_fen(fen: str) -> pgx.State:
  """pgx's FEN reader (`pgx.experimental.chess.from_fen`) with its array work in one program compiled once: pgx's
  own jits four functions afresh at every call, 1.1-1.8 s a position on a 2-core CPU, which a UCI engine
  paid on every `position fen ...` a GUI sent. The text is read as pgx reads it; the state is the same but for
  its history: pgx's reader pushes the position onto a new game's, so the network's earlier-position planes showed
  the initial position as the move before (`network.history` > 1 reads them). A FEN says nothing of the positions
  before it: here they are empty, as before a new game's first move."""
  board, color, castling, en_passant, halfmove, fullmove = fen.split()
  if color not in ("w", "b"):
    raise ValueError(f"side to move {color!r}: w or b")
  squares = []  # rank 8 to 1, file a to h: 0 empty, 1-6 pawn to king, negative for black
  for ch in board.replace("/", ""):
    squares += [0] * int(ch) if ch.isnumeric() else [("pnbrqk".index(ch.lower()) + 1) * (-1 if ch.islower() else 1)]
  rights = [["Q" in castling, "K" in castling], ["q" in castling, "k" in castling]]
  ep = -1 if en_passant == "-" else "abcdefgh".index(en_passant[0]) * 8 + int(en_passant[1]) - 1
  return _chess_state()(np.int32(squares).reshape(8, 8), np.bool_(color == "b"), np.bool_(rights), np.int32(ep),
                        np.int32(int(halfmove)), np.int32(int(fullmove)))


@functools.cache
def _chess_state():
  """The state of a parsed FEN, built as pgx's reader builds it (the board flipped for black to move)."""
  game, game_state = symbol("chess_game")(), symbol("chess_game_state")
  legal_action_mask, update_history = symbol("chess_legal_action_mask"), symbol("chess_update_history")
  flip = symbol("chess_flip_pos")
  empty = game_state()  # for the shapes of its histories

  @jax.jit
  def build(rows, black, rights, ep, halfmove, fullmove):
    rows = jnp.where(black, -jnp.flip(rows, axis=0), rows)
    x = game_state(
        board=jnp.rot90(rows, k=3).flatten(), color=black.astype(jnp.int32),
        castling_rights=jnp.where(black, rights[::-1], rights),
        en_passant=jnp.where(black & (ep >= 0), flip(ep), ep), halfmove_count=halfmove, fullmove_count=fullmove,
        board_history=jnp.zeros_like(empty.board_history), hash_history=jnp.zeros_like(empty.hash_history))
    x = update_history(x._replace(legal_action_mask=legal_action_mask(x)))
    order = jnp.int32([0, 1])
    return pgx.chess.State(_player_order=order, _x=x, current_player=order[x.color],
                           legal_action_mask=x.legal_action_mask, terminated=game.is_terminal(x),
                           rewards=game.rewards(x)[order], observation=game.observe(x, x.color))

  return build


def from_sfen(sfen: str) -> pgx.State:
  return symbol("from_sfen")(sfen)


def go_length_cap(state: pgx.State) -> int:
  """The ply at which pgx ends a Go game of `state`'s env: it keeps one board hash a ply up to its cap."""
  return state._x.hash_history.shape[0]


def host(state: pgx.State) -> dict:
  """Numpy copies of what notation reads of a state, in one read-back."""
  x = state._x
  got = jax.device_get({"mask": state.legal_action_mask, "board": x.board, "color": x.color,
                        "over": state.terminated | state.truncated, "rewards": state.rewards, "steps": x.step_count,
                        "order": state._player_order, "psk": getattr(x, "is_psk", False)})
  got["over"], got["steps"] = bool(got["over"]), int(got["steps"])
  return got


@functools.cache
def engine_env(game: str) -> pgx.Env:
  """The env an engine plays `game` in: training's (`make_env`), but Go with a longer length cap.

  pgx ends Go after 2 x points plies (162 on 9x9), which a GTP engine must outlast. The cap sizes the
  state's hash history, so these states differ in shape from training's and have a search of their own."""
  env = make_env(game)
  if game not in ("go9", "go"):
    return env
  size = int(round((env.num_actions - 1) ** 0.5))
  return symbol("go_env_class")(size=size, komi=7.5, **{GO_CAP_KEYWORD: ENGINE_GO_CAP_PER_POINT * size * size})


def missing() -> list[str]:
  """What this module uses that the installed pgx lacks, each named; empty when all is there."""
  problems, found = [], {}
  for name, (path, shape) in SYMBOLS.items():
    try:
      found[name] = symbol(name)
    except (ImportError, AttributeError) as e:
      problems.append(f"{path} ({name}): {type(e).__name__}: {e}")
      continue
    if shape is not None and np.shape(found[name]) != shape:
      problems.append(f"{path} ({name}): shape {np.shape(found[name])}, expected {shape}")
  for game, fields in STATE_FIELDS.items():
    state = jax.jit(make_env(game).init)(jax.random.PRNGKey(0))
    for field in fields:
      value = state
      for part in field.split("."):
        value = getattr(value, part, None)
      if value is None:
        problems.append(f"{game} state.{field}: no such field")
  if "go_env_class" in found and GO_CAP_KEYWORD not in inspect.signature(found["go_env_class"]).parameters:
    problems.append(f"pgx.go:Go: no keyword {GO_CAP_KEYWORD!r} (the engines' Go length cap)")
  return problems
