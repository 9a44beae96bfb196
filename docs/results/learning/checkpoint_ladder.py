"""One run's checkpoints, each against the next: is the run's strength rising at every interval?

  python docs/results/learning/checkpoint_ladder.py RUN STEP1 STEP2 ... [--games 128] [--out RUN/ladder.md]

The run's own Elo fit rates each evaluation point from 32 games against the previous checkpoint, an
interval of about +-200 Elo, too wide to resolve one step. This plays GAMES games (colours alternating,
two seeded random opening plies shared by each pair, as the evaluations) between every pair of
consecutive steps, and one match of the first step against uniform random, then fits Elo by maximum
likelihood over them (azjax.elo; random = 0, one virtual draw per pair as the run's fit). Writes a
markdown table: each interval's score with its 95% interval, and each step's rating. Each match's
result is kept in RUN/ladder_games.csv and not played again, so the ladder can be extended as a run
writes checkpoints.
"""
import argparse
import csv
import os
import time

import jax

from azjax import arena, elo, load_agent


def main():
  p = argparse.ArgumentParser()
  p.add_argument("run")
  p.add_argument("steps", type=int, nargs="+")
  p.add_argument("--games", type=int, default=128)
  p.add_argument("--out", default=None)
  args = p.parse_args()
  cache = os.path.join(args.run, "ladder_games.csv")
  played = {}
  if os.path.exists(cache):
    with open(cache) as f:
      played = {(r["first"], r["second"], int(r["games"])): r for r in csv.DictReader(f)}
  agents = {}
  rows, games = [], []
  pairs = [(args.steps[0], None)] + list(zip(args.steps[1:], args.steps[:-1]))
  for a, b in pairs:
    name_a, name_b = f"step {a}", "random" if b is None else f"step {b}"
    if (name_a, name_b, args.games) in played:
      r = played[(name_a, name_b, args.games)]
      result = arena.MatchResult(int(r["wins"]), int(r["draws"]), int(r["losses"]), {})
    else:
      started = time.perf_counter()
      for s in (a, b):
        if s is not None and s not in agents:
          agents[s] = load_agent(args.run, s)
      opponent = arena.random_player if b is None else agents[b].player(name_b)
      key = jax.random.PRNGKey(2026 + a)  # a match's key depends on its steps only
      result = arena.match(agents[a].env, agents[a].player(name_a), opponent, key, args.games, opening_plies=2)
      new = not os.path.exists(cache)
      with open(cache, "a", newline="") as f:
        w = csv.writer(f)
        if new:
          w.writerow(["first", "second", "games", "wins", "draws", "losses"])
        w.writerow([name_a, name_b, args.games, result.wins, result.draws, result.losses])
      print(f"{name_a} against {name_b}: {result.wins}-{result.draws}-{result.losses}, {result.score:.3f}; "
            f"{time.perf_counter() - started:.0f} s", flush=True)
    games.append(elo.Game(name_a, name_b, result.wins, result.draws, result.losses))
    lo, hi = result.interval()
    rows.append((a, name_b, result, lo, hi))
  ratings = elo.fit(games, anchor="random", prior_draws=1.0)
  lines = [f"`{args.run}`, {args.games} games a match (python docs/results/learning/checkpoint_ladder.py "
           f"{args.run} {' '.join(map(str, args.steps))} --games {args.games})", "",
           "| step | against | W-D-L | score (95% CI) | Elo, random = 0 (95% CI) |", "|---:|---|---|---|---|"]
  for a, name_b, result, lo, hi in rows:
    r_lo, r_hi = ratings.interval(f"step {a}")
    lines.append(f"| {a} | {name_b} | {result.wins}-{result.draws}-{result.losses} | {result.score:.3f} "
                 f"({lo:.3f}-{hi:.3f}) | {ratings[f'step {a}']:.0f} ({r_lo:.0f} to {r_hi:.0f}) |")
  rising = sum(r[2].score > 0.5 for r in rows[1:])
  lines += ["", f"Later checkpoint ahead at {rising} of {len(rows) - 1} intervals; "
            f"significantly (95% interval above 0.5) at {sum(r[3] > 0.5 for r in rows[1:])}."]
  text = "\n".join(lines)
  print(text)
  if args.out:
    with open(args.out, "w") as f:
      f.write(text + "\n")


if __name__ == "__main__":
  main()
