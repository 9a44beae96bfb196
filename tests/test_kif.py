"""Shogi records in KIF: the notation of known moves, and random legal games read back by python-shogi's parser."""

import random

import shogi
import shogi.KIF

from azjax.engines import kif


def test_moves_in_kif_names_piece_origin_promotion_drop_and_same_square():
  assert kif.moves_in_kif(["7g7f", "3c3d", "8h2b+", "3a2b", "B*4e", "5a4b"]) == [
      "７六歩(77)", "３四歩(33)", "２二角成(88)", "同　銀(31)", "４五角打", "４二玉(51)"]


def test_a_record_ends_with_its_result():
  won = kif.kif(["7g7f", "3c3d"], "A", "B", 0.0, "resignation", "2026/11/24").splitlines()
  assert won[3:5] == ["先手：A", "後手：B"] and won[-3:] == ["   3 投了", "まで2手で後手の勝ち", "*resignation"]
  drawn = kif.kif([], "A", "B", 0.5, "adjudicated draw at 512 plies", "2026/11/24").splitlines()
  assert drawn[-3:-1] == ["   1 中断", "まで0手で中断"]


def test_random_legal_games_read_back_move_for_move():
  rng = random.Random(0)
  for game in range(20):
    board, moves = shogi.Board(), []
    for _ in range(rng.randint(1, 200)):
      legal = list(board.legal_moves)
      if not legal:
        break
      move = rng.choice(legal)
      moves.append(move.usi())
      board.push(move)
    record = kif.kif(moves, "A", "B", 1.0 if board.is_checkmate() else 0.5, "rules (pgx)", "2026/11/24")
    parsed = shogi.KIF.Parser.parse_str(record)[0]
    assert parsed["moves"] == moves, game
    assert parsed["names"] == ["A", "B"]
