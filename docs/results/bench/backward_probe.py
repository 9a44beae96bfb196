"""A diagnostic, not the library: how much of a batched search is mctx's `backward`? (docs/results/bench/deep_search.md)

  python docs/results/bench/backward_probe.py --game chess --batch 4 --simulations 32,512,1024 [--patch]

mctx vmaps `backward` (a while loop up from the new leaf, whose carry is the whole tree) over its batch, and jax
batches a while loop whose condition differs between games by selecting the whole carry at every step. `--patch`
swaps in, for this process only, a backward that walks the path with small carries and writes the tree once, with
four scatters at the end. It updates the same values, node_values, node_visits, children_values and
children_visits, and the script checks that the search's outputs are the same. Prints ms a search, as deep_search.py.
"""

import argparse
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from mctx._src import search as mctx_search
from mctx._src.tree import Tree

from azjax import presets, search as search_lib
from azjax.games import batched_init, make_env
from azjax.network import make_network


@jax.vmap
def path_backward(tree: Tree, leaf_index) -> Tree:
  """mctx's backward, with the walk up the tree carrying only the path: each step reads the tree and records what
  the sequential version would write; the writes happen once, after the walk (every node on a path is distinct)."""
  nodes = tree.node_values.shape[0]
  leaf_index = jnp.asarray(leaf_index, jnp.int32)

  def cond(carry):
    return carry[0] != Tree.ROOT_INDEX

  def body(carry):
    index, leaf_value, child_value, k, parents, actions, values, counts, child_values = carry
    parent = tree.parents[index]
    count = tree.node_visits[parent]
    action = tree.action_from_parent[index]
    leaf_value = tree.children_rewards[parent, action] + tree.children_discounts[parent, action] * leaf_value
    parent_value = (tree.node_values[parent] * count + leaf_value) / (count + 1.0)
    return (parent, leaf_value, parent_value, k + 1, parents.at[k].set(parent), actions.at[k].set(action),
            values.at[k].set(parent_value), counts.at[k].set(count + 1), child_values.at[k].set(child_value))

  empty = jnp.full((nodes,), nodes, jnp.int32)  # index `nodes`: out of range, dropped by the scatters below
  leaf_value = tree.node_values[leaf_index]
  carry = (leaf_index, leaf_value, leaf_value, 0, empty, jnp.zeros((nodes,), jnp.int32),
           jnp.zeros((nodes,), tree.node_values.dtype), jnp.zeros((nodes,), tree.node_visits.dtype),
           jnp.zeros((nodes,), tree.node_values.dtype))
  _, _, _, _, parents, actions, values, counts, child_values = jax.lax.while_loop(cond, body, carry)
  visits = tree.children_visits[jnp.minimum(parents, nodes - 1), actions] + 1
  return tree.replace(
      node_values=tree.node_values.at[parents].set(values, mode="drop"),
      node_visits=tree.node_visits.at[parents].set(counts, mode="drop"),
      children_values=tree.children_values.at[parents, actions].set(child_values, mode="drop"),
      children_visits=tree.children_visits.at[parents, actions].set(visits, mode="drop"))


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
  config = presets.preset(args.game, "cpu")
  env = make_env(args.game)
  net = make_network(config.network, env.num_actions)
  states = batched_init(env)(jax.random.split(jax.random.PRNGKey(0), args.batch))
  variables = net.init(jax.random.PRNGKey(1), states.observation[:1])
  keys = jax.random.split(jax.random.PRNGKey(2), args.batch)
  original = mctx_search.backward
  print(f"{args.game}, `cpu` preset, batch {args.batch}, compiler options {search_lib.compiler_options()}")
  print("| simulations | mctx's backward, ms | path backward, ms | same outputs |")
  print("|---:|---:|---:|---|")
  for n in (int(s) for s in args.simulations.split(",")):
    row = []
    for backward in (original, path_backward):
      mctx_search.backward = backward  # looked up when the search is traced
      search = jax.jit(search_lib.make_search(env, net, config.search, args.game, n),
                       compiler_options=search_lib.compiler_options())
      row.append(timed(search, (variables, keys, states), args.repeats))
    mctx_search.backward = original
    (t0, a), (t1, b) = row
    same = all(np.allclose(np.asarray(x), np.asarray(y), rtol=1e-5, atol=1e-6)
               for x, y in zip(jax.tree.leaves((a.weights, a.value, a.tree.children_visits, a.tree.node_values)),
                               jax.tree.leaves((b.weights, b.value, b.tree.children_visits, b.tree.node_values))))
    print(f"| {n} | {t0 * 1e3:.1f} | {t1 * 1e3:.1f} | {same} |", flush=True)
  sys.exit(0)


if __name__ == "__main__":
  main()
