"""An exhaustive tic-tac-toe minimax player, written independently of azjax (plain Python)."""

import functools

import numpy as np

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def winner(board):
  for a, b, c in LINES:
    if board[a] != -1 and board[a] == board[b] == board[c]:
      return board[a]
  return None


@functools.cache
def value(board: tuple, mover: int) -> int:
  """Game value for `mover` with perfect play: 1 win, 0 draw, -1 loss."""
  w = winner(board)
  if w is not None:
    return 1 if w == mover else -1
  if all(x != -1 for x in board):
    return 0
  return max(-value(board[:i] + (mover,) + board[i + 1:], 1 - mover) for i in range(9) if board[i] == -1)


def optimal_moves(board: tuple, mover: int) -> list[int]:
  moves = [i for i in range(9) if board[i] == -1]
  scores = {i: -value(board[:i] + (mover,) + board[i + 1:], 1 - mover) for i in moves}
  best = max(scores.values())
  return [i for i in moves if scores[i] == best]


def act(rng: np.random.Generator, board, mover) -> int:
  """A uniformly random optimal move: a perfect player that still varies its games."""
  return int(rng.choice(optimal_moves(tuple(int(x) for x in board), int(mover))))
