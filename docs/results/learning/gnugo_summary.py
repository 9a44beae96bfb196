"""Pool GNU Go matches (`experiments.match --opponent gnugo`) by GNU Go's own count, from the agent's side:
`python gnugo_summary.py MATCH_DIR [MATCH_DIR ...]` prints, per directory and pooled, the games, wins, mean margin
with its standard error, the games lost within 25 points, and the games in which every agent stone died.

On 9x9 with komi 7.5 a board with no agent stone left counts B+73.5 (agent white) or W+88.5 (agent black)."""

import csv
import math
import sys

from azjax.engines.match import GameOutcome, agent_margin

WIPED = {0: 88.5, 1: 73.5}  # agent colour (0 black, 1 white): GNU Go's margin when every agent stone died


def margins(directory):
  """[(the agent's margin by GNU Go's count, whether every agent stone died)] for the counted games of a match."""
  out = []
  for row in csv.DictReader(open(f"{directory}/results.csv")):
    colour = int(row["agent_colour"])
    margin = agent_margin(GameOutcome(int(row["game"]), colour, None, row["reason"], [], 0.0))
    if margin is not None:  # aborted, or not a counted ending
      out.append((margin, margin == -WIPED[colour]))
  return out


def line(name, rows):
  m = [x for x, _ in rows]
  mean = sum(m) / len(m)
  se = math.sqrt(sum((x - mean) ** 2 for x in m) / (len(m) - 1) / len(m)) if len(m) > 1 else float("nan")
  return (f"{name}: {len(m)} games, {sum(x > 0 for x in m)} wins, mean {mean:.1f} (se {se:.1f}), "
          f"lost within 25: {sum(-25 <= x < 0 for x in m)}, every stone dead: {sum(w for _, w in rows)}")


if __name__ == "__main__":
  pooled = []
  for d in sys.argv[1:]:
    rows = margins(d)
    pooled += rows
    print(line(d, rows))
  if len(sys.argv) > 2:
    print(line("pooled", pooled))
