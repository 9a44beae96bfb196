"""What material is worth in a chess network's own games. `python chess_selfplay_material.py RUN STEP [--games 64]`.

Plays GAMES games of the step's network against itself, searched as its run searches (its simulations, no
playout cap) and sampled as its self-play samples (selfplay.select_action: temperature 1 for the first
temperature_plies, then the run's endgame temperature; it samples the whole policy `Agent.analyse` reports, which
is self-play's draw only under search.play_unvisited=true and gumbel_act=policy, chess's cpu preset), by the rules (no length cap short of MAX_PLIES, no
adjudication). For every position in play it records the material lead of the player to move
(rules.chess_material_lead), the network's root value, and the game's final result for that player.
Prints the correlations between the three and, by material lead, the mean result and the mean value: what a value
head trained on such games can learn material to be worth, and what this one learnt.
"""

import argparse

import jax
import jax.numpy as jnp
import numpy as np
import pgx

from azjax import load_agent, rules, selfplay
from chess_material_probe import BUCKETS

MAX_PLIES = 512  # pgx's own cap


def selfplay_plies(agent, games: int, seed: int = 7, max_plies: int = MAX_PLIES):
  """Yields (ply, state, search output, in_play, next state) for each ply of GAMES games of the agent against itself,
  searched by `Agent.analyse` and sampled as its run's self-play samples, until every game ends or `max_plies`."""
  env, sp = pgx.make("chess"), agent.config.selfplay
  key, start = jax.random.split(jax.random.PRNGKey(seed))
  state = jax.jit(jax.vmap(env.init))(jax.random.split(start, games))
  step = jax.jit(jax.vmap(env.step))
  choose = jax.jit(jax.vmap(selfplay.select_action, in_axes=(0, 0, None, None, None)), static_argnums=(3, 4))
  for ply in range(max_plies):
    in_play = ~np.asarray(state.terminated | state.truncated)
    if not in_play.any():
      return
    key, search_key, move_key = jax.random.split(key, 3)
    out = agent.analyse(state, search_key)
    action = choose(jax.random.split(move_key, games), jnp.asarray(out["policy"]), ply, sp.temperature_plies,
                    sp.endgame_temperature)
    after = step(state, jnp.where(jnp.asarray(in_play), action, 0))
    yield ply, state, out, in_play, after
    state = after


def play(agent, games: int, seed: int = 7):
  lead, mover, live, value, result = [], [], [], [], np.zeros((games, 2))
  for _, state, out, in_play, after in selfplay_plies(agent, games, seed):
    lead.append(np.asarray(rules.chess_material_lead(state)))
    mover.append(np.asarray(state.current_player))
    live.append(in_play)
    value.append(out["value"])
    ended = np.asarray(after.terminated) & ~np.asarray(state.terminated)
    result[ended] = np.asarray(after.rewards)[ended]
  lead, mover, live, value = map(np.array, (lead, mover, live, value))
  z = result[np.arange(games)[None], mover]  # [plies, games] each position's result for its mover
  return lead[live], value[live], z[live], (np.abs(result).sum(1) > 0).mean()


def main():
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("run")
  p.add_argument("step", type=int)
  p.add_argument("--games", type=int, default=64)
  a = p.parse_args()
  lead, value, z, decisive = play(load_agent(a.run, step=a.step), a.games)
  c = lambda x, y: np.corrcoef(x, y)[0, 1]
  print(f"{a.run} step {a.step}: {a.games} games, {decisive:.2f} decisive, {len(z)} positions; correlations: "
        f"lead-result {c(lead, z):.3f}, value-result {c(value, z):.3f}, value-lead {c(value, lead):.3f}")
  print("| material lead | positions | mean result | mean value |\n|---|---|---|---|")
  for lo, hi in BUCKETS:
    s = (lead >= lo) & (lead <= hi)
    name = f"{lo:+d} to {hi:+d}".replace("-99 to -6", "-6 or less").replace("+6 to +99", "+6 or more")
    print(f"| {name} | {s.sum()} | {z[s].mean():+.3f} | {value[s].mean():+.3f} |")


if __name__ == "__main__":
  main()
