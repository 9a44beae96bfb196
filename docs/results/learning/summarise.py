"""Self-play diagnostics of a run, by windows of steps: `python summarise.py RUN/metrics.csv [WINDOW]`.

Game figures are weighted by the games each logged step finished; training figures are plain means.
Prints a markdown table (the tables of this folder's README)."""

import csv
import sys

GAME = ["game_length_p50", "played_out_length_p50", "end_double_pass", "end_cap", "end_repetition", "end_resignation", "end_win",
        "early_pass_end", "first_player_win"]
STEP = ["eye_fill_rate", "policy_entropy", "search_kl", "value_std", "value_saturated", "value_loss", "policy_loss", "ownership_loss",
        "moves_left_loss", "opponent_policy_loss", "learning_rate"]


def windows(rows, width):
  out = {}
  for r in rows:
    out.setdefault((int(r["step"]) - 1) // width, []).append(r)
  return [out[k] for k in sorted(out)]


def main(path, width=100):
  rows = list(csv.DictReader(open(path)))
  game = [k for k in GAME if k in rows[0]]  # older runs lack the later figures (resignation's)
  step = [k for k in STEP if k in rows[0]]
  print("| steps | games | " + " | ".join(game + step) + " |")
  print("|---" * (2 + len(game) + len(step)) + "|")
  for w in windows(rows, width):
    games = [float(r["games"]) for r in w]
    total = sum(games)
    cells = [f"{w[0]['step']}-{w[-1]['step']}", f"{total:.0f}"]
    for k in game:
      weights = [g * (1 - float(r["end_resignation"])) if k == "played_out_length_p50" else g
                 for r, g in zip(w, games)]  # the played-out median is over the games not resigned
      cells.append(f"{sum(float(r[k]) * x for r, x in zip(w, weights)) / (sum(weights) or 1):.2f}")
    for k in step:
      cells.append(f"{sum(float(r[k]) for r in w) / len(w):.3g}")
    print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
  main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 100)
