"""How many distinct openings a network's self-play plays, its fast plies with and without root noise
(`selfplay.fast_noise`).
`python fast_noise_openings.py RUN STEP [--games 64] [--plies 8] [--coins 4] [--set search.gumbel_act=policy]`.

From fresh games, GAMES games play PLIES plies as the run's self-play plays them (its search, its playout caps'
fast search, its move rule: under `search.gumbel_act=halving` the search's winner), once with the fast search
noise-free (the presets') and once with its noise, under the same coins (which plies get the full search; COINS
sequences, drawn as a run's steps 1..COINS draw them). Prints, ply by ply, the coins and the number of distinct move
sequences so far, for each setting: what the noise-free fast plies cost in the diversity of the games that train.
"""

import argparse
import functools

import jax
import jax.numpy as jnp
import numpy as np

from azjax import load_agent, selfplay, train_step
from azjax.games import batched_step


def opening_player(agent, games: int):
  """`play(coins, fast_noise, seed=0) -> [distinct move sequences after each ply]` for `games` fresh games."""
  program = train_step.build(agent.config)
  config = agent.config.selfplay
  variables = (agent.params, agent.bn_state)
  slots = jnp.arange(games, dtype=jnp.int32)
  step = batched_step(program.env)

  @functools.partial(jax.jit, static_argnames="fast_noise")
  def ply(state, ply, key, full, fast_noise):
    keys = jax.vmap(lambda k: jax.random.split(k, 2))(selfplay.per_game_keys(key, slots))
    out = selfplay.capped_search(program.search, program.fast_search, variables, keys[:, 0], state, full, fast_noise)
    action = selfplay.root_moves(keys[:, 1], out, ply, config)
    return step(state, action), action

  def play(coins, fast_noise: bool, seed: int = 0) -> list[int]:
    state = selfplay.init_actors(program.env, jax.random.PRNGKey(seed), slots, config).env
    moves, distinct = [], []
    for i, full in enumerate(coins):
      state, action = ply(state, jnp.full((games,), i, jnp.int32), jax.random.PRNGKey(1000 + i), jnp.bool_(full),
                          fast_noise=fast_noise)
      moves.append(np.asarray(action))
      distinct.append(len({tuple(seq) for seq in np.stack(moves, 1).tolist()}))
    return distinct

  return play


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("run")
  parser.add_argument("step", type=int)
  parser.add_argument("--games", type=int, default=64)
  parser.add_argument("--plies", type=int, default=8)
  parser.add_argument("--coins", type=int, default=4)
  parser.add_argument("--set", action="append", default=[], help="search.field=value for the run's search")
  a = parser.parse_args()
  agent = load_agent(a.run, a.step).with_search(a.set)
  sp = agent.config.selfplay
  print(f"{a.run} step {a.step}: {a.games} games, search.gumbel_act={agent.config.search.gumbel_act}, "
        f"full search on a fraction {sp.full_search_fraction} of plies, else {sp.fast_simulations} simulations")
  print("| coins (F full, f fast) | fast plies noise-free: distinct openings by ply | with noise |")
  print("|---|---|---|")
  play, totals = opening_player(agent, a.games), {False: np.zeros(a.plies), True: np.zeros(a.plies)}
  for s in range(1, a.coins + 1):
    coins = np.asarray(selfplay.playout_coins(sp, jnp.int32(s)))
    while len(coins) < a.plies:  # chunks shorter than the plies asked: the next step's coins follow
      coins = np.concatenate([coins, np.asarray(selfplay.playout_coins(sp, jnp.int32(s + 1000)))])
    row = {noise: play(coins[:a.plies], noise) for noise in (False, True)}
    for noise in row:
      totals[noise] += row[noise]
    print(f"| {''.join('F' if c else 'f' for c in coins[:a.plies])} | {' '.join(map(str, row[False]))} | "
          f"{' '.join(map(str, row[True]))} |")
  print(f"| mean | {' '.join(f'{x:.1f}' for x in totals[False] / a.coins)} | "
        f"{' '.join(f'{x:.1f}' for x in totals[True] / a.coins)} |")


if __name__ == "__main__":
  main()
