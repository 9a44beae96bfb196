"""Seconds per search against simulations: does a simulation cost the same in a deep search as in a short one?
(docs/results/bench/deep_search.md)

  python docs/results/bench/deep_search.py --game chess --simulations 32,128,512,1024,2048 [--batch 1] [--options off]

The game's `cpu` preset (its network, search and tree) with fresh weights (the cost does not depend on them), one
jitted search from the initial position, median of `--repeats` after one compiling call. `--options off` compiles
it without azjax.search.compiler_options (XLA:CPU's defaults). Prints one markdown row per simulation count.
"""

import argparse
import dataclasses
import statistics
import time

import jax

from azjax import presets, search as search_lib
from azjax.games import batched_init, make_env
from azjax.network import make_network


def setup(game: str, batch: int):
  """(config, env, network, states, variables, keys): the game's `cpu` preset, fresh weights, `batch` initial
  positions (backward_probe.py uses it too)."""
  config = presets.preset(game, "cpu")
  env = make_env(game)
  net = make_network(config.network, env.num_actions)
  states = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), batch))
  variables = net.init(jax.random.PRNGKey(1), states.observation[:1])
  return config, env, net, states, variables, jax.random.split(jax.random.PRNGKey(2), batch)


def main():
  p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument("--game", default="chess")
  p.add_argument("--simulations", default="32,128,512,1024")
  p.add_argument("--batch", type=int, default=1)
  p.add_argument("--repeats", type=int, default=3)
  p.add_argument("--options", choices=("on", "off"), default="on")
  args = p.parse_args()
  config, env, net, states, variables, keys = setup(args.game, args.batch)
  options = getattr(search_lib, "compiler_options", lambda: None)() if args.options == "on" else None
  node = jax.tree.map(lambda x: x[0], search_lib.lean(states))
  node_bytes = sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(node))
  print(f"{args.game}, `cpu` preset ({config.network.blocks}x{config.network.channels}, {config.search.algorithm}, "
        f"tree width {search_lib.tree_width(config.search, args.game, env.num_actions) or env.num_actions}), "
        f"batch {args.batch}, compiler options {options}, {node_bytes:,} bytes of state a node, jax {jax.__version__}")
  print("| simulations | compile s | ms a search | us a simulation |")
  print("|---:|---:|---:|---:|")
  for n in (int(s) for s in args.simulations.split(",")):
    search = jax.jit(search_lib.make_search(env, net, dataclasses.replace(config.search), args.game, n),
                     compiler_options=options)
    t = time.perf_counter()
    jax.block_until_ready(search(variables, keys, states).weights)
    compile_s = time.perf_counter() - t
    times = []
    for _ in range(args.repeats):
      t = time.perf_counter()
      jax.block_until_ready(search(variables, keys, states).weights)
      times.append(time.perf_counter() - t)
    dt = statistics.median(times)
    print(f"| {n} | {compile_s:.1f} | {dt * 1e3:.1f} | {dt / n * 1e6:.0f} |", flush=True)


if __name__ == "__main__":
  main()
