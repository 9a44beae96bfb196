"""One run's checkpoints, each against the next: is the run's strength rising at every interval?

  python docs/results/learning/checkpoint_ladder.py RUN STEP1 STEP2 ... [--games 128] [--out RUN/ladder.md]

The run's own Elo fit rates each evaluation point from 32 games against the previous checkpoint, an
interval of about +-200 Elo, too wide to resolve one step. This plays GAMES games (colours alternating,
two seeded random opening plies shared by each pair, as the evaluations) between every pair of
consecutive steps, and one match of the first step against uniform random, then fits Elo by maximum
likelihood over them (evaluation.fit_curve, the run's own fit: random = 0, its virtual draws). Writes a
markdown table: each interval's score with its 95% interval, and each step's rating. Each match's
result is kept in RUN/ladder_games.csv (evals.csv's columns and the games) and not played again, so the ladder can be extended as a run
writes checkpoints.
"""
import argparse
import csv
import os
import time

import jax

from azjax import arena, evaluation, load_agent


FIELDS = ["step", "player", "opponent", "games", "wins", "draws", "losses"]  # evals.csv's columns, and the games


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
      played = {(r["player"], r["opponent"], int(r["games"])): r for r in csv.DictReader(f)}
  agents, rows = {}, []
  pairs = [(args.steps[0], None)] + list(zip(args.steps[1:], args.steps[:-1]))
  for a, b in pairs:
    name_a = evaluation.player_name(a)
    name_b = evaluation.ANCHOR if b is None else evaluation.player_name(b)
    row = played.get((name_a, name_b, args.games))
    if row is None:
      started = time.perf_counter()
      for s in (a, b):
        if s is not None and s not in agents:
          agents[s] = load_agent(args.run, s)
      opponent = arena.random_player if b is None else agents[b].player(name_b)
      key = jax.random.PRNGKey(2026 + a)  # a match's key depends on its steps only
      result = arena.match(agents[a].env, agents[a].player(name_a), opponent, key, args.games, opening_plies=2)
      row = dict(step=a, player=name_a, opponent=name_b, games=args.games, wins=result.wins, draws=result.draws,
                 losses=result.losses)
      new = not os.path.exists(cache)
      with open(cache, "a", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        if new:
          w.writeheader()
        w.writerow(row)
      print(f"{name_a} against {name_b}: {result.wins}-{result.draws}-{result.losses}, {result.score:.3f}; "
            f"{time.perf_counter() - started:.0f} s", flush=True)
    rows.append(row)
  _, curve = evaluation.fit_curve(rows)  # the run's own fit: random = 0, its prior draws
  elo_at = {c["step"]: c for c in curve}
  results = [arena.MatchResult(int(r["wins"]), int(r["draws"]), int(r["losses"])) for r in rows]
  lines = [f"`{args.run}`, {args.games} games a match (python docs/results/learning/checkpoint_ladder.py "
           f"{args.run} {' '.join(map(str, args.steps))} --games {args.games})", "",
           "| step | against | W-D-L | score (95% CI) | Elo, random = 0 (95% CI) |", "|---:|---|---|---|---|"]
  for r, result in zip(rows, results):
    lo, hi, c = *result.interval(), elo_at[int(r["step"])]
    lines.append(f"| {r['step']} | {r['opponent']} | {result.wins}-{result.draws}-{result.losses} | {result.score:.3f} "
                 f"({lo:.3f}-{hi:.3f}) | {c['elo']:.0f} ({c['elo_lo']:.0f} to {c['elo_hi']:.0f}) |")
  later = results[1:]
  lines += ["", f"Later checkpoint ahead at {sum(r.score > 0.5 for r in later)} of {len(later)} intervals; "
            f"significantly (95% interval above 0.5) at {sum(r.interval()[0] > 0.5 for r in later)}."]
  text = "\n".join(lines)
  print(text)
  if args.out:
    with open(args.out, "w") as f:
      f.write(text + "\n")


if __name__ == "__main__":
  main()
