"""`shogi_moves.observe` before and after it reads one board's blockers for both sides (2026-12-03): the products
that find what blocks each square pair in the compiled `env.step`, then the observation and the whole `env.step`,
each jitted alone over 64 positions 40 random plies into their games, half of them seen by their mover and half by
the other player (both branches of `observe`). The two versions run in turns, 15 rounds of a median of 10 calls
each, so that a busy core slows both alike; the figure is the median over the rounds.

  git show 9a6116e:azjax/shogi_moves.py > /tmp/shogi_moves_before.py
  python shogi_observe_blocked.py /tmp/shogi_moves_before.py                      # shogi_observe_blocked.txt
"""
import importlib.util
import re
import sys

import jax
import jax.numpy as jnp
import numpy as np

from azjax import shogi_moves
from conv_paths import median_time  # this folder's timer: compiled once, median of n calls
from shogi_parts import GAMES, random_positions  # the same 64 positions 40 random plies in


def load(path):
  spec = importlib.util.spec_from_file_location("shogi_moves_before", path)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def main(before_path):
  before = load(before_path)
  state, actions = random_positions()
  x, flip = state._x, jnp.arange(GAMES) % 2 == 0
  versions = {"before": before, "after": shogi_moves}
  observe = {name: jax.jit(jax.vmap(m.observe)) for name, m in versions.items()}
  env_step = {name: jax.jit(jax.vmap(m.Shogi().step)) for name, m in versions.items()}
  np.testing.assert_array_equal(observe["after"](x, flip), observe["before"](x, flip))
  for a, b in zip(jax.tree.leaves(env_step["after"](state, actions)), jax.tree.leaves(env_step["before"](state, actions))):
    np.testing.assert_array_equal(a, b)
  print(f"{GAMES} positions, {jax.devices()[0].platform}; median over 15 rounds of a median of 10 calls, ms:"
        " before / after")
  for v in versions:  # the products that find what blocks each of the 6,561 square pairs, in the compiled step
    hlo = env_step[v].lower(state, actions).compile().as_text()
    products = re.findall(r"f32\[(6561,[0-9]+)\][^ ]* dot[(]", hlo)
    print(f"  {v}: env.step's [6561, 81] x [81, n] products: {products}")
  for name, fns, args in (("observation", observe, (x, flip)), ("env.step", env_step, (state, actions))):
    rounds = {v: [] for v in versions}
    for _ in range(15):
      for v in versions:
        rounds[v].append(1e3 * median_time(fns[v], *args, n=10))
    tb, ta = (float(np.median(rounds[v])) for v in versions)
    print(f"  {name:12s} {tb:7.2f} / {ta:6.2f}  ({tb / ta:.2f}x; rounds' spread before {min(rounds['before']):.2f}-"
          f"{max(rounds['before']):.2f}, after {min(rounds['after']):.2f}-{max(rounds['after']):.2f})")


if __name__ == "__main__":
  main(sys.argv[1])
