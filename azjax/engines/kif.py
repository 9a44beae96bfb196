"""Shogi game records in KIF, the format Japanese shogi software reads (Kakinoki's; ShogiGUI, KifuForWindows,
shogi-extend, lishogi's import): one game per file, moves in Japanese notation, UTF-8.

A move names the piece that moves, so the board is tracked from the start position: USI's `7g7f` becomes
`７六歩(77)`, `8h2b+` `２二角成(88)`, `B*4e` `４五角打`, and a move to the square the previous move went to
`同　銀(31)`."""

_FILES = "０１２３４５６７８９"  # full-width digits; index 0 unused
_RANKS = "〇一二三四五六七八九"  # kanji numerals; index 0 unused
_NAMES = {"P": "歩", "L": "香", "N": "桂", "S": "銀", "G": "金", "B": "角", "R": "飛", "K": "玉",
          "+P": "と", "+L": "成香", "+N": "成桂", "+S": "成銀", "+B": "馬", "+R": "龍"}
_START_RANKS = ("LNSGKGSNL", ".R.....B.", "PPPPPPPPP")  # gote's first three ranks, file 9 to file 1


def _square(usi: str) -> tuple[int, int]:
  return int(usi[0]), ord(usi[1]) - ord("a") + 1


def start_board() -> dict[tuple[int, int], str]:
  """{(file, rank): piece} of the start position, pieces as USI letters ("+" before a promoted one); sides do
  not matter to the notation, so they are not kept."""
  board = {}
  for rank, row in enumerate(_START_RANKS, start=1):
    for i, piece in enumerate(row):
      if piece != ".":
        board[(9 - i, rank)] = piece
        board[(i + 1, 10 - rank)] = piece  # sente's pieces, the board turned half a circle
  return board


def moves_in_kif(usi_moves: list[str]) -> list[str]:
  """The KIF notation of each USI move, played from the start position."""
  board, previous, out = start_board(), None, []
  for move in usi_moves:
    to = _square(move[2:4])
    where = "同　" if to == previous else _FILES[to[0]] + _RANKS[to[1]]
    if move[1] == "*":  # a drop
      piece = move[0]
      out.append(f"{where}{_NAMES[piece]}打")
    else:
      origin = _square(move[:2])
      piece = board.pop(origin)
      promotes = move.endswith("+")
      out.append(f"{where}{_NAMES[piece]}{'成' if promotes else ''}({origin[0]}{origin[1]})")
      piece = "+" + piece if promotes else piece
    board[to], previous = piece, to
  return out


def kif(usi_moves: list[str], sente: str, gote: str, first_points: float | None, reason: str, date: str) -> str:
  """A whole KIF record. `first_points` is sente's score (1, 0.5, 0, or None for an unfinished game); `reason`
  is how it ended, in this project's words, kept as a comment."""
  lines = ["#KIF version=2.0 encoding=UTF-8", f"開始日時：{date}", "手合割：平手", f"先手：{sente}", f"後手：{gote}",
           "手数----指手---------消費時間--"]
  lines += [f"{i:>4} {m}" for i, m in enumerate(moves_in_kif(usi_moves), start=1)]
  n = len(usi_moves)
  if first_points in (0.0, 1.0):
    ending = "投了" if "resign" in reason else "詰み"
    winner = "先手" if first_points == 1.0 else "後手"
    lines += [f"{n + 1:>4} {ending}", f"まで{n}手で{winner}の勝ち"]
  else:  # a draw (length cap, adjudication) or an aborted game
    lines += [f"{n + 1:>4} 中断", f"まで{n}手で中断"]
  lines.append(f"*{reason}")
  return "\n".join(lines) + "\n"
