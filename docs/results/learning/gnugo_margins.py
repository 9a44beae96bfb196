"""GNU Go's own score of each game of a match's games.sgf, from the agent's side:
`python gnugo_margins.py MATCH_DIR/games.sgf [LEVEL]` prints margins.txt's CSV and the mean margin.

Each game is loaded into GNU Go (GTP `loadsgf`) and scored with `final_score` (it removes dead stones)."""

import re
import subprocess
import sys
import tempfile


def games(path):
  return re.findall(r"\(;GM\[1\].*?\)(?=\s*\(;|\s*$)", open(path).read(), flags=re.S)


def final_score(sgf: str, level: int) -> str:
  with tempfile.NamedTemporaryFile("w", suffix=".sgf", delete=False) as f:
    f.write(sgf)
  out = subprocess.run(["/usr/games/gnugo", "--mode", "gtp", "--level", str(level), "--chinese-rules"],
                       input=f"loadsgf {f.name}\nfinal_score\nquit\n", capture_output=True, text=True,
                       timeout=600).stdout
  return [line[2:].strip() for line in out.splitlines() if line.startswith("= ")][1]


def main(path, level=1):
  print("game,agent_colour,gnugo_final_score,agent_margin")
  margins = []
  for i, sgf in enumerate(games(path)):
    if "RE[?]" in sgf:  # aborted: no result to score
      print(f"{i},,aborted,")
      continue
    colour = "black" if re.search(r"PB\[azjax", sgf) else "white"
    score = final_score(sgf, level)
    sign = 1 if score[0] == colour[0].upper() else -1
    margin = sign * float(score[2:] or 0)
    margins.append(margin)
    print(f"{i},{colour},{score},{margin}")
  wins = sum(m > 0 for m in margins)
  print(f"# mean margin {sum(margins) / len(margins):.1f} over {len(margins)} finished games; wins {wins}")


if __name__ == "__main__":
  main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1)
