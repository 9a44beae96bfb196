"""Chess attack planes (`network.attacks`, chess_features.py) against python-chess's attack maps."""

import random

import chess
import jax
import jax.numpy as jnp
import numpy as np

from azjax import chess_features
from azjax.config import NetworkConfig
from azjax.engines import pgx_private
from azjax.games import make_env
from azjax.network import make_network

_VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 1000}


def _planes_by_python_chess(board: chess.Board) -> np.ndarray:
  """The four planes from python-chess's `attackers`, in pgx's observation frame (row 0 the mover's far rank)."""
  out = np.zeros((8, 8, 4), np.float32)
  me = board.turn
  for row in range(8):
    for file in range(8):
      square = chess.square(file, 7 - row if me == chess.WHITE else row)
      out[row, file, 0] = bool(board.attackers(me, square))
      out[row, file, 1] = bool(board.attackers(not me, square))
      piece = board.piece_at(square)
      if piece:
        other, own = board.attackers(not piece.color, square), board.attackers(piece.color, square)
        cheapest = min((_VALUES[board.piece_at(s).piece_type] for s in other), default=np.inf)
        out[row, file, 2 if piece.color == me else 3] = bool(other) and (not own or cheapest < _VALUES[piece.piece_type])
  return out


def test_attack_planes_match_python_chess_on_random_games():
  """Every plane at every square of 40 positions from random games, both colours to move, equals python-chess's
  pseudo-legal attack maps (pins ignored, sliders stopped by the first piece, kings in check en prise)."""
  env, rng = make_env("chess"), random.Random(0)
  observations, expected = [], []
  for _ in range(40):
    board = chess.Board()
    for _ in range(rng.randrange(0, 120)):
      if board.is_game_over():
        break
      board.push(rng.choice(list(board.legal_moves)))
    state = pgx_private.from_fen(board.fen())
    observations.append(env.observe(state))
    expected.append(_planes_by_python_chess(board))
  got = np.asarray(jax.jit(chess_features.attack_planes)(jnp.stack(observations)))
  expected = np.stack(expected)
  assert expected[..., 2].sum() > 10 and expected[..., 3].sum() > 10  # the positions do hang pieces
  np.testing.assert_array_equal(got, expected)


def test_attack_planes_join_the_input_and_see_a_slider_across_the_board():
  """With `network.attacks` the stem reads 4 more planes, and a rook on a1 that a knight stops blocking attacks
  a8 at once, 7 squares away."""
  board = chess.Board("4k3/8/8/8/8/8/N7/R3K3 w - - 0 1")
  blocked = pgx_private.from_fen(board.fen())
  board.set_fen("4k3/8/8/8/8/8/8/R1N1K3 w - - 0 1")  # the knight off the a-file
  opened = pgx_private.from_fen(board.fen())
  env = make_env("chess")
  obs = jnp.stack([env.observe(s) for s in (blocked, opened)])
  planes = chess_features.attack_planes(obs)
  assert planes[0, 0, 0, 0] == 0 and planes[1, 0, 0, 0] == 1  # a8: row 0, file a
  net = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=8, attacks=True), env.num_actions)
  params, _ = net.init(jax.random.PRNGKey(0), obs)
  stem = [v["w"] for k, v in params.items() if k.endswith("conv2_d")][0]
  assert stem.shape[2] == obs.shape[-1] + chess_features.NUM_PLANES
