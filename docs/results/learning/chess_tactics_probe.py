"""Where a chess network's tactics fail: its policy, its value, or its search. `python chess_tactics_probe.py RUN STEP
[--positions 200] [--simulations 16 32 128] [--set search.FIELD=VALUE ...]`.

Positions come from uniformly random games (python-chess, plies 8 to 60). Two sets:
- "capture": the side to move can win material at once: a capture worth at least 2 points after the capturer is
  lost when the square is defended (one ply, as chess_capacity.capture_gain; pawn 1, knight and bishop 3, rook 5,
  queen 9). Asked: does the player take it?
- "quiet": nothing can be won at once and nothing of the mover's hangs. Asked: does the player's move hang
  material, leaving the opponent a capture worth at least 2?
Players: the network's prior (its policy's most likely move); a one-ply search of its value (the move after which
the network values the position best for the mover: what 16 Gumbel simulations over 16 moves approximate); the
agent's search at each simulation count (no noise, its best move); a uniformly random mover; greedy material (the
best one-ply material gain, the calibration script's greedy1). For the capture set it also prints how the network
values the position after the winning capture against the mean of the other moves.
"""

import argparse
import random

import chess
import jax
import jax.numpy as jnp
import numpy as np

from azjax import load_agent, rules
from azjax.engines import pgx_private
from azjax.engines.positions import ChessPosition
from azjax.network import make_network

VALUE = rules.CHESS_PIECE_VALUES  # indexed by python-chess piece type (1 pawn .. 6 king), as pgx codes them


def gain(board: chess.Board, move: chess.Move) -> int:
  """Material the move wins at once, less its capturer when the opponent can take back on that square."""
  taken = board.piece_at(move.to_square)
  won = VALUE[taken.piece_type] if taken else (1 if board.is_en_passant(move) else 0)
  if move.promotion:
    won += VALUE[move.promotion] - 1
  mover = VALUE[move.promotion or board.piece_at(move.from_square).piece_type]
  board.push(move)
  if won and board.is_attacked_by(board.turn, move.to_square):
    won -= mover
  board.pop()
  return won


def best_gain(board: chess.Board) -> int:
  return max((gain(board, m) for m in board.legal_moves), default=0)


def hangs(board: chess.Board, move: chess.Move) -> bool:
  """After the move, can the opponent win at least 2 points at once?"""
  board.push(move)
  out = not board.is_game_over() and best_gain(board) >= 2
  board.pop()
  return out


def positions(n: int, seed: int) -> tuple[list[chess.Board], list[chess.Board]]:
  rng, capture, quiet = random.Random(seed), [], []
  while len(capture) < n or len(quiet) < n:
    board = chess.Board()
    for _ in range(rng.randint(8, 60)):
      if board.is_game_over():
        break
      board.push(rng.choice(list(board.legal_moves)))
    if board.is_game_over():
      continue
    if best_gain(board) >= 2:
      if len(capture) < n:
        capture.append(board)
    elif len(quiet) < n:
      board.push(chess.Move.null())  # quiet: also nothing of the mover's hangs now
      safe = best_gain(board) < 2
      board.pop()
      if safe:
        quiet.append(board)
  return capture, quiet


def stack(fens):
  """The positions as one batched pgx state."""
  return jax.tree.map(lambda *x: jnp.stack(x), *[pgx_private.from_fen(fen) for fen in fens])


def main():
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("run")
  p.add_argument("step", type=int)
  p.add_argument("--positions", type=int, default=200)
  p.add_argument("--simulations", type=int, nargs="+", default=[16, 32, 128])
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--set", action="append", default=[], metavar="search.FIELD=VALUE",
                 help="search with another setting than the checkpoint's (repeatable), as experiments.match")
  a = p.parse_args()
  agent = load_agent(a.run, step=a.step).with_search(a.set)
  network = make_network(agent.config.network, agent.num_actions)
  forward = jax.jit(lambda obs: network.apply(agent.params, agent.bn_state, obs, False)[0])
  uci = ChessPosition()
  capture, quiet = positions(a.positions, a.seed)
  rng = random.Random(a.seed + 1)

  def move(board, action):
    return chess.Move.from_uci(uci_move(board, int(action)))

  def uci_move(board, action):
    uci.states[-1] = pgx_private.from_fen(board.fen())  # the mover's side decides pgx's encoding
    uci.hosts[-1] = pgx_private.host(uci.states[-1])
    return uci.move_of(action)

  for name, boards in (("capture", capture), ("quiet", quiet)):
    state = stack([b.fen() for b in boards])
    logits, _ = forward(state.observation)
    logits = np.where(np.asarray(state.legal_action_mask), np.asarray(logits), -np.inf)
    choices = {"random": [rng.choice(list(b.legal_moves)) for b in boards],
               "greedy material": [max(b.legal_moves, key=lambda m: (gain(b, m), rng.random())) for b in boards],
               "prior": [move(b, np.argmax(lg)) for b, lg in zip(boards, logits)]}
    one_ply, capture_value, other_value = [], [], []
    for b in boards:  # the network's value after each legal move, for the mover
      children = list(b.legal_moves)
      after, over, mates = [], [], []
      for m in children:
        b.push(m)
        after.append(b.fen())
        over.append(b.is_game_over())
        mates.append(b.is_checkmate())
        b.pop()
      live = [i for i in range(len(children)) if not over[i]]
      values = np.where(mates, 1.0, 0.0)  # a mate wins; any other end is a draw by the rules
      if live:
        kids = stack([after[i] for i in live])
        values[live] = -np.asarray(forward(kids.observation)[1])
      one_ply.append(children[int(np.argmax(values))])
      gains = np.array([gain(b, m) for m in children])
      if name == "capture":
        capture_value.append(values[gains == gains.max()].max())
        other_value.append(values[gains < 2].mean() if (gains < 2).any() else np.nan)
    choices["one-ply value"] = one_ply
    for sims in a.simulations:
      out = agent.analyse(state, jax.random.PRNGKey(sims), num_simulations=sims)
      choices[f"search, {sims} simulations"] = [move(b, m) for b, m in zip(boards, out["move"])]
    print(f"\n{name}: {len(boards)} positions, {a.run} step {a.step}")
    for player, moves in choices.items():
      if name == "capture":
        won = np.mean([gain(b, m) >= 2 for b, m in zip(boards, moves)])
        print(f"  {player:28s} takes the material: {won:.3f}")
      else:
        hung = np.mean([hangs(b, m) for b, m in zip(boards, moves)])
        print(f"  {player:28s} hangs material: {hung:.3f}")
    if name == "capture":
      print(f"  the network's value after the winning capture {np.mean(capture_value):+.3f}, after the other moves "
            f"{np.nanmean(other_value):+.3f} (mean, for the mover)")


if __name__ == "__main__":
  main()
