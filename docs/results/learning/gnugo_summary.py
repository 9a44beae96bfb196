"""Pool GNU Go matches (`experiments.match --opponent gnugo`) by GNU Go's own count, from the agent's side:
`python gnugo_summary.py MATCH_DIR [MATCH_DIR ...]` prints, per directory and pooled, the games, wins, mean margin
with its standard error, the games lost within 25 points, and the games in which every agent stone died.

On 9x9 with komi 7.5 a board with no agent stone left counts B+73.5 (agent white) or W+88.5 (agent black).
Matches older than the count in `results.csv` (before section 16) are read from their `margins.txt`
(`gnugo_margins.py`'s re-count of the SGFs)."""

import csv
import math
import os
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
  if not out and os.path.exists(f"{directory}/margins.txt"):  # an older match, no count in its results: the re-count
    rows = csv.DictReader(line for line in open(f"{directory}/margins.txt") if not line.startswith("#"))
    out = [(float(r["agent_margin"]), float(r["agent_margin"]) == -WIPED[r["agent_colour"] == "white"])
           for r in rows if r["agent_margin"] not in ("", "None")]
  return out


def line(name, rows):
  m = [x for x, _ in rows]
  if not m:
    return f"{name}: no counted game"
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
