"""Elo of azjax's chess networks on a ladder of material players, with Stockfish skill 0, depth 1 at 0.

  python docs/results/learning/chess_ladder/ladder_elo.py FILE... [--prior-draws 1]

Each FILE is the output of `docs/results/engines/stockfish_depth1_calibration.py` (lines "A against B  W wins,
D draws, L losses: ...") or of `experiments.match` (its "games N (+0 aborted): W wins, D draws, L losses" line, the
opponent Stockfish). A line whose player is `azjax` is named after its file, so each checkpoint is its own player:
`hist2_s1_1800_32sims.txt` gives `hist2_s1_1800_32sims`. The fit is azjax.elo's maximum likelihood; a pair that
won every game needs `--prior-draws` (BayesElo's virtual draws) to stay finite.
"""
import argparse
import re
from pathlib import Path

from azjax.elo import Game, fit

LADDER = re.compile(r"^(\S+)\s+against\s+(\S+)\s+(\d+) wins, (\d+) draws, (\d+) losses")
MATCH = re.compile(r"^games \d+ \(\+\d+ aborted\): (\d+) wins, (\d+) draws, (\d+) losses")


def games_in(path: Path, name: str | None = None) -> list[Game]:
  label = name or path.stem
  out = []
  for line in path.read_text().splitlines():
    if m := LADDER.match(line):
      first = label if m[1] == "azjax" else m[1]
      out.append(Game(first, m[2], float(m[3]), float(m[4]), float(m[5])))
    elif m := MATCH.match(line):
      out.append(Game(label, "stockfish", float(m[1]), float(m[2]), float(m[3])))
  return out


def main():
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("files", nargs="+", help="ladder or match outputs; NAME=FILE names a file's azjax player")
  p.add_argument("--prior-draws", type=float, default=1.0)
  a = p.parse_args()
  games = []
  for f in a.files:
    name, _, path = f.rpartition("=")
    games += games_in(Path(path), name or None)
  for g in games:
    n = g.wins + g.draws + g.losses
    print(f"{g.first:28s} {g.second:10s} {g.wins:3.0f}-{g.draws:3.0f}-{g.losses:3.0f}  {(g.wins + g.draws / 2) / n:.3f}")
  print()
  print(fit(games, "stockfish", prior_draws=a.prior_draws).table())


if __name__ == "__main__":
  main()
