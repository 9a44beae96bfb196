"""Does a chess network's value know material? `python chess_material_probe.py RUN STEP [STEP ...] [--games 512]`.

Plays GAMES uniformly random games from the start (the same games for every step), takes the positions still in play at
plies 20, 40, 60 and 80, and evaluates each with the step's network (a 2-simulation search: the root's value is
almost the network's). Prints, per step, the correlation between the value and the material balance of the player to
move (pawn 1, knight and bishop 3, rook 5, queen 9), and the mean value by balance. A network that knows material
values its side ahead by 6 or more points near +1 and behind near -1.
"""

import argparse

import jax
import numpy as np
import pgx

from azjax import arena, load_agent, rules

BUCKETS = ((-99, -6), (-5, -2), (-1, 1), (2, 5), (6, 99))


def random_positions(games: int, seed: int = 1, plies=(20, 40, 60, 80)):
  env = pgx.make("chess")
  key, start = jax.random.split(jax.random.PRNGKey(seed))
  state = jax.jit(jax.vmap(env.init))(jax.random.split(start, games))
  step, out = jax.jit(jax.vmap(env.step)), []
  for ply in range(1, max(plies) + 1):
    key, move = jax.random.split(key)
    state = step(state, arena.random_player.act(state, move))
    if ply in plies:
      out.append(state)
  return out


def probe(agent, positions) -> tuple[np.ndarray, np.ndarray]:
  balance, value = [], []
  for i, state in enumerate(positions):
    live = ~np.asarray(state.terminated)
    balance.append(np.asarray(rules.chess_material_lead(state))[live])  # the player to move's view
    value.append(np.asarray(agent.analyse(state, jax.random.PRNGKey(i), num_simulations=2)["value"])[live])
  return np.concatenate(balance), np.concatenate(value)


def main():
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("run")
  p.add_argument("steps", nargs="+", type=int)
  p.add_argument("--games", type=int, default=512)
  a = p.parse_args()
  positions = random_positions(a.games)
  print("| step | positions | correlation | " + " | ".join(f"mean value, balance {lo:+d} to {hi:+d}" for lo, hi in BUCKETS)
        .replace("-99 to -6", "-6 or less").replace("+6 to +99", "+6 or more") + " |")
  print("|---" * (3 + len(BUCKETS)) + "|")
  for step in a.steps:
    balance, value = probe(load_agent(a.run, step=step), positions)
    means = [value[(balance >= lo) & (balance <= hi)].mean() for lo, hi in BUCKETS]
    print(f"| {step} | {len(value)} | {np.corrcoef(balance, value)[0, 1]:.3f} | "
          + " | ".join(f"{m:+.3f}" for m in means) + " |", flush=True)


if __name__ == "__main__":
  main()
