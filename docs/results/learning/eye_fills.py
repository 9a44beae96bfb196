"""How often the agent filled its own one-point eyes in a match's games.sgf (search.go_fill_eyes):

  python eye_fills.py MATCH_DIR/games.sgf

Each game is replayed through pgx (azjax.engines.positions.GoPosition). A move fills an own eye when the
point is empty and every on-board neighbour holds a stone of the mover (rules.own_eyes). Prints, per
game and in all: the agent's moves, its eye fills, and those made after the opponent had passed."""

import re
import sys

import numpy as np

from azjax.engines.positions import GoPosition


def games(path):
  return re.findall(r"\(;GM\[1\].*?\)(?=\s*\(;|\s*$)", open(path).read(), flags=re.S)


def own_eye(board: np.ndarray, r: int, c: int, colour: int) -> bool:
  size = board.shape[0]
  neighbours = [(r + dr, c + dc) for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))
                if 0 <= r + dr < size and 0 <= c + dc < size]
  return board[r, c] == 0 and all(board[n] == colour for n in neighbours)


def count(sgf: str):
  agent = "B" if re.search(r"PB\[azjax", sgf) else "W"
  moves = re.findall(r";([BW])\[([a-z]{0,2})\]", sgf)
  pos = GoPosition("go9")
  played = fills = after_pass = 0
  opponent_passed = False
  for colour, point in moves:
    action = 81 if point == "" else (ord(point[1]) - 97) * 9 + ord(point[0]) - 97
    if colour == agent:
      played += 1
      if action < 81 and own_eye(pos.board(), *divmod(action, 9), 1 if colour == "B" else -1):
        fills += 1
        after_pass += opponent_passed
    elif action == 81:
      opponent_passed = True
    pos.push(action)
  return agent, played, fills, after_pass


def main(path):
  total = np.zeros(3, int)
  print("game,agent_colour,agent_moves,eye_fills,eye_fills_after_opponent_passed")
  for i, sgf in enumerate(games(path)):
    agent, *figures = count(sgf)
    total += figures
    print(i, agent, *figures, sep=",")
  print(f"# in all: {total[0]} agent moves, {total[1]} own-eye fills ({total[1] / max(total[0], 1):.1%}), "
        f"{total[2]} of them after the opponent passed")


if __name__ == "__main__":
  main(sys.argv[1])
