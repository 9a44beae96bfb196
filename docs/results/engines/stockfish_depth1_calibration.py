"""How strong is Stockfish at skill 0, depth 1 (issue 16's chess anchor)? Simple players that know only material.

  python docs/results/engines/stockfish_depth1_calibration.py [--games 20] [--players random,greedy1,minimax2,search3]
      [--opponents stockfish,...] [--checkpoint RUN --simulations 16]

Each player meets each opponent for GAMES games, colours alternating. `stockfish` is Stockfish at Skill Level 0 and
depth 1, the in-run evaluations' anchor (`azjax.engines.match.anchor_engine`), as `experiments.match --opponent
stockfish --skill 0 --depth 1` runs it. Players:
  random   a uniformly random legal move;
  greedy1  mate in one if there is one, else the move that leaves the most material (ties at random);
  minimax2 the move whose worst reply (mate counted) leaves the most material: two plies of material minimax;
  search3  three plies of negamax with alpha-beta on material, then captures until quiet (quiescence);
  azjax    azjax's own UCI engine over a checkpoint (`--checkpoint`), at `--simulations` a move.
Games end by python-chess's rules with threefold and fifty-move draws claimed, or at 512 plies (a draw).
"""
import random
import sys

import chess
import chess.engine

from azjax.engines.match import anchor_engine

VALUE = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}
MATE = 1000


def material(board: chess.Board, colour: bool) -> int:
  return sum(VALUE[p.piece_type] * (1 if p.color == colour else -1) for p in board.piece_map().values())


def leaf(board: chess.Board, colour: bool) -> int:
  if board.is_checkmate():
    return -MATE if board.turn == colour else MATE
  if board.is_game_over(claim_draw=False):
    return 0
  return material(board, colour)


def random_move(board, rng):
  return rng.choice(list(board.legal_moves))


def best_of(board, score, rng):
  """A move of the highest score(board after it, mover's colour), ties broken at random."""
  colour, best, moves = board.turn, None, []
  for m in board.legal_moves:
    board.push(m)
    v = score(board, colour)
    board.pop()
    if best is None or v > best:
      best, moves = v, [m]
    elif v == best:
      moves.append(m)
  return rng.choice(moves)


def worst_reply(board, colour) -> int:
  if board.is_game_over(claim_draw=False):
    return leaf(board, colour)
  v = MATE
  for r in board.legal_moves:
    board.push(r)
    v = min(v, leaf(board, colour))
    board.pop()
  return v


def greedy1(board, rng):
  return best_of(board, leaf, rng)


def minimax2(board, rng):
  return best_of(board, worst_reply, rng)


def negamax(board, depth, alpha, beta) -> int:
  """Material for the side to move, `depth` plies then captures only (stand pat); mates sooner score higher."""
  if board.is_checkmate():
    return -MATE - depth
  if board.is_game_over(claim_draw=False):
    return 0
  quiet = depth <= 0
  if quiet:
    alpha = max(alpha, material(board, board.turn))
    if alpha >= beta:
      return alpha
  moves = ordered(board)
  for m in moves:
    if quiet and not board.is_capture(m):
      break
    board.push(m)
    v = -negamax(board, depth - 1, -beta, -alpha)
    board.pop()
    if v > alpha:
      alpha = v
      if alpha >= beta:
        break
  return alpha


def ordered(board):
  """Captures first, the most valuable victim by the least valuable attacker (MVV-LVA), then the rest."""
  def key(m):
    if not board.is_capture(m):
      return 100
    victim = board.piece_type_at(m.to_square) or chess.PAWN  # en passant
    return -10 * VALUE[victim] + VALUE[board.piece_type_at(m.from_square)]
  return sorted(board.legal_moves, key=key)


def search3(board, rng):
  """Root moves in random order; the first best found is played (ties broken at random by the shuffle)."""
  moves = list(board.legal_moves)
  rng.shuffle(moves)
  best, best_move = -10 * MATE, moves[0]
  for m in moves:
    board.push(m)
    v = -negamax(board, 2, -10 * MATE, -best)
    board.pop()
    if v > best:
      best, best_move = v, m
  return best_move


class Engine:
  """A UCI engine (python-chess's client) as a player: Stockfish, or azjax's own engine over a checkpoint."""

  def __init__(self, engine: chess.engine.SimpleEngine, limit: chess.engine.Limit):
    self.engine, self.limit = engine, limit

  def __call__(self, board, rng):
    return self.engine.play(board, self.limit).move


def play(white, black, rng) -> str:
  board = chess.Board()
  while not board.is_game_over(claim_draw=True) and board.ply() < 512:
    board.push((white if board.turn == chess.WHITE else black)(board, rng))
  return board.result(claim_draw=True)


def match(player, opponent, games: int, seed: int) -> str:
  """`games` games, colours alternating (the player white first); the player's score and its standard error."""
  rng, w, d = random.Random(seed), 0, 0
  for g in range(games):
    white_first = g % 2 == 0
    result = play(player, opponent, rng) if white_first else play(opponent, player, rng)
    if result in ("1/2-1/2", "*"):
      d += 1
    elif (result == "1-0") == white_first:
      w += 1
  score = (w + d / 2) / games
  se = (score * (1 - score) / games) ** 0.5
  return f"{w} wins, {d} draws, {games - w - d} losses: score {score:.3f} (se {se:.3f})"


def main():
  import argparse  # noqa: PLC0415
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("--games", type=int, default=20)
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--players", default="random,greedy1,minimax2,search3")
  p.add_argument("--opponents", default="stockfish", help="stockfish and/or the players above")
  p.add_argument("--checkpoint", help="adds player `azjax`: azjax's UCI engine over this checkpoint")
  p.add_argument("--simulations", type=int, default=16, help="azjax's simulations a move")
  a = p.parse_args()
  builtin = {"random": random_move, "greedy1": greedy1, "minimax2": minimax2, "search3": search3}
  engines = []

  def make(name):
    if name in builtin:
      return builtin[name]
    if name == "stockfish":
      stockfish = anchor_engine("chess")()  # the Stockfish of the in-run evaluations and experiments.match
      engines.append(Engine(stockfish.engine, stockfish.limit))
    elif name == "azjax" and a.checkpoint:
      command = [sys.executable, "-m", "azjax.engines.uci", "--checkpoint", a.checkpoint, "--simulations",
                 str(a.simulations)]
      engines.append(Engine(chess.engine.SimpleEngine.popen_uci(command, timeout=600),
                            chess.engine.Limit(nodes=a.simulations)))
    else:
      p.error(f"unknown player {name!r}: one of {', '.join([*builtin, 'stockfish', 'azjax (with --checkpoint)'])}")
    return engines[-1]

  print(f"{a.games} games a pairing, colours alternating, seed {a.seed}; Stockfish at skill 0, depth 1"
        + (f"; azjax: {a.checkpoint} at {a.simulations} simulations" if a.checkpoint else ""), flush=True)
  try:
    for opp in a.opponents.split(","):
      opponent = make(opp)
      for name in a.players.split(","):
        if name != opp:
          print(f"{name:9s} against {opp:9s} {match(make(name), opponent, a.games, a.seed)}", flush=True)
  finally:
    for e in engines:
      e.engine.quit()


if __name__ == "__main__":
  main()
