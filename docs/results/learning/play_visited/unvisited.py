"""How often self-play's move is one its search never visited, and what that move is worth (section 67).

  python docs/results/learning/play_visited/unvisited.py RUN STEP [PLIES] [--play-unvisited]

Plays 64 games of PLIES plies (default 80) from the start with the checkpoint's self-play settings: the full
search on every fourth ply, the fast one without root noise on the others (playout-cap randomisation's pattern,
fixed here), each move drawn by `selfplay.root_moves`. `--play-unvisited` draws as this library did before
section 67 (`search.play_unvisited=true`). Per kind of ply (full or fast, before or after the temperature
cutoff): the fraction of moves drawn that no simulation visited, and the fraction where the improved policy's
greedy move is unvisited. For the unvisited moves played: the network's value of the position after them (for
the mover) against the best visited move's searched Q.
"""
import dataclasses
import functools
import sys

import jax
import jax.numpy as jnp
import numpy as np

from azjax import agent as agent_lib, selfplay
from azjax.games import batched_init, batched_step, make_env
from azjax.network import make_network
from azjax.search import make_search, root_summary

args = [a for a in sys.argv[1:] if not a.startswith("--")]
run, step, plies = args[0], int(args[1]), int(args[2]) if len(args) > 2 else 80
agent = agent_lib.load_agent(run, step)
config = agent.config
search_config = dataclasses.replace(config.search, play_unvisited="--play-unvisited" in sys.argv)
game, sp, games = config.game, config.selfplay, 64
env = make_env(game)
net = make_network(config.network, env.num_actions)
full = make_search(env, net, search_config, game)
fast = make_search(env, net, search_config, game, sp.fast_simulations)
variables = (agent.params, agent.bn_state)


@functools.partial(jax.jit, static_argnums=3)
def play(state, key, ply, is_full):
  k1, k2 = jax.random.split(key)
  keys = jax.random.split(k1, games)
  out = full(variables, keys, state) if is_full else fast(variables, keys, state, noise=False)
  visits, q = root_summary(out)
  move = selfplay.root_moves(jax.random.split(k2, games), out.replace(tree=None), jnp.full((games,), ply), sp)
  rows = jnp.arange(games)
  after = batched_step(env)(state, move)
  (_, child_value), _ = net.apply(variables[0], variables[1], after.observation, False)
  reward = after.rewards[rows, state.current_player]
  played_value = jnp.where(after.terminated | after.truncated, reward, -child_value)
  best_visited = jnp.where(visits > 0, q, -jnp.inf).max(-1)
  live = ~(state.terminated | state.truncated)
  return (after, visits[rows, move] == 0, visits[rows, jnp.argmax(out.weights, -1)] == 0, live, played_value,
          best_visited)


print(f"{run} step {step}, {games} games x {plies} plies, play_unvisited={search_config.play_unvisited}, "
      f"temperature cutoff at ply {sp.temperature_plies}, then T={sp.endgame_temperature}")
state = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), games))
counts, worth = {}, []
for i in range(plies):
  is_full = i % 4 == 0
  state, unvisited, greedy_unvisited, live, played, best = (
      np.asarray(x) if j else x for j, x in enumerate(play(state, jax.random.PRNGKey(100 + i), i, is_full)))
  kind = ("full" if is_full else "fast", "early" if i < sp.temperature_plies else "late")
  c = counts.setdefault(kind, np.zeros(3, int))
  c += [(unvisited & live).sum(), (greedy_unvisited & live).sum(), live.sum()]
  m = unvisited & live
  worth += list(zip(played[m], best[m]))
for kind, (u, g, n) in sorted(counts.items()):
  print(f"{kind[0]} search, {kind[1]} plies: move drawn unvisited {u}/{n} = {u / n:.3f}; "
        f"improved policy's greedy move unvisited {g}/{n} = {g / n:.3f}")
if worth:
  w = np.array(worth)
  print(f"unvisited moves played: {len(w)}; network's value after them {w[:, 0].mean():+.3f} against the best "
        f"visited Q {w[:, 1].mean():+.3f}; below it in {(w[:, 0] < w[:, 1]).mean():.2f}")
