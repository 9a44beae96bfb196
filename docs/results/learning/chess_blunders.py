"""Where azjax loses its chess games: full-strength Stockfish's verdict on each of azjax's moves in a match's PGN.

  python docs/results/learning/chess_blunders.py GAMES.pgn [GAMES.pgn ...] [--depth 10] [--name azjax]

A match lost 0 of 20 says nothing about how far a network is from the target; its moves' centipawn losses do. For
each game in each file and each move of the side whose PGN name contains --name, Stockfish at full strength and a
fixed depth scores the position before the move and the position after it, from the mover's side, in centipawns
(mate scores as +-1000, and every score clipped to +-1000, as Lichess's accuracy figures do). The move's loss is the
first minus the second, never below 0. Prints, per file: azjax's moves analysed, the mean loss (ACPL), the fraction of
moves losing at least 100, 300 and 900 centipawns (a pawn, a minor piece, a queen), the median ply of each game's first
300-centipawn loss, and the median material balance (pawn = 1 ... queen = 9, azjax's side) after 20 plies.
"""
import argparse
import shutil
import statistics

import chess
import chess.engine
import chess.pgn

CAP = 1000
VALUE = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}


def score(engine: chess.engine.SimpleEngine, board: chess.Board, colour: bool, depth: int, game) -> int:
  """Stockfish's score of `board` for `colour`, clipped to +-CAP; a finished game scores by its result. A new `game`
  sends ucinewgame (a cleared hash), so each game's figures do not depend on the games analysed before it."""
  if board.is_checkmate():
    return -CAP if board.turn == colour else CAP
  if board.is_game_over(claim_draw=True):
    return 0
  info = engine.analyse(board, chess.engine.Limit(depth=depth), game=game)
  return max(-CAP, min(CAP, info["score"].pov(colour).score(mate_score=CAP)))


def material(board: chess.Board, colour: bool) -> int:
  return sum(VALUE[p.piece_type] * (1 if p.color == colour else -1) for p in board.piece_map().values())


def analyse_game(engine, game: chess.pgn.Game, name: str, depth: int):
  """(losses of the named side's moves in order with their plies, material after 20 plies or None)."""
  colour = chess.WHITE if name in game.headers.get("White", "") else chess.BLACK
  board, losses, balance = game.board(), [], None
  for ply, move in enumerate(game.mainline_moves()):
    if board.turn == colour:
      before = score(engine, board, colour, depth, game)
      board.push(move)
      losses.append((ply, max(0, before - score(engine, board, colour, depth, game))))
    else:
      board.push(move)
    if ply + 1 == 20:
      balance = material(board, colour)
  return losses, balance


def summarise(path: str, engine, name: str, depth: int) -> str:
  losses, first_blunders, balances, games = [], [], [], 0
  with open(path) as f:
    while (game := chess.pgn.read_game(f)) is not None:
      game_losses, balance = analyse_game(engine, game, name, depth)
      games += 1
      losses += [loss for _, loss in game_losses]
      first_blunders.append(next((ply for ply, loss in game_losses if loss >= 300), None))
      if balance is not None:
        balances.append(balance)
  n = max(1, len(losses))
  share = lambda t: sum(loss >= t for loss in losses) / n
  firsts = [p for p in first_blunders if p is not None]
  return (f"| {path} | {games} | {len(losses)} | {sum(losses) / n:.0f} | {share(100):.2f} | {share(300):.2f} | "
          f"{share(900):.2f} | {statistics.median(firsts) if firsts else '-'} | "
          f"{statistics.median(balances) if balances else '-'} |")


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("pgn", nargs="+")
  parser.add_argument("--depth", type=int, default=10)
  parser.add_argument("--name", default="azjax", help="a substring of the analysed side's White/Black header")
  args = parser.parse_args()
  engine = chess.engine.SimpleEngine.popen_uci(shutil.which("stockfish") or "/usr/games/stockfish")
  engine.configure({"Threads": 1, "Hash": 16})
  print(f"Stockfish {engine.id.get('name', '')}, depth {args.depth}, losses of the side named '{args.name}'\n")
  print("| games | n | moves | ACPL | >= 100 cp | >= 300 cp | >= 900 cp | median ply of first >= 300 | "
        "median material after 20 plies |")
  print("|---|---|---|---|---|---|---|---|---|")
  try:
    for path in args.pgn:
      print(summarise(path, engine, args.name, args.depth), flush=True)
  finally:
    engine.quit()


if __name__ == "__main__":
  main()
