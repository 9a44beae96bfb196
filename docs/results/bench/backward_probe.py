"""How much of a batched search was mctx's `backward`? (docs/results/bench/deep_search.md)

  python docs/results/bench/backward_probe.py --game chess --batch 4 --simulations 32,512,1024

mctx vmaps `backward` (a while loop up from the new leaf, whose carry is the whole tree) over its batch, and jax
batches a while loop whose condition differs between games by selecting the whole carry at every step. azjax's
searches back up with `azjax.backup.path_backward` instead (it walks the path with small carries and writes the
tree once); this times each search both ways (`backup.ENABLED`) and checks that the outputs are the same.
"""

import argparse
import statistics
import time

import jax
import numpy as np

from azjax import backup, search as search_lib
from deep_search import setup  # this folder's


def timed(search, args, repeats):
  out = search(*args)
  jax.block_until_ready(out.weights)
  times = []
  for _ in range(repeats):
    t = time.perf_counter()
    jax.block_until_ready(search(*args).weights)
    times.append(time.perf_counter() - t)
  return statistics.median(times), out


def main():
  p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument("--game", default="chess")
  p.add_argument("--simulations", default="32,512,1024")
  p.add_argument("--batch", type=int, default=4)
  p.add_argument("--repeats", type=int, default=3)
  args = p.parse_args()
  config, env, net, states, variables, keys = setup(args.game, args.batch)
  print(f"{args.game}, `cpu` preset, batch {args.batch}, compiler options {search_lib.compiler_options()}")
  print("| simulations | mctx's backward, ms | path backward, ms | same outputs |")
  print("|---:|---:|---:|---|")
  for n in (int(s) for s in args.simulations.split(",")):
    row = []
    for enabled in (False, True):
      backup.ENABLED = enabled  # read when the search is traced
      search = jax.jit(search_lib.make_search(env, net, config.search, args.game, n),
                       compiler_options=search_lib.compiler_options())
      row.append(timed(search, (variables, keys, states), args.repeats))
    (t0, a), (t1, b) = row
    same = all(np.allclose(np.asarray(x), np.asarray(y), rtol=1e-5, atol=1e-6)
               for x, y in zip(jax.tree.leaves((a.weights, a.value, a.tree.children_visits, a.tree.node_values)),
                               jax.tree.leaves((b.weights, b.value, b.tree.children_visits, b.tree.node_values))))
    print(f"| {n} | {t0 * 1e3:.1f} | {t1 * 1e3:.1f} | {same} |", flush=True)



if __name__ == "__main__":
  main()
