"""Issue 17 section 1: why is the whole train_step slower than its two halves? An ablation.

  python docs/results/bench/step/ablate.py GAME [section.field=value ...]

Times (median of 3 after a warm-up) the compiled train_step and variants of it, each its own program:
  all        the train_step
  selfplay   its self-play half alone (phase="selfplay")
  train      its training half alone (phase="train"), on a replay that holds finished games
  all/0      the whole step with train.updates_per_step=0: self-play plus everything but the updates
  all/scan   the whole step with the updates as a loop (train.update_loop=scan)
"""

import json
import sys
import time

import jax

from azjax import bench, train_step as train_lib
from azjax.config import apply_overrides
from azjax.presets import preset

SMALL = ["network.blocks=2", "network.channels=32", "network.value_hidden=64", "search.num_simulations=16",
         "selfplay.batch_size=64", "selfplay.chunk_plies=8", "train.batch_size=256", "train.updates_per_step=1",
         "replay.window=8192"]


def main(game, overrides):
  base = apply_overrides(preset(game, "small"), SMALL + overrides)
  variants = {
      "all": (base, "all"), "selfplay": (base, "selfplay"), "train": (base, "train"),
      "all/0": (apply_overrides(base, ["train.updates_per_step=0"]), "all"),
      "all/scan": (apply_overrides(base, ["train.update_loop=scan"]), "all"),
  }
  out = {"game": game, "overrides": SMALL + overrides, "device": jax.devices()[0].device_kind}
  for name, (config, phase) in variants.items():
    program, mesh = train_lib.build(config), train_lib.make_mesh()
    started = time.perf_counter()
    out[name] = bench._steps_state(program, mesh, phase, 3)
    print(f"{game} {name:<10} {out[name]:.3f} s  ({time.perf_counter() - started:.0f} s with compile)", flush=True)
  out["all_over_halves"] = out["all"] / (out["selfplay"] + out["train"])
  print(json.dumps(out))


if __name__ == "__main__":
  main(sys.argv[1], sys.argv[2:])
