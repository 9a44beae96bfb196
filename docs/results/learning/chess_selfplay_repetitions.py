"""Who repeats in a chess network's self-play? `python chess_selfplay_repetitions.py RUN STEP [STEP ...] [--games 128]`.

Plays GAMES games of the step's network against itself with chess_selfplay_material.selfplay_plies (the run's search
through `Agent.analyse`, its self-play sampling), up to the run's `selfplay.max_plies`. For each game ended by threefold
repetition it takes the material lead (pawn 1 ... queen 9) of the player who completed the repetition (made the last
move): a side behind in material, which would lose at the cap's adjudication, has a reason to repeat. Prints, per
step, how the games ended and, for the repetitions, that lead by bucket.
"""

import argparse

import jax.numpy as jnp
import numpy as np

import chess_selfplay_material
from azjax import load_agent, rules
from chess_material_probe import BUCKETS


def play(agent, games: int, seed: int = 7):
  """(ending code per game, the last mover's material lead at the end per game)."""
  cap = agent.config.selfplay.max_plies or rules.PGX_CAPS["chess"]
  ending, lead = np.full(games, -1), np.zeros(games)
  for ply, _, _, in_play, state in chess_selfplay_material.selfplay_plies(agent, games, seed, cap):
    ended = in_play & np.asarray(state.terminated | state.truncated)
    code = np.asarray(rules.ending("chess", state, jnp.full(games, ply + 1), cap))
    # pgx's board is in the view of the player to move now; the last mover's lead is its negative.
    lead = np.where(ended, -np.asarray(rules.chess_material_lead(state)), lead)
    ending = np.where(ended, code, ending)
  ending = np.where(ending < 0, rules.ENDINGS.index("cap"), ending)
  return ending, lead


def main():
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("run")
  p.add_argument("steps", type=int, nargs="+")
  p.add_argument("--games", type=int, default=128)
  a = p.parse_args()
  names = [f"{lo:+d} to {hi:+d}".replace("-99 to -6", "-6 or less").replace("+6 to +99", "+6 or more")
           for lo, hi in BUCKETS]
  print(f"{a.run}, {a.games} self-play games per step; the repeating side's material lead in repetitions\n")
  shown = ("win", "draw", "cap", "repetition")
  print("| step | " + " | ".join(shown) + " | repetitions: " + " | ".join(names)
        + " | mean lead |")
  print("|---" * (len(names) + 6) + "|")
  for s in a.steps:
    ending, lead = play(load_agent(a.run, step=s), a.games)
    share = [f"{(ending == rules.ENDINGS.index(e)).mean():.2f}" for e in shown]
    rep = lead[ending == rules.ENDINGS.index("repetition")]
    counts = [str(((rep >= lo) & (rep <= hi)).sum()) for lo, hi in BUCKETS]
    mean = f"{rep.mean():+.2f}" if len(rep) else "-"
    print(f"| {s} | " + " | ".join(share) + " | " + " | ".join(counts) + f" | {mean} |", flush=True)


if __name__ == "__main__":
  main()
