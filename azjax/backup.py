"""The backup of a simulation's value up the search tree: mctx's `backward`, replaced while azjax's searches trace.

mctx vmaps `backward` over its batch. It is a while loop up from the new leaf whose carry is the whole tree, and jax
batches a while loop whose condition differs between games by selecting the whole carry at every step. So each
simulation paid the tree's size times its depth: a chess search of 4 games x 1,024 simulations took 2.3x as long,
one of 64 games x 16 simulations (the `cpu` preset's self-play) 1.26x (docs/results/bench/deep_search.md).
`path_backward` walks the same path with small carries and writes the tree once, with the same updates in the same
arithmetic. mctx offers no hook for it, so `installed()` puts it in mctx's module for as long as a search traces.
"""

from __future__ import annotations

import contextlib

import jax
import jax.numpy as jnp
from mctx._src import search as mctx_search
from mctx._src.tree import Tree

ENABLED = True  # False: mctx's own backward (tests compare the two)


@jax.vmap
def path_backward(tree: Tree, leaf_index) -> Tree:
  """mctx's backward for one game of the batch: each step up reads the tree and records what mctx's would write
  (the nodes on a path are distinct, so none reads another's write); the writes happen once, after the walk."""
  nodes = tree.node_values.shape[0]
  leaf_index = jnp.asarray(leaf_index, jnp.int32)

  def up(carry):
    index, leaf_value, child_value, k, parents, actions, values, counts, child_values = carry
    parent = tree.parents[index]
    count = tree.node_visits[parent]
    action = tree.action_from_parent[index]
    leaf_value = tree.children_rewards[parent, action] + tree.children_discounts[parent, action] * leaf_value
    parent_value = (tree.node_values[parent] * count + leaf_value) / (count + 1.0)
    return (parent, leaf_value, parent_value, k + 1, parents.at[k].set(parent), actions.at[k].set(action),
            values.at[k].set(parent_value), counts.at[k].set(count + 1), child_values.at[k].set(child_value))

  leaf_value = tree.node_values[leaf_index]
  unused = jnp.full((nodes,), nodes, jnp.int32)  # node index `nodes` is out of range: the scatters drop it
  carry = (leaf_index, leaf_value, leaf_value, 0, unused, jnp.zeros((nodes,), jnp.int32),
           jnp.zeros((nodes,), tree.node_values.dtype), jnp.zeros((nodes,), tree.node_visits.dtype),
           jnp.zeros((nodes,), tree.node_values.dtype))
  carry = jax.lax.while_loop(lambda c: c[0] != Tree.ROOT_INDEX, up, carry)
  parents, actions, values, counts, child_values = carry[4:]
  visits = tree.children_visits[jnp.minimum(parents, nodes - 1), actions] + 1
  return tree.replace(
      node_values=tree.node_values.at[parents].set(values, mode="drop"),
      node_visits=tree.node_visits.at[parents].set(counts, mode="drop"),
      children_values=tree.children_values.at[parents, actions].set(child_values, mode="drop"),
      children_visits=tree.children_visits.at[parents, actions].set(visits, mode="drop"))


@contextlib.contextmanager
def installed():
  """mctx's search backs up with `path_backward` while this is open (trace time; if ENABLED)."""
  original = mctx_search.backward
  if ENABLED:
    mctx_search.backward = path_backward
  try:
    yield
  finally:
    mctx_search.backward = original
