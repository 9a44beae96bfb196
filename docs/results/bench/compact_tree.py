"""The compact search tree against the full one (docs/results/bench/compact_tree.md).

  python docs/results/bench/compact_tree.py memory [--selfplay]   # XLA's buffer assignment, 800 simulations
  python docs/results/bench/compact_tree.py time                  # a search of 64 chess games, 16 simulations

`memory` compiles a search over 2 and 4 games (arguments + outputs + temporaries, bench.program_bytes), fits
fixed + per game x games, and gives the largest batch in 80 GB; `--selfplay` does the same for the whole
self-play half of a train_step (bench.selfplay_memory's program, the issue's figures).
"""

import argparse
import dataclasses
import functools
import json
import statistics
import time

import jax

from azjax import bench, presets, train_step as train_lib
from azjax.config import NetworkConfig, apply_overrides
from azjax.games import make_env
from azjax.network import make_network
from azjax.search import make_search

NETWORKS = {"2x32": NetworkConfig(blocks=2, channels=32, value_hidden=64), "19x256": presets.PAPER_NETWORK}
BUDGET = 80e9


def search_program(game: str, network: NetworkConfig, tree: str, simulations: int, games: int,
                   algorithm: str = "puct"):
  """(jitted search of the paper's settings over `games` games, its network, env)."""
  config = dataclasses.replace(presets.preset(game, "paper").search, algorithm=algorithm,
                               num_simulations=simulations, compact_tree=tree)
  env = make_env(game)
  net = make_network(network, env.num_actions)
  return jax.jit(make_search(env, net, config, game), static_argnames="noise"), net, env


def abstract_arguments(net, env, games: int):
  states = jax.eval_shape(lambda: jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), games)))
  variables = jax.eval_shape(net.init, jax.random.PRNGKey(0), states.observation)
  keys = jax.eval_shape(lambda: jax.random.split(jax.random.PRNGKey(0), games))
  return variables, keys, states


def search_bytes(game, network, tree, simulations, games) -> int:
  search, net, env = search_program(game, network, tree, simulations, games)
  return bench.program_bytes(search.lower(*abstract_arguments(net, env, games)).compile())


def selfplay_bytes(game, network, tree, simulations, games) -> int:
  """The self-play half of the paper preset's train_step (one ply, a replay of 4 positions per game)."""
  c = apply_overrides(presets.preset(game, "paper"), [
      f"search.num_simulations={simulations}", f"search.compact_tree={tree}", f"selfplay.batch_size={games}",
      "selfplay.chunk_plies=1", f"replay.window={4 * games}", f"train.batch_size={games}",
      "train.updates_per_step=1"])
  c = c.replace(network=network)
  program, mesh = train_lib.build(c), train_lib.make_mesh(jax.devices()[:1])
  step = train_lib.make_train_step(program, mesh, phase="selfplay")
  return bench.program_bytes(step.lower(train_lib.abstract_state(program)).compile())


def memory(selfplay: bool, games=("chess", "shogi"), simulations=800, batches=(2, 4)):
  measure = selfplay_bytes if selfplay else search_bytes
  rows = []
  for game in games:
    for name, network in NETWORKS.items():
      for tree in ("off", "auto"):
        (b1, b2) = batches
        t1, t2 = (measure(game, network, tree, simulations, b) for b in batches)
        per_game = (t2 - t1) / (b2 - b1)
        fixed = t1 - per_game * b1
        rows.append(dict(game=game, network=name, tree="full" if tree == "off" else "compact",
                         program="selfplay" if selfplay else "search", simulations=simulations,
                         fixed_mb=fixed / 1e6, per_game_mb=per_game / 1e6,
                         largest_batch_80gb=int((BUDGET - fixed) // per_game)))
        print(json.dumps(rows[-1]), flush=True)
  return rows


def timing(game="chess", games=64, simulations=16, repeats=5):
  rows = []
  for algorithm, noise in (("puct", True), ("puct", False), ("gumbel", True)):
    for tree in ("off", "auto"):
      search, net, env = search_program(game, NETWORKS["2x32"], tree, simulations, games, algorithm)
      states = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), games))
      variables = net.init(jax.random.PRNGKey(1), states.observation)
      keys = jax.random.split(jax.random.PRNGKey(2), games)
      run = functools.partial(search, noise=noise)
      jax.block_until_ready(run(variables, keys, states))  # compile
      times = []
      for r in range(repeats):
        keys = jax.random.split(jax.random.PRNGKey(3 + r), games)
        start = time.perf_counter()
        jax.block_until_ready(run(variables, keys, states))
        times.append(time.perf_counter() - start)
      rows.append(dict(game=game, algorithm=algorithm, noise=noise, tree="full" if tree == "off" else "compact", games=games,
                       simulations=simulations, network="2x32", median_s=statistics.median(times),
                       times_s=[round(t, 4) for t in times]))
      print(json.dumps(rows[-1]), flush=True)
  return rows


if __name__ == "__main__":
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("what", choices=("memory", "time"))
  parser.add_argument("--selfplay", action="store_true", help="memory: the whole self-play half, not the search")
  parser.add_argument("--networks", default=",".join(NETWORKS), help="memory: which of 2x32, 19x256")
  args = parser.parse_args()
  NETWORKS = {k: NETWORKS[k] for k in args.networks.split(",")}
  memory(args.selfplay) if args.what == "memory" else timing()
