"""Chess in the observation's frame (chess_features.py): the attack planes (`network.attacks`) against
python-chess's attack maps, and AlphaZero's policy planes (`network.policy_head="planes"`) against python-chess's
moves."""

import random

import chess
import jax
import jax.numpy as jnp
import numpy as np

from azjax import chess_features
from azjax.config import NetworkConfig
from azjax.engines import pgx_private
from azjax.engines.positions import ChessPosition
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


def _random_boards(count: int, seed: int = 0) -> list[chess.Board]:
  """Positions from random games of 0-120 plies, either colour to move."""
  rng, boards = random.Random(seed), []
  for _ in range(count):
    board = chess.Board()
    for _ in range(rng.randrange(0, 120)):
      if board.is_game_over():
        break
      board.push(rng.choice(list(board.legal_moves)))
    boards.append(board)
  return boards


def test_attack_planes_match_python_chess_on_random_games():
  """Every plane at every square of 40 positions from random games, both colours to move, equals python-chess's
  pseudo-legal attack maps (pins ignored, sliders stopped by the first piece, kings in check en prise)."""
  env = make_env("chess")
  observations, expected = [], []
  for board in _random_boards(40):
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


def test_policy_planes_read_every_legal_move_at_the_square_its_piece_leaves():
  """In 30 positions from random games, either colour to move, each legal move's logit comes from the planes at
  the observation's square of python-chess's from-square (a mover's piece stands there), in the move's own plane;
  and no two actions share an output."""
  index, env = chess_features.policy_index(), make_env("chess")
  assert sorted(index.tolist()) == list(range(64 * chess_features.POLICY_PLANES))
  moves = 0
  for board in _random_boards(30, seed=1):
    position = ChessPosition(board.fen())
    obs = np.asarray(env.observe(pgx_private.from_fen(board.fen())))
    for move in board.legal_moves:
      action = position.action_of(move.uci())
      row = 7 - chess.square_rank(move.from_square) if board.turn == chess.WHITE else chess.square_rank(move.from_square)
      square, plane = divmod(int(index[action]), chess_features.POLICY_PLANES)
      assert (square, plane) == (row * 8 + chess.square_file(move.from_square), action % chess_features.POLICY_PLANES)
      assert obs[row, chess.square_file(move.from_square), :6].sum() == 1  # the mover's piece
      moves += 1
  assert moves > 500


def test_the_reply_planes_read_each_reply_at_the_square_its_piece_leaves_on_the_movers_board():
  """`network.opponent_policy` with planes: a reply (pgx's action in the opponent's frame, ranks mirrored) is read at
  the square of this position's observation where the opponent's piece stands, not at its mirror image."""
  index, env = chess_features.policy_index(opponent=True), make_env("chess")
  assert sorted(index.tolist()) == list(range(64 * chess_features.POLICY_PLANES))
  replies = 0
  for board in _random_boards(10, seed=2):
    obs = np.asarray(env.observe(pgx_private.from_fen(board.fen())))
    for move in list(board.legal_moves)[:3]:
      after = board.copy()
      after.push(move)
      reply_position = ChessPosition(after.fen())
      for reply in after.legal_moves:
        action = reply_position.action_of(reply.uci())
        rank, file = chess.square_rank(reply.from_square), chess.square_file(reply.from_square)
        row = 7 - rank if board.turn == chess.WHITE else rank  # in this position's frame
        assert int(index[action]) // chess_features.POLICY_PLANES == row * 8 + file
        assert obs[row, file, 6:12].sum() == 1  # the opponent's piece
        replies += 1
  assert replies > 300


def test_policy_planes_head_shares_its_weights_across_the_board():
  """The planes head has no layer per action: a convolution to 73 planes (with a bias per plane) replaces the flat
  head's [2 * 64, 4672] layer, and the network's outputs keep the flat head's shape."""
  env = make_env("chess")
  obs = jnp.stack([env.observe(env.init(jax.random.PRNGKey(0)))] * 2)
  shapes = {}
  for head in ("flat", "planes"):
    net = make_network(NetworkConfig(blocks=1, channels=8, value_hidden=8, policy_head=head), env.num_actions)
    params, bn_state = net.init(jax.random.PRNGKey(0), obs)
    (logits, value), _ = net.apply(params, bn_state, obs, False)
    assert logits.shape == (2, env.num_actions) and value.shape == (2,)
    shapes[head] = sorted(w.shape for w in jax.tree.leaves(params))
  assert (2 * 64, env.num_actions) in shapes["flat"]  # policy_channels x squares -> every action
  assert (1, 1, 8, chess_features.POLICY_PLANES) in shapes["planes"] and (chess_features.POLICY_PLANES,) in shapes["planes"]
  assert not any(env.num_actions in s for s in shapes["planes"])
