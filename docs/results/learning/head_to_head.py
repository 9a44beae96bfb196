"""Two runs' checkpoints against each other: GAMES games, colours alternating, each side at its own
search settings (or at SIMS_A and SIMS_B simulations a move; 0 keeps a side's own), two seeded random
opening plies shared by each pair of games (as the evaluations).

  python docs/results/learning/head_to_head.py RUN_A STEP_A RUN_B STEP_B [GAMES [SIMS_A SIMS_B]]
  python docs/results/learning/head_to_head.py RUN_A STEP_A random - [GAMES]    # against uniform random

Arguments `A:search.FIELD=VALUE` and `B:search.FIELD=VALUE`, anywhere, play that side with another search setting
than its checkpoint's (as experiments.match's --set). `seed=N`, anywhere, seeds the openings and the players'
randomness (default 2026, every match before it): play is deterministic, so a match with the sides swapped
and the same seed replays the same games mirrored; a new seed plays new games.

Prints A's wins, draws and losses, its score with a 95% interval, and how the games ended."""
import sys

import jax

from azjax import arena, load_agent


def main(run_a, step_a, run_b, step_b, games=64, sims_a=0, sims_b=0, sets=(), seed=2026):
  a = load_agent(run_a, int(step_a)).with_search([s[2:] for s in sets if s.startswith("A:")])
  b = (arena.random_player if run_b == "random" else load_agent(run_b, int(step_b)).with_search(
      [s[2:] for s in sets if s.startswith("B:")]).player(f"B@{step_b}", num_simulations=int(sims_b) or None))
  a_player = a.player(f"A@{a.step}", num_simulations=int(sims_a) or None)
  result = arena.match(a.env, a_player, b, jax.random.PRNGKey(int(seed)), int(games), opening_plies=2)
  lo, hi = result.interval()
  print(f"{run_a}@{a.step} against {run_b}@{step_b}: {result.wins} wins, {result.draws} draws, {result.losses} losses; "
        f"score {result.score:.3f} (95% CI {lo:.3f}-{hi:.3f})")
  print({k: round(float(v), 3) for k, v in result.figures.items()})


if __name__ == "__main__":
  args = sys.argv[1:]
  seeds = [x[5:] for x in args if x.startswith("seed=")]
  main(*[x for x in args if x[:2] not in ("A:", "B:") and not x.startswith("seed=")],
       sets=[x for x in args if x[:2] in ("A:", "B:")], **({"seed": seeds[-1]} if seeds else {}))
