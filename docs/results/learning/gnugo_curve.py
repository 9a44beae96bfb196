"""A go9 run's learning curve against GNU Go level 1: `python gnugo_curve.py RUN_DIR [RUN_DIR ...]`.

For each run, the matches `experiments.match --opponent gnugo --level 1` played at its evaluated checkpoints
(RUN_DIR/gnugo_level1_s<STEP>/ and, with --seed 1, gnugo_level1_seed1_s<STEP>/), and the run's own games against
GNU Go at its evaluations (run.eval_engine_games: RUN_DIR/engine/step<STEP>/), steps the run did not evaluate left out, join the run's own evaluation
games (evals.csv: the uniform random player and the previous checkpoint) in one maximum-likelihood Elo fit, the
fit the run makes itself (azjax.evaluation: anchor random at 0, one virtual draw per pair). GNU Go is one more
player of that fit, so its games give each checkpoint a rating that a perfect score against random cannot. Prints
per step: GNU Go's games, the agent's wins, its mean margin by GNU Go's count (standard error), and the fitted Elo
(95% interval) above random and against GNU Go (the same fit, GNU Go held at 0: narrower intervals, since GNU Go's
own games pin it); writes RUN_DIR/gnugo_curve.csv, and with several runs gnugo_curve.png beside this script
(--plot PATH to name it)."""

import csv
import glob
import os
import re
import sys

from gnugo_summary import margins

from azjax import elo
from azjax.evaluation import ANCHOR, PRIOR_DRAWS, as_game, player_name

GNUGO = "gnugo-level1"


def curve(run_dir):
  games = [as_game(r) for r in csv.DictReader(open(f"{run_dir}/evals.csv")) if not r["opponent"].startswith("gnugo")]
  evaluated = {int(g.first.removeprefix("step")) for g in games}
  by_step = {}
  # Matches played after the run, and the run's own GNU Go games (run.eval_engine_games: engine/step<N>/).
  for d in glob.glob(f"{run_dir}/gnugo_level1_*s[0-9]*") + glob.glob(f"{run_dir}/engine/step[0-9]*"):
    m = re.fullmatch(r"(?:gnugo_level1_(?:seed\d+_)?s|step)(\d+)", os.path.basename(d))
    if m and int(m[1]) in evaluated and os.path.exists(f"{d}/results.csv"):
      by_step.setdefault(int(m[1]), []).extend(margins(d))
  for step, rows in by_step.items():
    wins = sum(x > 0 for x, _ in rows)
    games.append(elo.Game(player_name(step), GNUGO, wins, 0, len(rows) - wins))
  ratings = elo.fit(games, ANCHOR, prior_draws=PRIOR_DRAWS)
  to_gnugo = elo.fit(games, GNUGO, prior_draws=PRIOR_DRAWS)  # the same fit, read against GNU Go
  out = []
  for step in sorted(by_step):
    m = [x for x, _ in by_step[step]]
    mean = sum(m) / len(m)
    se = (sum((x - mean) ** 2 for x in m) / (len(m) - 1) / len(m)) ** 0.5
    lo, hi = ratings.interval(player_name(step))
    out.append({"step": step, "gnugo_games": len(m), "wins": sum(x > 0 for x in m), "mean_margin": round(mean, 1),
                "margin_se": round(se, 1), "elo": round(ratings[player_name(step)]), "elo_lo": round(lo),
                "elo_hi": round(hi), "elo_vs_gnugo": round(to_gnugo[player_name(step)]),
                "elo_vs_gnugo_lo": round(to_gnugo.interval(player_name(step))[0]),
                "elo_vs_gnugo_hi": round(to_gnugo.interval(player_name(step))[1])})
  return out, ratings[GNUGO], ratings.interval(GNUGO)


def plot(curves, path):
  import matplotlib
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt
  fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 7), sharex=True)
  for name, rows in curves:
    steps = [r["step"] for r in rows]
    top.errorbar(steps, [r["mean_margin"] for r in rows], yerr=[1.96 * r["margin_se"] for r in rows], marker="o",
                 capsize=3, label=name)
    bottom.plot(steps, [r["elo_vs_gnugo"] for r in rows], marker="o", label=name)
    bottom.fill_between(steps, [r["elo_vs_gnugo_lo"] for r in rows], [r["elo_vs_gnugo_hi"] for r in rows], alpha=0.2)
  top.axhline(-20, color="grey", ls="--", lw=1)
  top.set_ylabel("mean margin by GNU Go's count")
  bottom.axhline(0, color="grey", ls="--", lw=1)
  bottom.set_ylabel("Elo against GNU Go level 1")
  bottom.set_xlabel("training step")
  top.legend()
  top.set_title("go9 cpu preset against GNU Go level 1 (95% intervals)")
  fig.tight_layout()
  fig.savefig(path, dpi=100)


if __name__ == "__main__":
  args, path = sys.argv[1:], os.path.join(os.path.dirname(os.path.abspath(__file__)), "gnugo_curve.png")
  if "--plot" in args:
    i = args.index("--plot")
    path, args = args[i + 1], args[:i] + args[i + 2:]
  curves = []
  for run_dir in args:
    rows, gnugo, (glo, ghi) = curve(run_dir)
    curves.append((os.path.basename(os.path.normpath(run_dir)), rows))
    with open(f"{run_dir}/gnugo_curve.csv", "w", newline="") as f:
      writer = csv.DictWriter(f, fieldnames=list(rows[0]))
      writer.writeheader()
      writer.writerows(rows)
    print(f"{run_dir}: GNU Go level 1 rated {gnugo:.0f} ({glo:.0f} to {ghi:.0f}) above uniform random")
    print("  step  games  wins  mean margin (se)   Elo above random (95%)   Elo against GNU Go (95%)")
    for r in rows:
      print(f"  {r['step']:>4}  {r['gnugo_games']:>5}  {r['wins']:>4}  {r['mean_margin']:>6.1f} ({r['margin_se']:>4.1f})"
            f"      {r['elo']:>5} ({r['elo_lo']} to {r['elo_hi']})"
            f"      {r['elo_vs_gnugo']:>5} ({r['elo_vs_gnugo_lo']} to {r['elo_vs_gnugo_hi']})")
  if len(curves) > 1:
    plot(curves, path)
